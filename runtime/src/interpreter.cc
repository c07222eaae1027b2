// Execution: checks the run-time arguments (the only thing not verified at
// load), carves the layer's buffers out of the arena and calls the kernels.
#include <cstring>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "model_access.h"
#include "xnnpack_backend.h"

namespace edgeattn {
namespace {

namespace k = kernels;

// Sequential carving of an arena region; sizes mirror plan_layer().
class Carver {
 public:
  explicit Carver(uint8_t* base) : next_(base) {}
  template <typename T>
  T* Take(size_t count) {
    T* p = reinterpret_cast<T*>(next_);
    next_ += static_cast<size_t>(align_up(count * sizeof(T)));
    return p;
  }

 private:
  uint8_t* next_;
};

// Everything one layer call needs, after argument checks.
struct Call {
  const fb::Layer* layer;
  bool s8;
  int q_len, kv_len, kv_valid_len;
  const void* query;
  const void* key;
  const void* value;
  void* output;
  void* weights;
  bool keys_cached;  // key projections already in the cache region
  uint8_t* cache;    // this layer's persistent region (may be null)
  uint8_t* scratch;
  const void* xnn;   // XNNPACK operator table, or null
};

template <typename T>
const T* tensor_data(const fb::Model& model, const fb::Tensor* t) {
  if (t == nullptr) return nullptr;
  return reinterpret_cast<const T*>(model.data()->data() + t->offset());
}

// y = linear(x) over `rows` dense rows of l->in_features() elements; int8
// through XNNPACK when `xnn` holds an operator for this projection.
void run_linear(const fb::Model& model, const fb::Linear* l, bool s8, int rows, const void* x,
                void* y, const void* xnn) {
  if (s8 && xnnpack::run_linear(xnn, l, rows, static_cast<const int8_t*>(x),
                                static_cast<int8_t*>(y))) {
    return;
  }
  const int in = static_cast<int>(l->in_features());
  const int out = static_cast<int>(l->out_features());
  if (s8) {  // weights in the packed K4N16 layout (schema/edgeattn.fbs)
    const auto* r = l->requant();
    k::kernels().qs8_linear(rows, out, in, static_cast<const int8_t*>(x), in,
                       tensor_data<int8_t>(model, l->weight()),
                       tensor_data<int32_t>(model, l->bias()), r->multiplier()->data(),
                       r->shift()->data(), r->multiplier()->size() > 1 ? 1 : 0,
                       l->output()->zero_point(), static_cast<int8_t*>(y), out);
  } else {
    const int w_stride = static_cast<int>(l->weight()->row_stride());
    k::kernels().f32_linear(rows, out, in, static_cast<const float*>(x), in,
                       tensor_data<float>(model, l->weight()), w_stride,
                       tensor_data<float>(model, l->bias()), static_cast<float*>(y), out);
  }
}

size_t elem_size(bool s8) { return s8 ? 1 : 4; }

// Core attention of one head over prepared (projected) q/k/v, both dtypes.
struct HeadView {
  const void* q; int q_stride; int32_t q_zp;
  const void* k; int k_stride; int32_t k_zp;
  const void* v; int v_stride; int32_t v_zp;
  void* out; int out_stride; int32_t out_zp;
  int head_dim, v_dim;
  void* weights;  // [q_len][kv_len] or null
};

void run_head(const Call& c, const HeadView& h, float scale, const fb::SoftmaxQuant* sq,
              bool causal, uint8_t* row_scratch) {
  Carver carve(row_scratch);
  if (c.s8) {
    k::QS8AttentionArgs a = {};
    a.q_len = c.q_len; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const int8_t*>(h.q); a.q_stride = h.q_stride; a.q_zp = h.q_zp;
    a.k = static_cast<const int8_t*>(h.k); a.k_stride = h.k_stride; a.k_zp = h.k_zp;
    a.v = static_cast<const int8_t*>(h.v); a.v_stride = h.v_stride; a.v_zp = h.v_zp;
    a.score_mult = sq->score_multiplier(); a.score_shift = sq->score_shift();
    a.pv_mult = sq->pv_multiplier(); a.pv_shift = sq->pv_shift();
    a.out_zp = h.out_zp;
    a.causal = causal; a.causal_offset = c.kv_len - c.q_len; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<int8_t*>(h.out); a.out_stride = h.out_stride;
    a.weights = static_cast<uint16_t*>(h.weights); a.weights_stride = c.kv_len;
    a.scratch = carve.Take<int32_t>(static_cast<size_t>(c.kv_len));
    a.prob_scratch = carve.Take<uint16_t>(static_cast<size_t>(c.kv_len));
    // Planned (plan_layer) whenever the layer may run this many query rows.
    if (c.q_len >= k::kQs8AttnTileMinRows) {
      a.tile_scratch = carve.Take<uint8_t>(k::qs8_attention_tile_bytes(c.kv_len, h.head_dim, h.v_dim));
    }
    k::kernels().qs8_attention(a);
  } else {
    k::F32AttentionArgs a = {};
    a.q_len = c.q_len; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const float*>(h.q); a.q_stride = h.q_stride;
    a.k = static_cast<const float*>(h.k); a.k_stride = h.k_stride;
    a.v = static_cast<const float*>(h.v); a.v_stride = h.v_stride;
    a.scale = scale;
    a.causal = causal; a.causal_offset = c.kv_len - c.q_len; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<float*>(h.out); a.out_stride = h.out_stride;
    a.weights = static_cast<float*>(h.weights); a.weights_stride = c.kv_len;
    a.scratch = carve.Take<float>(static_cast<size_t>(c.kv_len));
    k::kernels().f32_attention(a);
  }
}

int32_t zp_of(const fb::ActQuant* q) { return q != nullptr ? q->zero_point() : 0; }

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

// Multi-head attention: project Q (and K, V unless cached), attend per head
// into the context buffer, project the context to the output.
void run_mha(const fb::Model& model, const Call& c, int max_kv_len) {
  const auto* m = c.layer->options_as_MultiHeadAttention();
  const int e = static_cast<int>(m->embed_dim());
  const int hd = static_cast<int>(m->head_dim());
  const size_t es = elem_size(c.s8);
  Carver carve(c.scratch);
  uint8_t* q = carve.Take<uint8_t>(static_cast<size_t>(c.q_len) * e * es);
  uint8_t* ctx = carve.Take<uint8_t>(static_cast<size_t>(c.q_len) * e * es);
  uint8_t* kp;
  uint8_t* vp;
  if (m->cross()) {  // keys live in the persistent cache, laid out for max_kv_len
    Carver cache(c.cache);
    kp = cache.Take<uint8_t>(static_cast<size_t>(max_kv_len) * e * es);
    vp = cache.Take<uint8_t>(static_cast<size_t>(max_kv_len) * e * es);
  } else {
    kp = carve.Take<uint8_t>(static_cast<size_t>(c.kv_len) * e * es);
    vp = carve.Take<uint8_t>(static_cast<size_t>(c.kv_len) * e * es);
  }
  uint8_t* row_scratch = carve.Take<uint8_t>(0);

  run_linear(model, m->q_proj(), c.s8, c.q_len, c.query, q, c.xnn);
  if (!c.keys_cached) {
    run_linear(model, m->k_proj(), c.s8, c.kv_len, c.key, kp, c.xnn);
    run_linear(model, m->v_proj(), c.s8, c.kv_len, c.value, vp, c.xnn);
  }
  for (int h = 0; h < static_cast<int>(m->num_heads()); ++h) {
    const size_t col = static_cast<size_t>(h) * hd * es;
    HeadView v = {};
    v.q = q + col; v.q_stride = e; v.q_zp = zp_of(m->q_proj()->output());
    v.k = kp + col; v.k_stride = e; v.k_zp = zp_of(m->k_proj()->output());
    v.v = vp + col; v.v_stride = e; v.v_zp = zp_of(m->v_proj()->output());
    v.out = ctx + col; v.out_stride = e; v.out_zp = zp_of(m->out_proj()->input());
    v.head_dim = hd; v.v_dim = hd;
    if (c.weights != nullptr) {
      const size_t per_head = static_cast<size_t>(c.q_len) * c.kv_len * (c.s8 ? 2 : 4);
      v.weights = static_cast<uint8_t*>(c.weights) + static_cast<size_t>(h) * per_head;
    }
    run_head(c, v, m->scale(), m->softmax(), m->causal(), row_scratch);
  }
  run_linear(model, m->out_proj(), c.s8, c.q_len, ctx, c.output, c.xnn);
}

void run_additive(const fb::Model& model, const Call& c) {
  const auto* a = c.layer->options_as_AdditiveAttention();
  const int ad = static_cast<int>(a->attn_dim());
  const size_t es = elem_size(c.s8);
  Carver carve(c.scratch);
  uint8_t* qp = carve.Take<uint8_t>(static_cast<size_t>(c.q_len) * ad * es);
  uint8_t* kp = c.cache;
  run_linear(model, a->w_q(), c.s8, c.q_len, c.query, qp, c.xnn);
  if (!c.keys_cached) run_linear(model, a->w_k(), c.s8, c.kv_len, c.key, kp, c.xnn);
  const int vd = static_cast<int>(a->value_dim());
  if (c.s8) {
    k::QS8AdditiveArgs g = {};
    g.q_len = c.q_len; g.kv_len = c.kv_len; g.attn_dim = ad; g.v_dim = vd;
    g.qp = reinterpret_cast<const int8_t*>(qp); g.qp_stride = ad; g.qp_zp = zp_of(a->w_q()->output());
    g.kp = reinterpret_cast<const int8_t*>(kp); g.kp_stride = ad; g.kp_zp = zp_of(a->w_k()->output());
    g.pre_mult = a->pre_tanh()->multiplier()->Get(0);
    g.pre_shift = a->pre_tanh()->shift()->Get(0);
    g.pre_zp = a->pre_tanh_zero_point();
    g.tanh_table = a->tanh_table()->data();
    g.v_w = tensor_data<int8_t>(model, a->v());
    g.score_mult = a->softmax()->score_multiplier(); g.score_shift = a->softmax()->score_shift();
    g.pv_mult = a->softmax()->pv_multiplier(); g.pv_shift = a->softmax()->pv_shift();
    g.values = static_cast<const int8_t*>(c.value); g.values_stride = vd;
    g.values_zp = zp_of(a->value_input());
    g.out_zp = zp_of(a->output());
    g.kv_valid_len = c.kv_valid_len;
    g.out = static_cast<int8_t*>(c.output); g.out_stride = vd;
    g.weights = static_cast<uint16_t*>(c.weights); g.weights_stride = c.kv_len;
    g.scratch = carve.Take<int32_t>(static_cast<size_t>(c.kv_len));
    g.prob_scratch = carve.Take<uint16_t>(static_cast<size_t>(c.kv_len));
    k::kernels().qs8_additive(g);
  } else {
    k::F32AdditiveArgs g = {};
    g.q_len = c.q_len; g.kv_len = c.kv_len; g.attn_dim = ad; g.v_dim = vd;
    g.qp = reinterpret_cast<const float*>(qp); g.qp_stride = ad;
    g.kp = reinterpret_cast<const float*>(kp); g.kp_stride = ad;
    g.v_w = tensor_data<float>(model, a->v());
    g.values = static_cast<const float*>(c.value); g.values_stride = vd;
    g.kv_valid_len = c.kv_valid_len;
    g.out = static_cast<float*>(c.output); g.out_stride = vd;
    g.weights = static_cast<float*>(c.weights); g.weights_stride = c.kv_len;
    g.scratch = carve.Take<float>(static_cast<size_t>(c.kv_len));
    k::kernels().f32_additive(g);
  }
}

void run_luong(const fb::Model& model, const Call& c) {
  const auto* g = c.layer->options_as_LuongAttention();
  const int qd = static_cast<int>(g->query_dim());
  const int kd = static_cast<int>(g->key_dim());
  const int vd = static_cast<int>(g->value_dim());
  Carver carve(c.scratch);
  HeadView v = {};
  if (g->score() == fb::LuongScore::General) {
    uint8_t* qp = carve.Take<uint8_t>(static_cast<size_t>(c.q_len) * kd * elem_size(c.s8));
    run_linear(model, g->w(), c.s8, c.q_len, c.query, qp, c.xnn);
    v.q = qp; v.q_zp = c.s8 ? zp_of(g->w()->output()) : 0;
  } else {
    v.q = c.query; v.q_zp = zp_of(g->query_input());
  }
  (void)qd;
  v.q_stride = kd;
  v.k = c.key; v.k_stride = kd; v.k_zp = zp_of(g->key_input());
  v.v = c.value; v.v_stride = vd; v.v_zp = zp_of(g->value_input());
  v.out = c.output; v.out_stride = vd; v.out_zp = zp_of(g->output());
  v.head_dim = kd; v.v_dim = vd;
  v.weights = c.weights;
  run_head(c, v, g->scale(), g->softmax(), false, carve.Take<uint8_t>(0));
}

void run_pooling(const fb::Model& model, const Call& c) {
  const auto* p = c.layer->options_as_AttentionPooling();
  const int d = static_cast<int>(p->dim());
  HeadView v = {};
  v.q = c.s8 ? static_cast<const void*>(tensor_data<int8_t>(model, p->query()))
             : static_cast<const void*>(tensor_data<float>(model, p->query()));
  v.q_stride = d; v.q_zp = 0;  // the learned query is symmetric
  v.k = c.key; v.k_stride = d; v.k_zp = zp_of(p->input());
  v.v = c.key; v.v_stride = d; v.v_zp = zp_of(p->input());
  v.out = c.output; v.out_stride = d; v.out_zp = zp_of(p->output());
  v.head_dim = d; v.v_dim = d;
  v.weights = c.weights;
  run_head(c, v, 1.0f, p->softmax(), false, c.scratch);
}

// Alignment and aliasing of the caller's buffers (after the length checks, so
// the sizes below are the exact bytes the kernels touch):
//  - float inputs/outputs must be 4-byte aligned, int8 attention weights
//    (uint16) 2-byte aligned; int8 inputs/outputs may have any alignment;
//  - output and attn_weights must not overlap the arena, any input or each
//    other; inputs must not overlap the arena (it is overwritten during the run).
// Inputs may overlap each other (e.g. key == value). A layer that reads
// nothing of an input (self-attention keys, pooling query, cached keys)
// ignores that pointer.
Status check_buffers(const Call& c, const LayerInfo& info, const uint8_t* arena_base,
                     size_t arena_bytes, ErrorMessage& error_) {
  const char* name = c.layer->name()->c_str();
  const size_t es = elem_size(c.s8);
  const size_t q = static_cast<size_t>(c.q_len), kv = static_cast<size_t>(c.kv_len);
  const bool pooling = info.kind == EA_LAYER_POOLING;
  const bool self_attention = info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && !info.cross;
  const bool reads_key = !self_attention && !c.keys_cached;
  const bool reads_value =
      !self_attention && (!c.keys_cached || info.kind == EA_LAYER_ADDITIVE) && !pooling;
  const Span inputs[3] = {
      {pooling ? nullptr : c.query, q * info.query_dim * es, "query"},
      {reads_key ? c.key : nullptr, kv * info.key_dim * es, "key"},
      {reads_value ? c.value : nullptr, kv * info.value_dim * es, "value"}};
  const Span out = {c.output, q * info.output_dim * es, "output"};
  const Span weights = {c.weights,
                        static_cast<size_t>(info.num_heads) * q * kv * (c.s8 ? 2 : 4),
                        "attn_weights"};
  const Span arena = {arena_base, arena_bytes, "the arena"};
  const size_t io_align = c.s8 ? 1 : 4;
  for (const Span& sp : inputs) {
    if (sp.p != nullptr && !aligned(sp.p, io_align)) {
      error_ << "layer '" << name << "': float " << sp.what << " must be 4-byte aligned";
      return Status::kInvalidArgument;
    }
  }
  if (!aligned(out.p, io_align)) {
    error_ << "layer '" << name << "': float output must be 4-byte aligned";
    return Status::kInvalidArgument;
  }
  if (weights.p != nullptr && !aligned(weights.p, c.s8 ? 2 : 4)) {
    error_ << "layer '" << name << "': attn_weights must be " << (c.s8 ? 2 : 4)
           << "-byte aligned";
    return Status::kInvalidArgument;
  }
  for (const Span* w : {&out, &weights}) {
    if (overlaps(*w, arena)) {
      error_ << "layer '" << name << "': " << w->what << " overlaps the arena";
      return Status::kInvalidArgument;
    }
    for (const Span& sp : inputs) {
      if (overlaps(*w, sp)) {
        error_ << "layer '" << name << "': " << w->what << " overlaps the " << sp.what
               << " input";
        return Status::kInvalidArgument;
      }
    }
  }
  if (overlaps(out, weights)) {
    error_ << "layer '" << name << "': output overlaps attn_weights";
    return Status::kInvalidArgument;
  }
  for (const Span& sp : inputs) {
    if (overlaps(sp, arena)) {
      error_ << "layer '" << name << "': the " << sp.what << " input overlaps the arena";
      return Status::kInvalidArgument;
    }
  }
  return Status::kOk;
}

}  // namespace

Status Interpreter::Init(const Model* model, void* arena, size_t arena_bytes, int max_q_len,
                         int max_kv_len) {
  model_ = nullptr;
  xnn_table_ = nullptr;
  xnn_bytes_ = 0;
  xnn_ops_ = 0;
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
  const size_t needed = model->ArenaBytesFor(max_q_len, max_kv_len);
  if (arena_bytes < needed) {
    error_ << "arena has " << static_cast<uint64_t>(arena_bytes) << " bytes, the model needs "
           << static_cast<uint64_t>(needed);
    return Status::kArenaTooSmall;
  }
  size_t offset = 0;
  for (int i = 0; i < model->num_layers(); ++i) {
    cache_offset_[i] = offset;
    cached_kv_len_[i] = -1;
    offset += static_cast<size_t>(model->PlanLayer(i, model->CappedQLen(i, max_q_len),
                                                   model->CappedKvLen(i, max_kv_len)).cache_bytes);
  }
  q_cap_ = max_q_len;
  kv_cap_ = max_kv_len;
  model_ = model;
  arena_ = static_cast<uint8_t*>(arena);
  arena_bytes_ = arena_bytes;
  scratch_ = arena_ + offset;
  plan_bytes_ = needed;
  return Status::kOk;
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
  const bool cacheable = (shape.kind == EA_LAYER_MULTI_HEAD_ATTENTION && shape.cross) ||
                         shape.kind == EA_LAYER_ADDITIVE;
  if (!cacheable) {
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
        {shape.kind == EA_LAYER_ADDITIVE ? nullptr : value,
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
  const fb::Model& model = *model_->flatbuffer();
  uint8_t* cache = arena_ + cache_offset_[layer];
  if (shape.kind == EA_LAYER_ADDITIVE) {
    run_linear(model, l->options_as_AdditiveAttention()->w_k(), s8, kv_len, key, cache,
               xnn_table_);
  } else {
    const auto* m = l->options_as_MultiHeadAttention();
    const size_t proj = static_cast<size_t>(max_kv) * m->embed_dim() * elem_size(s8);
    run_linear(model, m->k_proj(), s8, kv_len, key, cache, xnn_table_);
    run_linear(model, m->v_proj(), s8, kv_len, value != nullptr ? value : key,
               cache + static_cast<size_t>(align_up(proj)), xnn_table_);
  }
  cached_kv_len_[layer] = kv_len;
  cached_kv_valid_len_[layer] = kv_valid_len <= 0 ? kv_len : kv_valid_len;
  return Status::kOk;
}

Status Interpreter::Run(int layer, const RunArgs& args) {
  Status s = CheckLayer(layer);
  if (s != Status::kOk) return s;
  const fb::Layer* l = model_->layer(layer);
  const LayerShape shape = model_->ShapeOf(layer);
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
  c.cache = arena_ + cache_offset_[layer];
  c.scratch = scratch_;
  c.xnn = xnn_table_;

  const bool pooling = shape.kind == EA_LAYER_POOLING;
  const bool self_attention = shape.kind == EA_LAYER_MULTI_HEAD_ATTENTION && !shape.cross;
  if (pooling) c.q_len = 1;
  if (self_attention) {
    c.key = c.value = args.query;
    if (args.kv_len != 0 && args.kv_len != args.q_len) {
      error_ << "layer '" << name << "' is self-attention: kv_len must be 0 or equal q_len";
      return Status::kInvalidArgument;
    }
    c.kv_len = args.q_len;
  }
  if (args.use_cached_keys) {
    if (self_attention || pooling || shape.kind == EA_LAYER_LUONG) {
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
    if (shape.kind == EA_LAYER_ADDITIVE) c.value = args.value;  // values are not cached
  } else {
    c.kv_valid_len = args.kv_valid_len <= 0 ? c.kv_len : args.kv_valid_len;
  }

  // Cached cross-attention needs neither keys nor values; cached additive
  // attention still reads the values (they are not cached).
  const bool needs_value = !c.keys_cached || shape.kind == EA_LAYER_ADDITIVE;
  if (c.output == nullptr || (!pooling && c.query == nullptr) ||
      (!c.keys_cached && c.key == nullptr) || (needs_value && c.value == nullptr)) {
    error_ << "layer '" << name << "': a required input or output pointer is null"
           << (shape.kind == EA_LAYER_ADDITIVE && c.keys_cached ? " (additive needs value)" : "");
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

  s = check_buffers(c, layer_info(*l), arena_, arena_bytes_, error_);
  if (s != Status::kOk) return s;

  const fb::Model& model = *model_->flatbuffer();
  switch (shape.kind) {
    case EA_LAYER_MULTI_HEAD_ATTENTION:
      run_mha(model, c, max_kv);
      break;
    case EA_LAYER_ADDITIVE:
      run_additive(model, c);
      break;
    case EA_LAYER_LUONG:
      run_luong(model, c);
      break;
    case EA_LAYER_POOLING:
      run_pooling(model, c);
      break;
  }
  // A direct (uncached) run overwrote the cross-attention/additive cache region.
  if (!c.keys_cached && (shape.kind == EA_LAYER_ADDITIVE || (shape.kind == EA_LAYER_MULTI_HEAD_ATTENTION && shape.cross))) {
    cached_kv_len_[layer] = -1;
  }
  return Status::kOk;
}

}  // namespace edgeattn
