// Multi-head attention (self or cross; causal or key-padding masks): project
// Q (and K, V unless cached), attend per head into the context buffer,
// project the context to the output. Cross-attention keeps the K and V
// projections in its persistent cache region, laid out for max_kv_len; so
// does causal self-attention with kv_cache, which then decodes one token per
// step: the new row's K and V are appended to the cache and its query attends
// over every cached position (the same integers as the last row of a full
// causal run over that prefix: a row of a causal run never sees later keys).
#include <cstring>

#include "edgeattn/kernels/attention_tile.h"
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {
namespace {

// K/V heads: num_kv_heads, 0 meaning num_heads.
uint32_t kv_heads(const fb::MultiHeadAttention& m) {
  return m.num_kv_heads() != 0 ? m.num_kv_heads() : m.num_heads();
}

}  // namespace

namespace {

bool verify_table(Checker& c, const fb::MultiHeadAttention* m, bool s8) {
  if (m == nullptr) {
    c.Msg() << "missing self_attn";
    return false;
  }
  bool ok = c.Dim(m->embed_dim(), "embed_dim") && c.Dim(m->kdim(), "kdim") &&
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
  if (ok && (kv_heads(*m) > m->num_heads() || m->num_heads() % kv_heads(*m) != 0)) {
    c.Msg() << "num_kv_heads " << kv_heads(*m) << " does not divide num_heads " << m->num_heads();
    ok = false;
  }
  if (ok && m->kv_cache() && (m->cross() || !m->causal())) {
    c.Msg() << "kv_cache needs causal self-attention";
    ok = false;
  }
  const uint32_t e = m->embed_dim();
  const uint32_t kv = ok ? kv_heads(*m) * m->head_dim() : 0;  // <= embed_dim once checked
  return ok && c.Linear(m->q_proj(), s8, e, e, "q_proj") &&
         c.Linear(m->k_proj(), s8, m->kdim(), kv, "k_proj") &&
         c.Linear(m->v_proj(), s8, m->vdim(), kv, "v_proj") &&
         c.Linear(m->out_proj(), s8, e, e, "out_proj") && (!s8 || c.Softmax(m->softmax()));
}

}  // namespace

bool verify_mha(Checker& c, const fb::MultiHeadAttention* m, bool s8) {
  if (!verify_table(c, m, s8)) return false;
  if (m->output16()) {
    c.Msg() << "output16 (an int16 output) is for mha layers, not a block's attention";
    return false;
  }
  return true;
}

void mha_shape(const fb::MultiHeadAttention& mha, LayerShape* s) {
  const auto* m = &mha;
  s->embed_dim = static_cast<int>(m->embed_dim());
  s->cross = m->cross();
  s->kv_cache = m->kv_cache();
  s->kv_width = static_cast<int>(kv_heads(*m) * m->head_dim());
  s->head_dim = static_cast<int>(m->head_dim());
  s->v_dim = s->head_dim;
  s->output16 = m->output16();
}

namespace {

// output16 (contract 5c-out): S8 only, out_proj's output int16 with zero
// point 0. Its term is fixed (A = 0, n = kResidual5cOutShift), and
// c.Linear checked out_proj's requant as for any projection.
bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* m = l.options_as_MultiHeadAttention();
  if (m != nullptr && m->output16() && !s8) {
    c.Msg() << "output16 (an int16 output) is set on a float (F32) layer: it is for int8 (S8) models only";
    return false;
  }
  if (!verify_table(c, m, s8)) return false;
  return !m->output16() || (c.Stream16() && c.Quant16(m->out_proj()->output(), "output16's output (out_proj)"));
}

void shape(const void* options, LayerShape* s) { mha_shape(*static_cast<const fb::MultiHeadAttention*>(options), s); }

LayerPlan plan(const LayerShape& s, int q_len, int kv_len);

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* m = l.options_as_MultiHeadAttention();
  info->query_dim = static_cast<int32_t>(m->embed_dim());
  info->key_dim = static_cast<int32_t>(m->kdim());
  info->value_dim = static_cast<int32_t>(m->vdim());
  info->output_dim = static_cast<int32_t>(m->embed_dim());
  info->num_heads = static_cast<int32_t>(m->num_heads());
  info->num_kv_heads = static_cast<int32_t>(kv_heads(*m));
  info->cross = m->cross();
  info->causal = m->causal();
  info->query_quant = quant_of(m->q_proj()->input());
  info->key_quant = quant_of(m->k_proj()->input());
  info->value_quant = quant_of(m->v_proj()->input());
  info->output_quant = quant_of(m->out_proj()->output());
  if (l.dtype() == fb::DType::S8 && m->output16()) info->output_dtype = EA_S16;
  if (m->kv_cache()) {
    LayerShape s = {};
    s.dtype = info->dtype;
    s.tile_scratch = l.tile_scratch();
    shape(m, &s);
    info->kv_cache = 1;
    info->kv_cache_bytes = static_cast<size_t>(
        plan(s, static_cast<int>(l.max_q_len()), static_cast<int>(l.max_kv_len())).cache_bytes);
  }
}

// The layer's buffers at these lengths, the one description plan() and the
// runs use. Scratch: Q [q][E], context [q][E], (self: K, V [kv][KV]), row
// scratch, (output16) out_proj's zero residual row [E] int16. Cache
// (cross or kv_cache): K, V [kv][KV], KV = num_kv_heads * head_dim (a run
// lays the cache out for max_kv_len).
struct Layout {
  uint64_t q, ctx, row, zero;  // in the scratch
  bool kv_in_cache;
  uint64_t k, v;         // in the cache if kv_in_cache, else in the scratch
  LayerPlan bytes;
};

Layout layout(const LayerShape& s, int q_len, int kv_len) {
  const uint64_t elem = s.dtype == EA_S8 ? 1 : 4;
  const uint64_t q = static_cast<uint64_t>(q_len), kv = static_cast<uint64_t>(kv_len);
  const uint64_t row = q * static_cast<uint64_t>(s.embed_dim) * elem;
  const uint64_t kv_proj = kv * static_cast<uint64_t>(s.kv_width) * elem;
  Regions scratch, cache;
  Layout l = {};
  l.q = scratch.Add(row);
  l.ctx = scratch.Add(row);
  l.kv_in_cache = s.cross || s.kv_cache;
  Regions& kv_region = l.kv_in_cache ? cache : scratch;
  l.k = kv_region.Add(kv_proj);
  l.v = kv_region.Add(kv_proj);
  const uint64_t row_bytes = planned_row_scratch(s, q_len, kv_len, true).bytes;
  l.row = scratch.Add(row_bytes);
  l.zero = s.output16 ? scratch.Add(static_cast<uint64_t>(s.embed_dim) * 2) : 0;
  // Pool workers 1.. run their (head, row range) tasks in a row scratch of their own.
  l.bytes = LayerPlan{cache.bytes(), scratch.bytes(), align_up(row_bytes)};
  return l;
}

LayerPlan plan(const LayerShape& s, int q_len, int kv_len) { return layout(s, q_len, kv_len).bytes; }

}  // namespace

LayerPlan plan_mha(const LayerShape& s, int q_len, int kv_len) { return plan(s, q_len, kv_len); }

namespace {

// output16's residual (contract 5c-out): its zero row, cleared here since
// the scratch is shared, read at stride 0 for every output row.
const Residual* zero_residual(const fb::MultiHeadAttention* m, uint8_t* row, Residual* r) {
  std::memset(row, 0, static_cast<size_t>(m->embed_dim()) * sizeof(int16_t));
  *r = Residual{nullptr, row, true, true};
  return r;
}

// Head h's view of q [c.q_len][E], kp, vp [c.kv_len][KV] and ctx.
HeadView head_view(const Call& c, const fb::MultiHeadAttention* m, const uint8_t* q, const uint8_t* kp,
                   const uint8_t* vp, uint8_t* ctx, int h) {
  const int e = static_cast<int>(m->embed_dim());
  const int hd = static_cast<int>(m->head_dim());
  const int kv_width = static_cast<int>(kv_heads(*m)) * hd;
  const int group = static_cast<int>(m->num_heads() / kv_heads(*m));  // query heads per K/V head
  const size_t es = elem_size(c.int8());
  const size_t col = static_cast<size_t>(h) * hd * es;
  const size_t kv_col = static_cast<size_t>(h / group) * hd * es;
  HeadView v = {};
  v.q = q + col; v.q_stride = e; v.q_zp = zp_of(m->q_proj()->output());
  v.k = kp + kv_col; v.k_stride = kv_width; v.k_zp = zp_of(m->k_proj()->output());
  v.v = vp + kv_col; v.v_stride = kv_width; v.v_zp = zp_of(m->v_proj()->output());
  v.out = ctx + col; v.out_stride = e; v.out_zp = zp_of(m->out_proj()->input());
  v.head_dim = hd; v.v_dim = hd;
  if (c.weights != nullptr) {
    const size_t per_head = static_cast<size_t>(c.q_len) * c.kv_len * (c.int8() ? 2 : 4);
    v.weights = static_cast<uint8_t*>(c.weights) + static_cast<size_t>(h) * per_head;
  }
  return v;
}

// Every head of q [c.q_len][E] against kp, vp [c.kv_len][E] into ctx.
void attend_heads(const Call& c, const fb::MultiHeadAttention* m, const uint8_t* q,
                  const uint8_t* kp, const uint8_t* vp, uint8_t* ctx, uint8_t* row_scratch) {
  const int e = static_cast<int>(m->embed_dim());
  const int heads = static_cast<int>(m->num_heads());
  // (head, query-row range) items (kernels::head_split), head-major.
  const kernels::HeadSplit split = kernels::head_split(heads, c.q_len, pool_workers(c.pool));
  const int n = split.items();
  const int tasks = task_count(c.pool, kernels::attention_work(c.q_len, c.kv_len, e), n);
  parallel_ranges(c.pool, n, tasks, [&](int begin, int end, int worker) {
    uint8_t* scratch = worker_row_scratch(c, row_scratch, worker);
    kernels::for_each_head_range(split, c.q_len, begin, end, [&](int h, int row0, int row1) {
      run_head(c, head_view(c, m, q, kp, vp, ctx, h), row0, row1 - row0, m->scale(), m->softmax(), m->causal(),
               scratch);
    });
  });
}

// The attention core as a chain step (run_chain) ahead of the out
// projection: a task runs every head over its query rows (the out
// projection of a row needs all of its heads), in row tiles of
// kernels::kQs8AttnTileRows. Each task packs every head's keys and values
// (a head split packs each once), so run_mha chains it only up to
// kernels::kMaxChainedCoreWork; alone, the head split.
class AttendRowsStep {
 public:
  AttendRowsStep(const Call& c, const fb::MultiHeadAttention* m, const MhaBuffers& b)
      : work_per_row(kernels::attention_work(1, c.kv_len, static_cast<int>(m->embed_dim()))), c_(c), m_(m), b_(b) {}
  uint64_t work_per_row;
  void Prepare() {}
  void Rows(int r0, int r1, int worker) const {
    uint8_t* scratch = worker_row_scratch(c_, b_.row, worker);
    for (int h = 0; h < static_cast<int>(m_->num_heads()); ++h) {
      run_head(c_, head_view(c_, m_, b_.q, b_.k, b_.v, b_.ctx, h), r0, r1 - r0, m_->scale(), m_->softmax(),
               m_->causal(), scratch);
    }
  }
  void Alone(int) const { attend_heads(c_, m_, b_.q, b_.k, b_.v, b_.ctx, b_.row); }

 private:
  const Call& c_;
  const fb::MultiHeadAttention* m_;
  const MhaBuffers& b_;
};

}  // namespace

MhaBuffers mha_buffers(const fb::MultiHeadAttention* m, const Call& c, int max_kv_len) {
  LayerShape s = {};
  s.dtype = c.int8() ? EA_S8 : EA_F32;
  s.tile_scratch = c.layer->tile_scratch();
  mha_shape(*m, &s);
  const Layout at = layout(s, c.q_len, c.kv_len);
  MhaBuffers b = {c.scratch + at.q, c.scratch + at.ctx, c.scratch + at.k, c.scratch + at.v, c.scratch + at.row,
                  s.output16 ? c.scratch + at.zero : nullptr};
  if (at.kv_in_cache) {  // K, V live in the persistent cache, laid out for max_kv_len
    const Layout cached = layout(s, c.q_len, max_kv_len);
    b.k = c.cache + cached.k;
    b.v = c.cache + cached.v;
  }
  return b;
}

void mha_project_keys(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, const MhaBuffers& b) {
  if (c.keys_cached) return;
  if (c.key == c.value) {  // one pool call for both
    const fb::Linear* ls[2] = {m->k_proj(), m->v_proj()};
    void* ys[2] = {b.k, b.v};
    run_linears_same_input(model, c, ls, 2, c.kv_len, c.key, ys);
  } else {
    run_linear(model, c, m->k_proj(), c.kv_len, c.key, b.k);
    run_linear(model, c, m->v_proj(), c.kv_len, c.value, b.v);
  }
}

LinearStep mha_qkv_step(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, const void* x,
                        const MhaBuffers& b) {
  const fb::Linear* ls[3] = {m->q_proj(), m->k_proj(), m->v_proj()};
  void* ys[3] = {b.q, b.k, b.v};
  return LinearStep(model, c, ls, 3, x, ys);
}

void mha_attend(const fb::MultiHeadAttention* m, const Call& c, const MhaBuffers& b) {
  attend_heads(c, m, b.q, b.k, b.v, b.ctx, b.row);
}

// One run of the MHA table m with the buffers of its own layout (a block's
// attention passes its sub-table, the block's Call and its residual).
void run_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len,
             const Residual* r) {
  const MhaBuffers b = mha_buffers(m, c, max_kv_len);
  Residual zero = {};
  if (b.zero != nullptr) r = zero_residual(m, b.zero, &zero);
  if (!c.keys_cached && c.key == c.query && c.value == c.query && c.kv_len == c.q_len) {
    // Self-attention: Q, K and V of the same rows in one pool call.
    const fb::Linear* ls[3] = {m->q_proj(), m->k_proj(), m->v_proj()};
    void* ys[3] = {b.q, b.k, b.v};
    run_linears_same_input(model, c, ls, 3, c.q_len, c.query, ys);
  } else {
    run_linear(model, c, m->q_proj(), c.q_len, c.query, b.q);
    if (!c.keys_cached) {
      run_linear(model, c, m->k_proj(), c.kv_len, c.key, b.k);
      run_linear(model, c, m->v_proj(), c.kv_len, c.value, b.v);
    }
  }
  const uint64_t e = m->embed_dim();
  const uint64_t core_out = kernels::attention_work(c.q_len, c.kv_len, static_cast<int>(e)) + static_cast<uint64_t>(c.q_len) * e * e;
  if (!m->causal() && core_out <= kernels::kMaxChainedCoreWork) {
    // The core by query rows and the out projection of those rows in one
    // pool call (causal rows differ in work: there the head split balances;
    // larger layers: kMaxChainedCoreWork).
    run_chain(c, c.q_len, kernels::kQs8AttnTileRows, AttendRowsStep(c, m, b),
              LinearStep(model, c, m->out_proj(), b.ctx, c.output, r));
  } else {
    mha_attend(m, c, b);
    run_linear(model, c, m->out_proj(), c.q_len, b.ctx, c.output, r);
  }
}

// The K and V projections of c.key / c.value (c.kv_len rows) into the cache,
// laid out for max_kv_len (CacheKeys of a cross-attention table).
void cache_keys_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len) {
  LayerShape s = {};
  s.dtype = c.int8() ? EA_S8 : EA_F32;
  s.tile_scratch = c.layer->tile_scratch();
  mha_shape(*m, &s);
  const Layout cached = layout(s, c.q_len, max_kv_len);
  run_linear(model, c, m->k_proj(), c.kv_len, c.key, c.cache + cached.k);
  run_linear(model, c, m->v_proj(), c.kv_len, c.value, c.cache + cached.v);
}

// One decoding step: scratch Q [1][E] and context [1][E] (the plan's rows for
// q_len >= 1), K and V of the new row written at `position` of the cache.
void step_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len,
              int position, const Residual* r) {
  const size_t kv_row = static_cast<size_t>(kv_heads(*m) * m->head_dim()) * elem_size(c.int8());
  LayerShape s = {};
  s.dtype = c.int8() ? EA_S8 : EA_F32;
  s.tile_scratch = c.layer->tile_scratch();
  mha_shape(*m, &s);
  const Layout at = layout(s, 1, max_kv_len);  // one query row; K, V in the cache
  uint8_t* q = c.scratch + at.q;
  uint8_t* ctx = c.scratch + at.ctx;
  uint8_t* row_scratch = c.scratch + at.row;
  uint8_t* kp = c.cache + at.k;
  uint8_t* vp = c.cache + at.v;
  Residual zero = {};
  if (s.output16) r = zero_residual(m, c.scratch + at.zero, &zero);
  run_linear(model, c, m->q_proj(), 1, c.query, q);
  run_linear(model, c, m->k_proj(), 1, c.query, kp + static_cast<size_t>(position) * kv_row);
  run_linear(model, c, m->v_proj(), 1, c.query, vp + static_cast<size_t>(position) * kv_row);
  Call one = c;
  one.q_len = 1;
  one.kv_len = position + 1;
  one.kv_valid_len = position + 1;
  attend_heads(one, m, q, kp, vp, ctx, row_scratch);
  run_linear(model, c, m->out_proj(), 1, ctx, c.output, r);
}

namespace {

void run(const fb::Model& model, const Call& c, int max_kv_len) {
  run_mha(model, c.layer->options_as_MultiHeadAttention(), c, max_kv_len);
}

void cache_keys(const fb::Model& model, const Call& c, int max_kv_len) {
  cache_keys_mha(model, c.layer->options_as_MultiHeadAttention(), c, max_kv_len);
}

bool has_key_cache(const LayerShape& s) { return s.cross; }

bool has_kv_cache(const LayerShape& s) { return s.kv_cache; }

void step(const fb::Model& model, const Call& c, int max_kv_len, int position) {
  step_mha(model, c.layer->options_as_MultiHeadAttention(), c, max_kv_len, position);
}

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  const auto* m = l.options_as_MultiHeadAttention();
  out[0] = m->q_proj(); out[1] = m->k_proj(); out[2] = m->v_proj(); out[3] = m->out_proj();
  return 4;
}

// Range mode (q and k both scale with R).
const fb::SoftmaxQuant* range_softmax(const fb::Layer& l) { return l.options_as_MultiHeadAttention()->softmax(); }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_MULTI_HEAD_ATTENTION);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.cache_keys = cache_keys;
  m.has_key_cache = has_key_cache;
  m.linears = linears;
  m.has_kv_cache = has_kv_cache;
  m.step = step;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_mha = module();
const RangeRule range_rule_mha = {range_softmax, 2, nullptr};
}  // namespace layers

}  // namespace edgeattn
