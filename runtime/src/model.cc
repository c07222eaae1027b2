// Model loading: structural verification (FlatBuffers Verifier) followed by
// the semantic checks the kernels rely on. After Load() succeeds, execution
// trusts every dimension, offset and quantization parameter it reads.
#include <cmath>
#include <cstring>

#include "crc32.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "checker.h"
#include "layers/layer_kind.h"
#include "model_access.h"

namespace edgeattn {
namespace {

// A format-3 file ends in a little-endian CRC-32 of every byte before it.
constexpr size_t kChecksumBytes = 4;

uint32_t read_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// "0x" and 8 hex digits (ErrorMessage prints decimal only).
struct Hex32 {
  char text[11];
  explicit Hex32(uint32_t v) {
    text[0] = '0';
    text[1] = 'x';
    for (int i = 0; i < 8; ++i) text[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15u];
    text[10] = '\0';
  }
};

// Depth and table limits well above any real model bound the verifier's work.
bool verify_flatbuffer(const uint8_t* bytes, size_t size) {
  flatbuffers::Verifier verifier(bytes, size, 32, 100000);
  return fb::VerifyModelBuffer(verifier);
}

// Formats 1 and 2 had no file checksum but recorded the CRC-32 of Model.data
// in field 5, data_crc32 (deprecated since format 3: no accessor, and the
// verifier no longer checks it, so its bounds are checked here).
constexpr flatbuffers::voffset_t kDataCrc32Field = 4 + 2 * 5;

// Model.format_version read with every offset bounds-checked (before any
// verification); false when it cannot be read.
bool peek_version(const uint8_t* bytes, size_t size, uint32_t* version) {
  const uint32_t root = read_le32(bytes);
  if (root > size - 4) return false;
  const int64_t vtable = int64_t{root} - static_cast<int32_t>(read_le32(bytes + root));
  if (vtable < 0 || static_cast<uint64_t>(vtable) > size - 6) return false;
  const uint8_t* vt = bytes + vtable;
  const uint32_t vt_bytes = vt[0] | vt[1] << 8u;
  const uint32_t field = vt_bytes >= 6 ? (vt[4] | vt[5] << 8u) : 0u;
  if (field != 0 && uint64_t{root} + field > size - 4) return false;
  *version = field != 0 ? read_le32(bytes + root + field) : 0;
  return true;
}

// True for an intact file of an earlier format: it claims version 1 or 2, is
// a complete FlatBuffer (the verifier is safe on any bytes) and its
// data_crc32 matches its weights. A corrupted format-3 file has no
// data_crc32, so a flip of its version bits cannot pass for an old file.
bool intact_earlier_format(const uint8_t* bytes, size_t size, uint32_t* version) {
  if (!peek_version(bytes, size, version) || *version < 1 || *version > 2) return false;
  if (!verify_flatbuffer(bytes, size)) return false;
  const fb::Model* m = fb::GetModel(bytes);
  if (m->format_version() != *version || m->data() == nullptr) return false;
  const uint8_t* field = reinterpret_cast<const flatbuffers::Table*>(m)->GetAddressOf(kDataCrc32Field);
  if (field == nullptr || field < bytes || field > bytes + size - 4) return false;
  return read_le32(field) == crc32(m->data()->data(), m->data()->size());
}

}  // namespace

Status Model::Fail(Status status) {
  model_ = nullptr;
  num_steps_ = 0;
  decoder_start_ = 0;
  return status;
}

int Model::num_layers() const {
  return model_ != nullptr ? static_cast<int>(model_->layers()->size()) : 0;
}

const fb::Layer* Model::layer(int index) const {
  if (index < 0 || index >= num_layers()) return nullptr;
  return model_->layers()->Get(static_cast<uint32_t>(index));
}

int Model::FindLayer(const char* name) const {
  if (name == nullptr) return -1;
  for (int i = 0; i < num_layers(); ++i) {
    if (std::strcmp(layer(i)->name()->c_str(), name) == 0) return i;
  }
  return -1;
}

LayerShape Model::ShapeOf(int index) const { return layer_shape(*layer(index)); }

LayerPlan Model::PlanLayer(int index, int q_len, int kv_len) const {
  return plan_layer(ShapeOf(index), q_len, kv_len);
}

Status Model::VerifyLayer(int index) {
  const fb::Layer* l = model_->layers()->Get(static_cast<uint32_t>(index));
  if (l->name() == nullptr || l->name()->size() == 0) {
    error_.Clear();
    error_ << "layer " << index << " has no name";
    return Status::kInvalidModel;
  }
  Checker c{error_, l->name()->c_str(), data_, data_size_};
  if (l->dtype() != fb::DType::F32 && l->dtype() != fb::DType::S8) {
    c.Msg() << "dtype " << dtype_name(l->dtype()) << " is not F32 or S8";
    return Status::kInvalidModel;
  }
  const bool s8 = l->dtype() == fb::DType::S8;
  if (!s8 && !kWithF32) {
    c.Msg() << "is a float layer; this runtime was built without float layers (EA_INT8_ONLY=ON)";
    return Status::kUnsupported;
  }
  // A union type without its table verifies (the table is optional in
  // FlatBuffers) but leaves nothing to read.
  if (l->options() == nullptr) {
    c.Msg() << "has no layer options";
    return Status::kInvalidModel;
  }
  if (l->max_q_len() == 0 || l->max_q_len() > kMaxLength || l->max_kv_len() == 0 ||
      l->max_kv_len() > kMaxLength) {
    c.Msg() << "max lengths " << l->max_q_len() << " / " << l->max_kv_len() << " outside 1.."
            << kMaxLength;
    return Status::kInvalidModel;
  }
  const LayerKindModule* kind = find_layer_kind(l->options_type());
  if (kind == nullptr) {
    if (layer_kind_left_out(l->options_type())) {
      c.Msg() << "layer kind " << layer_kind_option_name(l->options_type())
              << " is left out of this build (EA_LAYER_KINDS)";
      return Status::kUnsupported;
    }
    c.Msg() << "unknown layer kind " << static_cast<int>(l->options_type());
    return Status::kInvalidModel;
  }
  // A pooling kind's query is its own learned row: Run reads no query and
  // writes one output row, so a longer max_q_len would promise rows that
  // never come (the converter writes 1).
  if (kind->learned_query && l->max_q_len() != 1) {
    c.Msg() << "max_q_len " << l->max_q_len() << ", but a " << kind->name
            << " layer's query length is 1 (it writes one row)";
    return Status::kInvalidModel;
  }
  if (!kind->verify(c, *l, s8)) return c.unsupported ? Status::kUnsupported : Status::kInvalidModel;

  const LayerPlan plan = plan_layer(layer_shape(*l), static_cast<int>(l->max_q_len()),
                                    static_cast<int>(l->max_kv_len()));
  if (plan.cache_bytes + plan.scratch_bytes > kMaxArenaBytes) {
    c.Msg() << "needs " << plan.cache_bytes + plan.scratch_bytes
            << " arena bytes, more than a 32-bit target can address";
    return Status::kInvalidModel;
  }
  if (l->arena_bytes() != plan.cache_bytes + plan.scratch_bytes) {
    c.Msg() << "records " << l->arena_bytes() << " arena bytes, the plan needs "
            << plan.cache_bytes + plan.scratch_bytes << " (re-convert it with this release)";
    return Status::kInvalidModel;
  }
  return Status::kOk;
}

Status Model::Load(const void* data, size_t size) {
  model_ = nullptr;
  num_steps_ = 0;
  decoder_start_ = 0;
  error_.Clear();
  if (data == nullptr || size == 0) {
    error_ << "model buffer is empty";
    return Fail(Status::kInvalidArgument);
  }
  if (reinterpret_cast<uintptr_t>(data) % EA_ALIGNMENT != 0) {
    error_ << "model buffer must be " << static_cast<int>(EA_ALIGNMENT) << "-byte aligned";
    return Fail(Status::kInvalidArgument);
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (size < 8 + kChecksumBytes) {
    error_ << "not an edgeattn model (" << static_cast<uint64_t>(size) << " bytes)";
    return Fail(Status::kInvalidModel);
  }
  // The whole-file checksum comes first, so that no byte of a corrupted file
  // is interpreted: every failure below concerns an intact file.
  const size_t body = size - kChecksumBytes;
  const uint32_t crc = crc32(bytes, body);
  const uint32_t recorded = read_le32(bytes + body);
  if (crc != recorded) {
    if (!fb::ModelBufferHasIdentifier(bytes)) {
      error_ << "not an edgeattn model (file identifier is not EATN) and the file checksum does not match";
      return Fail(Status::kInvalidModel);
    }
    uint32_t version = 0;
    if (intact_earlier_format(bytes, size, &version)) {
      error_ << "format version " << version << " (no file checksum), this runtime reads version "
             << static_cast<uint32_t>(EA_FORMAT_VERSION)
             << ": re-convert the model with an edgeattn-convert of this release";
      return Fail(Status::kVersionMismatch);
    }
    error_ << "file checksum mismatch: CRC-32 " << Hex32(crc).text << ", the file ends in "
           << Hex32(recorded).text << " (corrupted, truncated, or size " << static_cast<uint64_t>(size)
           << " is not the file's)";
    return Fail(Status::kCrcMismatch);
  }
  if (!fb::ModelBufferHasIdentifier(bytes)) {
    error_ << "not an edgeattn model (file identifier is not EATN)";
    return Fail(Status::kInvalidModel);
  }
  if (!verify_flatbuffer(bytes, body)) {
    error_ << "model file is malformed (FlatBuffers verification failed, "
           << static_cast<uint64_t>(size) << " bytes)";
    return Fail(Status::kInvalidModel);
  }
  const fb::Model* m = fb::GetModel(bytes);
  if (m->format_version() != EA_FORMAT_VERSION) {
    error_ << "format version " << m->format_version() << ", this runtime reads version "
           << static_cast<uint32_t>(EA_FORMAT_VERSION)
           << ": re-convert the model with an edgeattn-convert of this release";
    return Fail(Status::kVersionMismatch);
  }
  if (m->layers() == nullptr || m->layers()->size() == 0 ||
      m->layers()->size() > static_cast<uint32_t>(Interpreter::kMaxLayers)) {
    error_ << "model must have 1.." << Interpreter::kMaxLayers << " layers";
    return Fail(Status::kInvalidModel);
  }
  if (m->data() == nullptr) {
    error_ << "model has no weight data";
    return Fail(Status::kInvalidModel);
  }
  data_ = m->data()->data();
  data_size_ = m->data()->size();
  if (reinterpret_cast<uintptr_t>(data_) % EA_ALIGNMENT != 0) {
    error_ << "weight data is not " << static_cast<int>(EA_ALIGNMENT) << "-byte aligned";
    return Fail(Status::kInvalidModel);
  }
  model_ = m;
  for (int i = 0; i < num_layers(); ++i) {
    const Status s = VerifyLayer(i);
    if (s != Status::kOk) return Fail(s);
  }
  const Status graph = VerifyGraph();
  if (graph != Status::kOk) return Fail(graph);
  arena_bytes_ = ArenaBytesFor(0, 0);
  if (arena_bytes_ > kMaxArenaBytes) {
    error_ << "model needs more than " << kMaxArenaBytes << " arena bytes";
    return Fail(Status::kInvalidModel);
  }
  if (m->arena_bytes() != arena_bytes_) {
    error_ << "model records " << m->arena_bytes() << " arena bytes, the plan needs "
           << static_cast<uint64_t>(arena_bytes_) << " (re-convert it with this release)";
    return Fail(Status::kInvalidModel);
  }
  worker_bytes_ = static_cast<size_t>(LayOutArena(0, 0, nullptr).worker_bytes);  // <= a layer's scratch
  if (m->worker_bytes() != worker_bytes_) {
    error_ << "model records " << m->worker_bytes() << " arena bytes per extra worker, the plan needs "
           << static_cast<uint64_t>(worker_bytes_) << " (re-convert it with this release)";
    return Fail(Status::kInvalidModel);
  }
  return Status::kOk;
}

int Model::CappedQLen(int index, int cap) const {
  const int max = static_cast<int>(layer(index)->max_q_len());
  return cap > 0 && cap < max ? cap : max;
}

int Model::CappedKvLen(int index, int cap) const {
  const int max = static_cast<int>(layer(index)->max_kv_len());
  return cap > 0 && cap < max ? cap : max;
}

ArenaLayout Model::LayOutArena(int max_q_len, int max_kv_len, uint64_t* cache_offsets,
                               uint64_t* activation_offsets) const {
  return LayOut(max_q_len, max_kv_len, cache_offsets, activation_offsets);
}

ArenaLayout Model::LayOutArena(int max_q_len, int max_kv_len, uint32_t* cache_offsets,
                               uint32_t* activation_offsets) const {
  return LayOut(max_q_len, max_kv_len, cache_offsets, activation_offsets);
}

template <typename Offset>
ArenaLayout Model::LayOut(int max_q_len, int max_kv_len, Offset* cache_offsets, Offset* activation_offsets) const {
  ArenaBuilder arena;  // no array of plans: this runs on a microcontroller's stack
  for (int i = 0; i < num_layers(); ++i) {
    const uint64_t offset = arena.Add(PlanLayer(i, CappedQLen(i, max_q_len), CappedKvLen(i, max_kv_len)));
    if (cache_offsets != nullptr) cache_offsets[i] = static_cast<Offset>(offset);
  }
  uint64_t activation_bytes = 0;
  if (num_steps_ > 0) {
    const fb::Layer* layers[Interpreter::kMaxLayers];
    for (int i = 0; i < num_layers(); ++i) layers[i] = layer(i);
    GraphTensor tensors[kMaxGraphSteps];
    uint64_t offsets[kMaxGraphSteps];
    const int n = graph_tensors(layers, num_layers(), *model_->graph(), max_q_len, tensors);
    activation_bytes = lay_out_graph(tensors, n, offsets);
    for (int s = 0; s < n && activation_offsets != nullptr; ++s) activation_offsets[s] = static_cast<Offset>(offsets[s]);
  }
  return arena.Finish(activation_bytes);
}

size_t Model::ArenaBytesFor(int max_q_len, int max_kv_len) const {
  // Each layer's plan is <= kMaxArenaBytes (checked at load), each graph
  // tensor < 2^34 bytes (verified dimensions and lengths) and there are at
  // most 32 of each, so the 64-bit sum cannot overflow; it still has to fit.
  const uint64_t total = LayOutArena(max_q_len, max_kv_len, nullptr).total_bytes;
  return total > kMaxArenaBytes ? static_cast<size_t>(kMaxArenaBytes) + 1 : static_cast<size_t>(total);
}

size_t Model::ArenaBytesForWorkers(int workers, int max_q_len, int max_kv_len) const {
  // UseExecutor takes 1..1024 workers; beyond that no arena is enough. With
  // worker_bytes below kMaxArenaBytes no 64-bit product overflows.
  if (workers > 1024) return static_cast<size_t>(kMaxArenaBytes) + 1;
  if (workers < 1) workers = 1;
  const uint64_t total = arena_bytes_for_workers(LayOutArena(max_q_len, max_kv_len, nullptr), workers);
  return total > kMaxArenaBytes ? static_cast<size_t>(kMaxArenaBytes) + 1 : static_cast<size_t>(total);
}

Status Model::GetLayerInfo(int index, LayerInfo* info) const {
  if (info == nullptr || layer(index) == nullptr) {
    error_.Clear();
    error_ << "layer index " << index << " is not in 0.." << num_layers() - 1;
    return Status::kInvalidArgument;
  }
  *info = layer_info(*layer(index));
  return Status::kOk;
}

}  // namespace edgeattn
