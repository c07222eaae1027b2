// Execution: checks the run-time arguments (the only thing not verified at
// load), carves the layer's buffers out of the arena and calls the kernels.
#include <cmath>
#include <cstring>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "graph.h"
#include "layers/layer_kind.h"
#include "model_access.h"
#include "xnnpack_backend.h"

namespace edgeattn {
namespace {

// A caller buffer as a byte range, for the overlap and alignment checks.
struct Span {
  const void* p;
  size_t bytes;
  const char* what;
};

bool overlaps(const Span& a, const Span& b) {
  if (a.p == nullptr || b.p == nullptr || a.bytes == 0 || b.bytes == 0) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a.p), b0 = reinterpret_cast<uintptr_t>(b.p);
  return a0 < b0 + b.bytes && b0 < a0 + a.bytes;
}

bool aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace

// Alignment and aliasing of the caller's buffers (after the length checks, so
// the sizes below are the exact bytes the kernels touch):
//  - float inputs/outputs must be 4-byte aligned, int8 attention weights
//    (uint16) 2-byte aligned; int8 inputs/outputs may have any alignment;
//  - output and attn_weights must not overlap the arena, any input or each
//    other; inputs must not overlap the arena (it is overwritten during the run).
// Inputs may overlap each other (e.g. key == value). A layer that reads
// nothing of an input (self-attention keys, pooling query, cached keys)
// ignores that pointer.
Status Interpreter::CheckBuffers(const Call& c, const LayerKindModule& kind, const LayerInfo& info,
                                 const uint8_t* arena_base, size_t arena_bytes, ErrorMessage& error) {
  const char* name = c.layer->name()->c_str();
  const size_t es = elem_size(c.int8());
  // A pooling kind's rows are its keys, in its input's element type (int16: the residual stream).
  const size_t key_es = kind.learned_query ? elem_size(info.input_dtype) : es;
  const size_t q = static_cast<size_t>(c.q_len), kv = static_cast<size_t>(c.kv_len);
  const size_t out_rows = q + static_cast<size_t>(info.added_rows);
  const bool self_attention = !info.cross;
  const bool reads_key = !self_attention && !c.keys_cached;
  const bool reads_value = !self_attention && !kind.learned_query &&
                           (!c.keys_cached || kind.cached_run_reads_values);
  const Span inputs[3] = {
      {kind.learned_query ? nullptr : c.query, q * info.query_dim * elem_size(info.input_dtype), "query"},
      {reads_key ? c.key : nullptr, kv * info.key_dim * key_es, "key"},
      {reads_value ? c.value : nullptr, kv * info.value_dim * es, "value"}};
  const Span out = {c.output, out_rows * info.output_dim * elem_size(info.output_dtype), "output"};
  const Span weights = {c.weights,
                        static_cast<size_t>(info.num_heads) * q * kv * (c.int8() ? 2 : 4),
                        "attn_weights"};
  const Span arena = {arena_base, arena_bytes, "the arena"};
  // int8 rows: any alignment; float rows, token ids and class indices: 4 bytes.
  const size_t in_align[3] = {elem_size(info.input_dtype), key_es, es};
  for (int i = 0; i < 3; ++i) {
    if (inputs[i].p != nullptr && !aligned(inputs[i].p, in_align[i])) {
      const ea_dtype t = i == 0 || (i == 1 && kind.learned_query) ? info.input_dtype : info.dtype;
      error << "layer '" << name << "': " << (t == EA_S32 ? "token-id " : t == EA_S16 ? "int16 " : "float ")
            << inputs[i].what << " must be " << in_align[i] << "-byte aligned";
      return Status::kInvalidArgument;
    }
  }
  if (!aligned(out.p, elem_size(info.output_dtype))) {
    error << "layer '" << name << "': "
          << (info.output_dtype == EA_S32 ? "index" : info.output_dtype == EA_S16 ? "int16" : "float")
          << " output must be " << elem_size(info.output_dtype) << "-byte aligned";
    return Status::kInvalidArgument;
  }
  if (weights.p != nullptr && !aligned(weights.p, c.int8() ? 2 : 4)) {
    error << "layer '" << name << "': attn_weights must be " << (c.int8() ? 2 : 4)
          << "-byte aligned";
    return Status::kInvalidArgument;
  }
  for (const Span* w : {&out, &weights}) {
    if (overlaps(*w, arena)) {
      error << "layer '" << name << "': " << w->what << " overlaps the arena";
      return Status::kInvalidArgument;
    }
    for (const Span& sp : inputs) {
      if (overlaps(*w, sp)) {
        error << "layer '" << name << "': " << w->what << " overlaps the " << sp.what
              << " input";
        return Status::kInvalidArgument;
      }
    }
  }
  if (overlaps(out, weights)) {
    error << "layer '" << name << "': output overlaps attn_weights";
    return Status::kInvalidArgument;
  }
  for (const Span& sp : inputs) {
    if (overlaps(sp, arena)) {
      error << "layer '" << name << "': the " << sp.what << " input overlaps the arena";
      return Status::kInvalidArgument;
    }
  }
  return Status::kOk;
}

Status Interpreter::Init(const Model* model, void* arena, size_t arena_bytes, int max_q_len,
                         int max_kv_len) {
  model_ = nullptr;
  xnn_table_ = nullptr;
  xnn_bytes_ = 0;
  xnn_ops_ = 0;
  executor_ = ea_executor{};
  workers_ = 1;
  worker_bytes_ = 0;
  worker_scratch_ = nullptr;
  error_.Clear();
  if (model == nullptr) {
    error_ << "model is null";
    return Status::kInvalidArgument;
  }
  if (!model->loaded()) {
    error_ << "no model loaded (Model::Load failed or was not called)";
    return Status::kNotReady;
  }
  if (arena == nullptr) {
    error_ << "arena is null";
    return Status::kInvalidArgument;
  }
  if (reinterpret_cast<uintptr_t>(arena) % EA_ALIGNMENT != 0) {
    error_ << "arena must be " << static_cast<int>(EA_ALIGNMENT) << "-byte aligned";
    return Status::kInvalidArgument;
  }
  if (max_q_len < 0 || max_kv_len < 0) {
    error_ << "length caps must be >= 0";
    return Status::kInvalidArgument;
  }
  // Offsets straight into the tables (each < total_bytes <= kMaxArenaBytes
  // once the arena check below passes; unused until then).
  const ArenaLayout layout = model->LayOutArena(max_q_len, max_kv_len, cache_offset_, activation_offset_);
  if (arena_bytes < layout.total_bytes) {
    error_ << "arena has " << static_cast<uint64_t>(arena_bytes) << " bytes, the model needs "
           << layout.total_bytes;
    return Status::kArenaTooSmall;
  }
  for (int i = 0; i < model->num_layers(); ++i) {
    const LayerShape shape = model->ShapeOf(i);
    const LayerKindModule* kind = find_layer_kind(shape.kind);
    cached_kv_len_[i] = -1;
    position_[i] = kind->has_kv_cache != nullptr && kind->has_kv_cache(shape) ? 0 : -1;
  }
  for (int s = 0; s < model->num_steps(); ++s) {  // from the arena's start
    activation_offset_[s] += static_cast<uint32_t>(layout.activation_offset);
  }
  q_cap_ = max_q_len;
  kv_cap_ = max_kv_len;
  model_ = model;
  arena_ = static_cast<uint8_t*>(arena);
  arena_bytes_ = arena_bytes;
  scratch_ = arena_ + static_cast<size_t>(layout.scratch_offset);
  plan_bytes_ = static_cast<size_t>(layout.total_bytes);  // < arena_bytes, so it fits size_t
  return Status::kOk;
}

Status Interpreter::UseExecutor(const ea_executor* executor) {
  error_.Clear();
  if (model_ == nullptr) {
    error_ << "interpreter has no model (Init failed or was not called)";
    return Status::kNotReady;
  }
  if (xnn_table_ != nullptr) {
    error_ << "set the executor before UseXnnpack (XNNPACK's operators follow the workers' scratch)";
    return Status::kInvalidArgument;
  }
  const ArenaLayout layout = model_->LayOutArena(q_cap_, kv_cap_, nullptr);
  plan_bytes_ = static_cast<size_t>(layout.total_bytes);
  executor_ = ea_executor{};
  workers_ = 1;
  worker_bytes_ = 0;
  worker_scratch_ = nullptr;
  if (executor == nullptr) return Status::kOk;  // back to the caller's thread
#if !EA_THREAD_POOL
  error_ << "this build runs on the caller's thread only (CMake EA_THREAD_POOL=OFF)";
  return Status::kUnsupported;
#endif
  if (executor->num_threads == nullptr || executor->parallel_for == nullptr) {
    error_ << "executor needs num_threads and parallel_for";
    return Status::kInvalidArgument;
  }
  const int32_t workers = executor->num_threads(executor->context);
  constexpr int32_t kMaxWorkers = 1024;
  if (workers < 1 || workers > kMaxWorkers) {
    error_ << "executor reports " << workers << " threads; edgeattn takes 1.." << kMaxWorkers;
    return Status::kInvalidArgument;
  }
  const uint64_t needed = arena_bytes_for_workers(layout, workers);
  if (needed > arena_bytes_) {
    error_ << "a pool of " << workers << " workers needs an arena of " << needed << " bytes (the plan's "
           << layout.total_bytes << " + " << (workers - 1) << " x " << layout.worker_bytes
           << " per extra worker; ea_model_arena_bytes_for_workers), the arena has "
           << static_cast<uint64_t>(arena_bytes_);
    return Status::kArenaTooSmall;
  }
  executor_ = *executor;
  workers_ = workers;
  worker_bytes_ = static_cast<size_t>(layout.worker_bytes);
  worker_scratch_ = arena_ + plan_bytes_;
  plan_bytes_ = static_cast<size_t>(needed);  // <= arena_bytes_
  return Status::kOk;
}

// The public default is the split arithmetic's own (task_split.h).
static_assert(Interpreter::kMinTaskWork == kernels::kDefaultMinTaskWork, "one default task size");

const Pool* Interpreter::MakePool(Pool* storage) const {
  if (workers_ < 2) return nullptr;
  *storage = Pool{executor_, workers_, worker_scratch_, worker_bytes_, min_task_work_};
  return storage;
}

Status Interpreter::UseXnnpack() {
  error_.Clear();
  if (model_ == nullptr) {
    error_ << "interpreter has no model (Init failed or was not called)";
    return Status::kNotReady;
  }
  if (xnn_table_ != nullptr) return Status::kOk;
  const size_t start = static_cast<size_t>(align_up(plan_bytes_));
  const size_t tail = arena_bytes_ > start ? arena_bytes_ - start : 0;
  return xnnpack::build(*model_, arena_ + start, tail, &xnn_table_, &xnn_bytes_, &xnn_ops_,
                        error_);
}

Status Interpreter::CheckLayer(int layer) {
  error_.Clear();
  if (model_ == nullptr) {
    error_ << "interpreter has no model (Init failed or was not called)";
    return Status::kNotReady;
  }
  if (model_->layer(layer) == nullptr) {
    error_ << "layer index " << layer << " is not in 0.." << model_->num_layers() - 1;
    return Status::kInvalidArgument;
  }
  return Status::kOk;
}

Status Interpreter::CacheKeys(int layer, const void* key, const void* value, int kv_len,
                              int kv_valid_len) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  const fb::Layer* l = model_->layer(layer);
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  if (kind.has_key_cache == nullptr || !kind.has_key_cache(shape)) {
    error_ << "layer '" << l->name()->c_str()
           << "' has no key cache (only cross-attention and additive layers do)";
    return Status::kInvalidArgument;
  }
  if (key == nullptr) {
    error_ << "CacheKeys: key is null";
    return Status::kInvalidArgument;
  }
  const int max_kv = model_->CappedKvLen(layer, kv_cap_);
  if (kv_len < 1 || kv_len > max_kv) {
    error_ << "layer '" << l->name()->c_str() << "': kv_len " << kv_len << " is outside 1.."
           << max_kv << " (the plan)";
    return Status::kLengthExceedsPlan;
  }
  if (kv_valid_len > kv_len) {
    error_ << "kv_valid_len " << kv_valid_len << " exceeds kv_len " << kv_len;
    return Status::kInvalidArgument;
  }
  const bool s8 = shape.dtype == EA_S8;
  {
    const LayerInfo info = layer_info(*l);
    const size_t es = elem_size(s8);
    const Span arena = {arena_, arena_bytes_, "the arena"};
    const Span in[2] = {
        {key, static_cast<size_t>(kv_len) * info.key_dim * es, "key"},
        {kind.cached_run_reads_values ? nullptr : value,  // values not cached: not read
         static_cast<size_t>(kv_len) * info.value_dim * es, "value"}};
    for (const Span& sp : in) {
      if (sp.p != nullptr && !s8 && !aligned(sp.p, 4)) {
        error_ << "CacheKeys: float " << sp.what << " must be 4-byte aligned";
        return Status::kInvalidArgument;
      }
      if (overlaps(sp, arena)) {
        error_ << "CacheKeys: " << sp.what << " overlaps the arena";
        return Status::kInvalidArgument;
      }
    }
  }
  FillKeyCache(layer, key, value, kv_len, kv_valid_len);
  return Status::kOk;
}

void Interpreter::FillKeyCache(int layer, const void* key, const void* value, int kv_len, int kv_valid_len) {
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  Call c = {};
  c.layer = model_->layer(layer);
  c.s8 = shape.dtype == EA_S8;
  c.key = key;
  c.value = value != nullptr ? value : key;
  c.kv_len = kv_len;
  c.max_q_len = model_->CappedQLen(layer, q_cap_);
  c.cache = arena_ + cache_offset_[layer];
  c.xnn = xnn_table_;
  Pool pool;
  c.pool = MakePool(&pool);
  kind.cache_keys(*model_->flatbuffer(), c, model_->CappedKvLen(layer, kv_cap_));
  cached_kv_len_[layer] = kv_len;
  cached_kv_valid_len_[layer] = kv_valid_len <= 0 ? kv_len : kv_valid_len;
}

Status Interpreter::Run(int layer, const RunArgs& args) {
  return RunWith(layer, args, nullptr, arena_bytes_);
}

Status Interpreter::RunWith(int layer, const RunArgs& args, const RangeScale* range,
                            size_t checked_arena_bytes, BufferCheck check_buffers) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  const fb::Layer* l = model_->layer(layer);
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  const LayerInfo info = layer_info(*l);
  const char* name = l->name()->c_str();
  Call c = {};
  c.layer = l;
  c.s8 = shape.dtype == EA_S8;
  c.query = args.query;
  c.key = args.key;
  c.value = args.value != nullptr ? args.value : args.key;
  c.output = args.output;
  c.weights = args.attn_weights;
  c.q_len = args.q_len;
  c.kv_len = args.kv_len;
  c.max_q_len = model_->CappedQLen(layer, q_cap_);
  c.cache = arena_ + cache_offset_[layer];
  c.scratch = scratch_;
  c.xnn = range != nullptr ? nullptr : xnn_table_;
  c.range = range;
  Pool pool;
  c.pool = MakePool(&pool);

  const bool self_attention = !info.cross;  // keys and values are the query sequence
  if (kind.learned_query) c.q_len = 1;
  if (self_attention) {
    c.key = c.value = args.query;
    if (args.kv_len != 0 && args.kv_len != args.q_len) {
      error_ << "layer '" << name << "' is self-attention: kv_len must be 0 or equal q_len";
      return Status::kInvalidArgument;
    }
    c.kv_len = args.q_len;
  }
  if (args.use_cached_keys) {
    if (kind.has_key_cache == nullptr || !kind.has_key_cache(shape)) {
      error_ << "layer '" << name << "' has no key cache";
      return Status::kInvalidArgument;
    }
    if (cached_kv_len_[layer] < 0) {
      error_ << "layer '" << name << "': use_cached_keys before CacheKeys";
      return Status::kNotReady;
    }
    c.keys_cached = true;
    c.kv_len = cached_kv_len_[layer];
    c.kv_valid_len = cached_kv_valid_len_[layer];
    if (kind.cached_run_reads_values) c.value = args.value;
  } else {
    c.kv_valid_len = args.kv_valid_len <= 0 ? c.kv_len : args.kv_valid_len;
  }

  // Cached cross-attention needs neither keys nor values; cached additive
  // attention still reads the values (they are not cached).
  const bool needs_value = !c.keys_cached || kind.cached_run_reads_values;
  if (c.output == nullptr || (!kind.learned_query && c.query == nullptr) ||
      (!c.keys_cached && c.key == nullptr) || (needs_value && c.value == nullptr)) {
    error_ << "layer '" << name << "': a required input or output pointer is null"
           << (kind.cached_run_reads_values && c.keys_cached ? " (cached runs still read value)" : "");
    return Status::kInvalidArgument;
  }
  if (c.q_len < 1 || c.kv_len < 1) {
    error_ << "layer '" << name << "': q_len " << c.q_len << " and kv_len " << c.kv_len
           << " must be >= 1";
    return Status::kInvalidArgument;
  }
  const int max_q = model_->CappedQLen(layer, q_cap_);
  const int max_kv = model_->CappedKvLen(layer, kv_cap_);
  if (c.q_len > max_q || c.kv_len > max_kv) {
    error_ << "layer '" << name << "': lengths " << c.q_len << " / " << c.kv_len
           << " exceed the plan's " << max_q << " / " << max_kv;
    return Status::kLengthExceedsPlan;
  }
  if (c.kv_valid_len > c.kv_len) {
    error_ << "layer '" << name << "': kv_valid_len " << c.kv_valid_len << " exceeds kv_len "
           << c.kv_len;
    return Status::kInvalidArgument;
  }
  if (kind.keys_pair_rows && c.kv_len != c.q_len) {
    error_ << "layer '" << name << "' (" << kind.name << ") pairs its " << c.q_len << " query rows with "
           << c.kv_len << " key rows: give as many of each";
    return Status::kInvalidArgument;
  }

  if (c.weights != nullptr && info.num_heads == 0) {
    error_ << "layer '" << name << "' (" << kind.name << ") has no attention weights: pass attn_weights = null";
    return Status::kInvalidArgument;
  }
  if (check_buffers != nullptr) {
    s = check_buffers(c, kind, info, arena_, checked_arena_bytes, error_);
    if (s != Status::kOk) return s;
  }
  if (info.input_dtype == EA_S32 && info.input_range > 0) {  // token ids index a table: each must be in it
    const int32_t* ids = static_cast<const int32_t*>(c.query);
    for (int i = 0; i < c.q_len * info.query_dim; ++i) {
      if (ids[i] < 0 || ids[i] >= info.input_range) {
        error_ << "layer '" << name << "': token id " << ids[i] << " at " << i << " is outside 0.."
               << info.input_range - 1;
        return Status::kInvalidArgument;
      }
    }
  }

  if (info.input_dtype == EA_F32 && info.dtype == EA_S8) {  // float rows into int8 (quantize): no byte for NaN
    const float* x = static_cast<const float*>(c.query);
    for (int i = 0; i < c.q_len * info.query_dim; ++i) {
      if (!std::isfinite(x[i])) {
        error_ << "layer '" << name << "': input value " << i << " (row " << i / info.query_dim << ") is "
               << (std::isnan(x[i]) ? "NaN" : "infinite") << ": it has no int8 value";
        return Status::kInvalidArgument;
      }
    }
  }

  kind.run(*model_->flatbuffer(), c, max_kv);
  // A direct (uncached) run overwrote the cross-attention/additive cache
  // region; a KV-cache layer's run filled positions 0..q_len-1 (prefill).
  // A decoder block's run leaves the memory's projections there, as CacheKeys
  // would (its steps attend over them).
  if (!c.keys_cached && kind.has_key_cache != nullptr && kind.has_key_cache(shape)) {
    const bool keeps_memory = kind.kv_positions_on_q_len && range == nullptr;
    cached_kv_len_[layer] = keeps_memory ? c.kv_len : -1;
    cached_kv_valid_len_[layer] = c.kv_valid_len;
  }
  if (kind.has_kv_cache != nullptr && kind.has_kv_cache(shape)) {
    // A range run at R > 1 left its keys and values at range R: steps (at
    // the calibrated scales) need a new sequence first.
    const bool rescaled = range != nullptr && range->range_q16 != kRangeOne;
    position_[layer] = rescaled ? kKvCacheRescaled : c.q_len;
  }
  return Status::kOk;
}

Status Interpreter::Invoke(const ModelInputs& in, ModelOutputs* out) {
  error_.Clear();
  if (model_ == nullptr) {
    error_ << "interpreter has no model (Init failed or was not called)";
    return Status::kNotReady;
  }
  GraphInfo g;
  int out_rows = 0;
  if (model_->GetGraphInfo(&g, in.num_rows, &out_rows) != Status::kOk) {
    error_ << model_->error();
    return Status::kUnsupported;
  }
  if (g.decoder_start > 0) {
    error_ << "the graph generates (its steps from " << g.decoder_start
           << " on run once per token): Generate runs it, not Invoke";
    return Status::kUnsupported;
  }
  if (out == nullptr || out->rows == nullptr || in.rows == nullptr) {
    error_ << "Invoke needs input rows and an output buffer";
    return Status::kInvalidArgument;
  }
  if (g.memory_dim > 0 && in.memory == nullptr) {
    error_ << "the model reads memory rows (cross-attention): memory is null";
    return Status::kInvalidArgument;
  }
  const bool memory = g.memory_dim > 0;
  // (The memory's numbers only when the model reads a memory.)
  if (in.num_rows < 1 || (memory && in.memory_rows < 1)) {
    error_ << "Invoke: num_rows " << in.num_rows;
    if (memory) error_ << " and memory_rows " << in.memory_rows;
    error_ << " must be >= 1";
    return Status::kInvalidArgument;
  }
  if (in.num_rows > g.max_input_rows || (memory && in.memory_rows > g.max_memory_rows)) {
    error_ << "Invoke: " << in.num_rows << " input rows";
    if (memory) error_ << ", " << in.memory_rows << " memory rows";
    error_ << " exceed the model's " << g.max_input_rows;
    if (memory) error_ << " / " << g.max_memory_rows;
    return Status::kLengthExceedsPlan;
  }
  if (in.valid_rows > in.num_rows || (memory && in.memory_valid_rows > in.memory_rows)) {
    error_ << "Invoke: valid_rows exceed the rows given";
    return Status::kInvalidArgument;
  }
  const int n = model_->num_steps();
  const size_t es[3] = {elem_size(g.input_dtype), elem_size(g.dtype), elem_size(g.output_dtype)};
  const Span caller[3] = {
      {in.rows, static_cast<size_t>(in.num_rows) * static_cast<size_t>(g.input_dim) * es[0], "input"},
      {memory ? in.memory : nullptr,
       static_cast<size_t>(memory ? in.memory_rows : 0) * static_cast<size_t>(g.memory_dim) * es[1], "memory"},
      {out->rows, static_cast<size_t>(out_rows) * static_cast<size_t>(g.output_dim) * es[2], "output"}};
  const Span arena = {arena_, arena_bytes_, "the arena"};
  for (int i = 0; i < 3; ++i) {
    const Span& sp = caller[i];
    if (sp.p != nullptr && !aligned(sp.p, es[i])) {
      error_ << "Invoke: " << sp.what << " must be " << es[i] << "-byte aligned (" << es[i] << "-byte elements)";
      return Status::kInvalidArgument;
    }
    if (overlaps(sp, arena)) {
      error_ << "Invoke: " << sp.what << " overlaps the arena";
      return Status::kInvalidArgument;
    }
  }
  if (overlaps(caller[2], caller[0]) || overlaps(caller[2], caller[1])) {
    error_ << "Invoke: the output overlaps an input";
    return Status::kInvalidArgument;
  }

  int32_t rows[kMaxGraphSteps], valid[kMaxGraphSteps];  // int32_t: RunArgs' lengths (long on arm-none-eabi)
  const Status status = RunGraphSteps(in, n, out->rows, rows, valid);
  if (status != Status::kOk) return status;
  out->num_rows = rows[n - 1];
  return Status::kOk;
}

// Each step reads the model's input or memory or an earlier step's output
// (in the arena, at its planned offset) and passes its rows and valid rows on.
Status Interpreter::RunGraphSteps(const ModelInputs& in, int n, void* last_output, int32_t* rows, int32_t* valid) {
  const auto source = [&](int src, const void** p, int32_t* r, int32_t* v) {
    if (src == kModelInput) {
      *p = in.rows;
      *r = in.num_rows;
      *v = in.valid_rows > 0 ? in.valid_rows : in.num_rows;
    } else if (src == kModelMemory) {
      *p = in.memory;
      *r = in.memory_rows;
      *v = in.memory_valid_rows > 0 ? in.memory_valid_rows : in.memory_rows;
    } else {
      *p = arena_ + activation_offset_[src];
      *r = rows[src];
      *v = valid[src];
    }
  };
  for (int s = 0; s < n; ++s) {
    const fb::GraphStep* st = model_->step(s);
    const int layer = static_cast<int>(st->layer());
    const StepIo io = step_io(*model_->layer(layer), q_cap_);
    const void* p;
    int32_t r, v;
    source(st->query(), &p, &r, &v);
    RunArgs a = {};
    if (io.learned_query) {  // pooling: the rows are its keys and values
      a.key = p;
      a.kv_len = r;
      a.kv_valid_len = v;
    } else {
      a.query = p;
      a.q_len = r;
      a.kv_valid_len = v;  // self-attention masks the padding rows
    }
    if (io.cross) {
      source(st->memory(), &a.key, &a.kv_len, &a.kv_valid_len);
      a.value = a.key;
    }
    a.output = s == n - 1 && last_output != nullptr ? last_output : arena_ + activation_offset_[s];
    rows[s] = step_output_rows(io, r);
    valid[s] = step_output_rows(io, v);  // class tokens are valid rows; a pooled row is
    const Status status = RunWith(layer, a, nullptr, arena_bytes_, /*check_buffers=*/nullptr);
    if (status != Status::kOk) return status;
  }
  return Status::kOk;
}

Status Interpreter::CheckKvCacheLayer(int layer) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  if (kind.has_kv_cache == nullptr || !kind.has_kv_cache(shape)) {
    error_ << "layer '" << model_->layer(layer)->name()->c_str()
           << "' has no KV cache (convert a causal self-attention layer with \"kv_cache\": true"
           << (shape.coverage ? "; a coverage layer decodes with Run and use_cached_keys" : "") << ")";
    return Status::kInvalidArgument;
  }
  return Status::kOk;
}

Status Interpreter::BeginSequence(int layer) {
  if (model_ != nullptr && model_->layer(layer) != nullptr) {
    const LayerShape shape = model_->ShapeOf(layer);
    const LayerKindModule& kind = *find_layer_kind(shape.kind);
    if (shape.coverage && kind.reset_coverage != nullptr) {
      error_.Clear();
      kind.reset_coverage(*model_->layer(layer), arena_ + cache_offset_[layer], model_->CappedKvLen(layer, kv_cap_));
      return Status::kOk;
    }
  }
  const Status s = CheckKvCacheLayer(layer);
  if (s != Status::kOk) return s;
  position_[layer] = 0;
  return Status::kOk;
}

int Interpreter::CachedLength(int layer) const {
  if (model_ == nullptr || model_->layer(layer) == nullptr) return -1;
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  if (kind.has_kv_cache == nullptr || !kind.has_kv_cache(shape)) return -1;
  return position_[layer] == kKvCacheRescaled ? 0 : position_[layer];
}

Status Interpreter::Step(int layer, const void* query, void* output, void* attn_weights) {
  return StepWith(layer, query, output, attn_weights, CheckBuffers);
}

Status Interpreter::StepWith(int layer, const void* query, void* output, void* attn_weights,
                             BufferCheck check_buffers) {
  Status s = CheckKvCacheLayer(layer);
  if (s != Status::kOk) return s;
  const fb::Layer* l = model_->layer(layer);
  const char* name = l->name()->c_str();
  const int position = position_[layer];
  if (position == kKvCacheRescaled) {
    error_ << "layer '" << name << "': the KV cache was filled by a range-mode run at range > 1;"
           << " BeginSequence starts a new sequence";
    return Status::kNotReady;
  }
  const LayerShape shape = model_->ShapeOf(layer);
  const LayerKindModule& kind = *find_layer_kind(shape.kind);
  const int max_q = model_->CappedQLen(layer, q_cap_);
  const int max_kv = model_->CappedKvLen(layer, kv_cap_);
  const int max_positions = kind.kv_positions_on_q_len ? max_q : max_kv;
  if (position >= max_positions) {
    error_ << "layer '" << name << "': the KV cache is full (" << max_positions
           << " positions, the plan); BeginSequence starts a new sequence";
    return Status::kLengthExceedsPlan;
  }
  if (query == nullptr || output == nullptr) {
    error_ << "layer '" << name << "': Step needs query and output";
    return Status::kInvalidArgument;
  }
  // A layer with a key cache too (a decoder block) attends over its cached
  // memory in every step.
  const bool memory = kind.has_key_cache != nullptr && kind.has_key_cache(shape);
  if (memory && cached_kv_len_[layer] < 0) {
    error_ << "layer '" << name << "': Step needs the memory's keys (CacheKeys, or a Run with the memory) first";
    return Status::kNotReady;
  }
  Call c = {};
  c.layer = l;
  c.s8 = shape.dtype == EA_S8;
  c.query = query;
  c.output = output;
  c.weights = attn_weights;
  c.q_len = 1;
  c.kv_len = memory ? cached_kv_len_[layer] : position + 1;
  c.kv_valid_len = memory ? cached_kv_valid_len_[layer] : position + 1;
  c.keys_cached = memory;
  c.max_q_len = max_q;
  c.cache = arena_ + cache_offset_[layer];
  c.scratch = scratch_;
  c.xnn = xnn_table_;
  Pool pool;
  c.pool = MakePool(&pool);
  if (check_buffers != nullptr) {
    s = check_buffers(c, kind, layer_info(*l), arena_, arena_bytes_, error_);
    if (s != Status::kOk) return s;
  }
  kind.step(*model_->flatbuffer(), c, max_kv, position);
  position_[layer] = position + 1;
  return Status::kOk;
}

}  // namespace edgeattn
