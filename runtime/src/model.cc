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
#include "model_access.h"

namespace edgeattn {
namespace {

// Dimensions and lengths are bounded so that every size computation fits in
// 32-bit arithmetic and the softmax sum (<= 32768 per key) fits in int32.
constexpr uint32_t kMaxDim = 16384;
constexpr uint32_t kMaxLength = 65535;

size_t dtype_size(fb::DType t) {
  switch (t) {
    case fb::DType::F32: return 4;
    case fb::DType::S8: return 1;
    case fb::DType::S32: return 4;
  }
  return 0;
}

const char* dtype_name(fb::DType t) { return fb::EnumNameDType(t); }

// Validation context: the layer being checked and the message to fill.
struct Checker {
  ErrorMessage& err;
  const char* layer;
  const uint8_t* data;
  size_t data_size;

  bool Fail() { return false; }
  ErrorMessage& Msg() {
    err.Clear();
    return err << "layer '" << layer << "': ";
  }

  bool Dim(uint32_t v, const char* what) {
    if (v == 0 || v > kMaxDim) {
      Msg() << what << " = " << v << " is outside 1.." << kMaxDim;
      return false;
    }
    return true;
  }

  bool Positive(float v, const char* what) {
    if (!std::isfinite(v) || !(v > 0.0f)) {
      Msg() << what << " must be finite and > 0";
      return false;
    }
    return true;
  }

  bool Quant(const fb::ActQuant* q, const char* what) {
    if (q == nullptr) {
      Msg() << "missing quantization of " << what;
      return false;
    }
    if (!Positive(q->scale(), what)) return false;
    if (q->zero_point() < -128 || q->zero_point() > 127) {
      Msg() << what << " zero point " << q->zero_point() << " is outside int8";
      return false;
    }
    return true;
  }

  bool Multiplier(int32_t m, int32_t s, const char* what) {
    if (m < (int32_t{1} << 30) || s < kernels::kMinShift || s > kernels::kMaxShift) {
      Msg() << what << " requantization (" << m << ", " << s << ") is out of range";
      return false;
    }
    return true;
  }

  bool Requant(const fb::Requant* r, uint32_t channels, const char* what) {
    if (r == nullptr || r->multiplier() == nullptr || r->shift() == nullptr) {
      Msg() << "missing requantization of " << what;
      return false;
    }
    const uint32_t n = r->multiplier()->size();
    if ((n != 1 && n != channels) || r->shift()->size() != n) {
      Msg() << what << " has " << n << " requantization entries for " << channels << " channels";
      return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (!Multiplier(r->multiplier()->Get(i), r->shift()->Get(i), what)) return false;
    }
    return true;
  }

  bool Softmax(const fb::SoftmaxQuant* s) {
    if (s == nullptr) {
      Msg() << "missing softmax quantization";
      return false;
    }
    return Multiplier(s->score_multiplier(), s->score_shift(), "softmax score") &&
           Multiplier(s->pv_multiplier(), s->pv_shift(), "softmax output");
  }

  // A constant tensor: dtype, logical rows x cols, bytes inside Model.data.
  bool Tensor(const fb::Tensor* t, fb::DType dtype, uint32_t rows, uint32_t cols, const char* what,
              fb::WeightLayout layout = fb::WeightLayout::RowMajor) {
    if (t == nullptr) {
      Msg() << "missing tensor " << what;
      return false;
    }
    const char* name = t->name() != nullptr ? t->name()->c_str() : what;
    if (t->dtype() != dtype) {
      Msg() << "tensor '" << name << "' is " << dtype_name(t->dtype()) << ", expected "
            << dtype_name(dtype);
      return false;
    }
    const auto* shape = t->shape();
    uint64_t elements = 1;
    if (shape == nullptr || shape->size() == 0 || shape->size() > 2) {
      Msg() << "tensor '" << name << "' must have 1 or 2 dimensions";
      return false;
    }
    for (uint32_t i = 0; i < shape->size(); ++i) elements *= shape->Get(i);
    const uint32_t last = shape->Get(shape->size() - 1);
    const uint32_t shape_rows = shape->size() == 2 ? shape->Get(0) : 1;
    // 1-D tensors of `cols` elements may also be written as [1, cols].
    if (elements != uint64_t{rows} * cols || last != cols || shape_rows != rows) {
      Msg() << "tensor '" << name << "' has shape that does not match " << rows << " x " << cols;
      return false;
    }
    if (t->layout() != layout) {
      Msg() << "tensor '" << name << "' has layout " << fb::EnumNameWeightLayout(t->layout())
            << ", expected " << fb::EnumNameWeightLayout(layout);
      return false;
    }
    uint64_t bytes = 0;
    if (layout == fb::WeightLayout::PackedK4N16) {
      // rows and cols are at most kMaxDim (checked by the layer), so these fit.
      const uint32_t kp = static_cast<uint32_t>(kernels::packed_k(static_cast<int>(cols)));
      if (t->row_stride() != kp) {
        Msg() << "tensor '" << name << "' row stride " << t->row_stride() << " != " << kp
              << " (packed K4N16 weights are round_up(in, 4) wide)";
        return false;
      }
      bytes = kernels::packed_weight_bytes(static_cast<int>(rows), static_cast<int>(cols));
    } else {
      if (t->row_stride() < cols || t->row_stride() > kMaxDim + 64) {
        Msg() << "tensor '" << name << "' row stride " << t->row_stride() << " < " << cols;
        return false;
      }
      bytes = uint64_t{rows} * t->row_stride() * dtype_size(dtype);
    }
    if (t->size() != bytes) {
      Msg() << "tensor '" << name << "' size " << t->size() << " != " << bytes;
      return false;
    }
    if (t->offset() % EA_ALIGNMENT != 0 || t->offset() > data_size ||
        data_size - t->offset() < bytes) {
      Msg() << "tensor '" << name << "' bytes [" << t->offset() << ", +" << t->size()
            << ") are misaligned or outside the weight data";
      return false;
    }
    if (dtype == fb::DType::S8 && rows > 0) {
      const auto* scale = t->scale();
      if (scale == nullptr || (scale->size() != rows && scale->size() != 1)) {
        Msg() << "tensor '" << name << "' needs one weight scale or one per output channel";
        return false;
      }
      for (uint32_t i = 0; i < scale->size(); ++i) {
        if (!Positive(scale->Get(i), "weight scale")) return false;
      }
    }
    return true;
  }

  // The int8 linear kernels accumulate bias[n] + sum_k w x in int32, and
  // |w x| <= 128 * 128, so every bias must leave in * 2^14 of headroom on
  // both sides (the converter's folded biases always do). A larger one would
  // overflow the accumulator: undefined in the reference kernel, and paths
  // would disagree (fuzz_paths finding F6, docs/security.md).
  bool BiasFits(const fb::Tensor* bias, uint32_t in, const char* what) {
    const int64_t headroom = int64_t{in} * 128 * 128;
    const uint8_t* p = data + bias->offset();
    for (uint32_t n = 0; n < bias->size() / 4; ++n) {
      int32_t b;
      std::memcpy(&b, p + 4 * static_cast<size_t>(n), 4);
      if (b > INT32_MAX - headroom || b < INT32_MIN + headroom) {
        Msg() << what << " bias[" << n << "] = " << b << " leaves no room for " << in
              << " int8 products in the int32 accumulator";
        return false;
      }
    }
    return true;
  }

  bool Linear(const fb::Linear* l, bool s8, uint32_t in, uint32_t out, const char* what) {
    if (l == nullptr) {
      Msg() << "missing projection " << what;
      return false;
    }
    if (l->in_features() != in || l->out_features() != out) {
      Msg() << what << " is " << l->out_features() << " x " << l->in_features() << ", expected "
            << out << " x " << in;
      return false;
    }
    if (!Tensor(l->weight(), s8 ? fb::DType::S8 : fb::DType::F32, out, in, what,
                s8 ? fb::WeightLayout::PackedK4N16 : fb::WeightLayout::RowMajor)) {
      return false;
    }
    if (s8) {
      return Tensor(l->bias(), fb::DType::S32, 1, out, what) && BiasFits(l->bias(), in, what) &&
             Quant(l->input(), what) && Quant(l->output(), what) &&
             Requant(l->requant(), out, what);
    }
    return l->bias() == nullptr || Tensor(l->bias(), fb::DType::F32, 1, out, what);
  }
};

}  // namespace

Status Model::Fail(Status status) {
  model_ = nullptr;
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
  if (!s8 && kernels::kernels().f32_linear == nullptr) {
    c.Msg() << "is a float layer; this build is int8-only (EA_INT8_ONLY)";
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
  bool ok = false;
  switch (l->options_type()) {
    case fb::LayerOptions::MultiHeadAttention: {
      const auto* m = l->options_as_MultiHeadAttention();
      ok = c.Dim(m->embed_dim(), "embed_dim") && c.Dim(m->kdim(), "kdim") &&
           c.Dim(m->vdim(), "vdim") && c.Dim(m->num_heads(), "num_heads") &&
           c.Dim(m->head_dim(), "head_dim") && c.Positive(m->scale(), "scale");
      if (ok && m->head_dim() * m->num_heads() != m->embed_dim()) {
        c.Msg() << "num_heads " << m->num_heads() << " x head_dim " << m->head_dim()
                << " != embed_dim " << m->embed_dim();
        ok = false;
      }
      if (ok && !m->cross() && (m->kdim() != m->embed_dim() || m->vdim() != m->embed_dim())) {
        c.Msg() << "self-attention needs kdim == vdim == embed_dim";
        ok = false;
      }
      const uint32_t e = m->embed_dim();
      ok = ok && c.Linear(m->q_proj(), s8, e, e, "q_proj") &&
           c.Linear(m->k_proj(), s8, m->kdim(), e, "k_proj") &&
           c.Linear(m->v_proj(), s8, m->vdim(), e, "v_proj") &&
           c.Linear(m->out_proj(), s8, e, e, "out_proj") && (!s8 || c.Softmax(m->softmax()));
      break;
    }
    case fb::LayerOptions::AdditiveAttention: {
      const auto* a = l->options_as_AdditiveAttention();
      ok = c.Dim(a->query_dim(), "query_dim") && c.Dim(a->key_dim(), "key_dim") &&
           c.Dim(a->attn_dim(), "attn_dim") && c.Dim(a->value_dim(), "value_dim") &&
           c.Linear(a->w_q(), s8, a->query_dim(), a->attn_dim(), "w_q") &&
           c.Linear(a->w_k(), s8, a->key_dim(), a->attn_dim(), "w_k") &&
           c.Tensor(a->v(), s8 ? fb::DType::S8 : fb::DType::F32, 1, a->attn_dim(), "v");
      if (ok && s8) {
        ok = c.Requant(a->pre_tanh(), 1, "pre-tanh") && c.Quant(a->value_input(), "value input") &&
             c.Quant(a->output(), "output") && c.Softmax(a->softmax());
        if (ok && (a->tanh_table() == nullptr || a->tanh_table()->size() != 256)) {
          c.Msg() << "tanh table must have 256 entries";
          ok = false;
        }
        if (ok && (a->pre_tanh_zero_point() < -128 || a->pre_tanh_zero_point() > 127)) {
          c.Msg() << "pre-tanh zero point outside int8";
          ok = false;
        }
        // The kernel adds the two projections directly: they must share one scale.
        if (ok && a->w_q()->output()->scale() != a->w_k()->output()->scale()) {
          c.Msg() << "w_q and w_k outputs must share one scale";
          ok = false;
        }
      }
      break;
    }
    case fb::LayerOptions::LuongAttention: {
      const auto* g = l->options_as_LuongAttention();
      ok = c.Dim(g->query_dim(), "query_dim") && c.Dim(g->key_dim(), "key_dim") &&
           c.Dim(g->value_dim(), "value_dim") && c.Positive(g->scale(), "scale");
      if (ok && !fb::EnumNameLuongScore(g->score())[0]) {
        c.Msg() << "unknown Luong score";
        ok = false;
      }
      if (ok && g->score() == fb::LuongScore::General) {
        ok = c.Linear(g->w(), s8, g->query_dim(), g->key_dim(), "w");
      } else if (ok && g->query_dim() != g->key_dim()) {
        c.Msg() << "dot scores need query_dim == key_dim";
        ok = false;
      }
      if (ok && s8) {
        ok = c.Quant(g->query_input(), "query input") && c.Quant(g->key_input(), "key input") &&
             c.Quant(g->value_input(), "value input") && c.Quant(g->output(), "output") &&
             c.Softmax(g->softmax());
      }
      break;
    }
    case fb::LayerOptions::AttentionPooling: {
      const auto* p = l->options_as_AttentionPooling();
      ok = c.Dim(p->dim(), "dim") &&
           c.Tensor(p->query(), s8 ? fb::DType::S8 : fb::DType::F32, 1, p->dim(), "query");
      if (ok && s8) {
        ok = c.Quant(p->input(), "input") && c.Quant(p->output(), "output") &&
             c.Softmax(p->softmax());
      }
      break;
    }
    default:
      c.Msg() << "unknown layer kind " << static_cast<int>(l->options_type());
      return Status::kInvalidModel;
  }
  if (!ok) return Status::kInvalidModel;

  const LayerPlan plan = plan_layer(layer_shape(*l), static_cast<int>(l->max_q_len()),
                                    static_cast<int>(l->max_kv_len()));
  if (plan.cache_bytes + plan.scratch_bytes > kMaxArenaBytes) {
    c.Msg() << "needs " << plan.cache_bytes + plan.scratch_bytes
            << " arena bytes, more than a 32-bit target can address";
    return Status::kInvalidModel;
  }
  if (l->arena_bytes() != plan.cache_bytes + plan.scratch_bytes) {
    c.Msg() << "records " << l->arena_bytes() << " arena bytes, the plan needs "
            << plan.cache_bytes + plan.scratch_bytes;
    return Status::kInvalidModel;
  }
  return Status::kOk;
}

Status Model::Load(const void* data, size_t size) {
  model_ = nullptr;
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
  if (size < 8 || !fb::ModelBufferHasIdentifier(bytes)) {
    error_ << "not an edgeattn model (file identifier is not EATN)";
    return Fail(Status::kInvalidModel);
  }
  // Depth and table limits well above any real model bound the verifier's work.
  flatbuffers::Verifier verifier(bytes, size, 32, 100000);
  if (!fb::VerifyModelBuffer(verifier)) {
    error_ << "model file is malformed or truncated (FlatBuffers verification failed, "
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
  const uint32_t crc = crc32(data_, data_size_);
  if (crc != m->data_crc32()) {
    error_ << "weight data CRC-32 is " << crc << ", the file records " << m->data_crc32();
    return Fail(Status::kCrcMismatch);
  }
  model_ = m;
  for (int i = 0; i < num_layers(); ++i) {
    const Status s = VerifyLayer(i);
    if (s != Status::kOk) return Fail(s);
  }
  arena_bytes_ = ArenaBytesFor(0, 0);
  if (arena_bytes_ > kMaxArenaBytes) {
    error_ << "model needs more than " << kMaxArenaBytes << " arena bytes";
    return Fail(Status::kInvalidModel);
  }
  if (m->arena_bytes() != arena_bytes_) {
    error_ << "model records " << m->arena_bytes() << " arena bytes, the plan needs "
           << static_cast<uint64_t>(arena_bytes_);
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

size_t Model::ArenaBytesFor(int max_q_len, int max_kv_len) const {
  // Each layer's plan is <= kMaxArenaBytes (checked at load) and there are at
  // most 16 layers, so the 64-bit sum cannot overflow; it still has to fit.
  uint64_t cache_total = 0;
  uint64_t scratch_max = 0;
  for (int i = 0; i < num_layers(); ++i) {
    const LayerPlan plan = PlanLayer(i, CappedQLen(i, max_q_len), CappedKvLen(i, max_kv_len));
    cache_total += plan.cache_bytes;
    if (plan.scratch_bytes > scratch_max) scratch_max = plan.scratch_bytes;
  }
  const uint64_t total = cache_total + scratch_max;
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
