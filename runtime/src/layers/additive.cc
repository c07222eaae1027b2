// Additive (Bahdanau) attention: score_j = v . tanh(W_q q + W_k k_j + b),
// softmax, weighted sum of the values. The projected keys (W_k k + b) live in
// the persistent cache, so a decoder can project them once (CacheKeys) and
// run every step against them; the values are read from the caller each run.
// Coverage layers (coverage: true) add w_c c_j inside the tanh, c_j being the
// sum of key j's attention weights over the sequence's earlier steps; c lives
// in the cache region after the keys ([max_kv_len] int32 Q15 sums for int8,
// floats for float). Every query row of a run is one decoding step that reads
// c and then adds its weights to it. CacheKeys and BeginSequence zero c (a new
// sequence over the cached memory, continued by cached runs); a run that is
// given its keys zeroes it first (the run is a whole sequence).
#include "edgeattn/kernels/dispatch.h"
#include "layer_kind.h"

namespace edgeattn {
namespace {

namespace k = kernels;

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* a = l.options_as_AdditiveAttention();
  bool ok = c.Dim(a->query_dim(), "query_dim") && c.Dim(a->key_dim(), "key_dim") &&
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
  if (ok && a->coverage()) {
    ok = c.Tensor(a->w_c(), s8 ? fb::DType::S8 : fb::DType::F32, 1, a->attn_dim(), "w_c");
    if (ok && s8) {
      ok = c.Multiplier(a->coverage_multiplier(), a->coverage_shift(), "coverage");
      // A multiplier <= 1 keeps the term (|w_c c_j| < 2^31) and pre + term in int32.
      if (ok && a->coverage_shift() > 0) {
        c.Msg() << "coverage shift " << a->coverage_shift() << " must be <= 0 (multiplier <= 1)";
        ok = false;
      }
    }
  }
  return ok;
}

void shape(const void* options, LayerShape* s) {
  const auto* o = static_cast<const fb::AdditiveAttention*>(options);
  s->attn_dim = static_cast<int>(o->attn_dim());
  s->coverage = o->coverage();
}

// The layer's buffers at these lengths, the one description plan(), the
// runs and the coverage reset use. Scratch: W_q q [q][A], row scratch. Cache
// (laid out for max_kv_len by the runs): W_k k + b [kv][A], then with
// coverage c [kv] (int32 Q15 sums / floats, 4 bytes each).
struct Layout {
  uint64_t qp, row;              // in the scratch
  uint64_t keys, coverage;       // in the cache
  uint64_t coverage_bytes;       // 0 without coverage
  RowScratch row_scratch;        // inside `row`
  LayerPlan bytes;
};

Layout layout(const LayerShape& s, int q_len, int kv_len) {
  const uint64_t elem = s.dtype == EA_S8 ? 1 : 4;
  const uint64_t a = static_cast<uint64_t>(s.attn_dim);
  const uint64_t kv = static_cast<uint64_t>(kv_len);
  Regions scratch, cache;
  Layout l = {};
  l.qp = scratch.Add(static_cast<uint64_t>(q_len) * a * elem);
  l.row_scratch = planned_row_scratch(s, q_len, kv_len, false);
  l.row = scratch.Add(l.row_scratch.bytes);
  l.keys = cache.Add(kv * a * elem);
  if (s.coverage) {
    l.coverage = cache.Add(kv * 4);
    l.coverage_bytes = cache.bytes() - l.coverage;
  }
  l.bytes = LayerPlan{cache.bytes(), scratch.bytes(), 0};
  return l;
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* a = l.options_as_AdditiveAttention();
  info->query_dim = static_cast<int32_t>(a->query_dim());
  info->key_dim = static_cast<int32_t>(a->key_dim());
  info->value_dim = static_cast<int32_t>(a->value_dim());
  info->output_dim = info->value_dim;
  info->cross = 1;
  info->query_quant = quant_of(a->w_q()->input());
  info->key_quant = quant_of(a->w_k()->input());
  info->value_quant = quant_of(a->value_input());
  info->output_quant = quant_of(a->output());
  if (a->coverage()) {
    info->coverage = 1;
    info->coverage_bytes = static_cast<size_t>(
        layout(shape_with(l, shape), 1, static_cast<int>(l.max_kv_len())).coverage_bytes);
  }
}

LayerPlan plan(const LayerShape& s, int q_len, int kv_len) { return layout(s, q_len, kv_len).bytes; }

void run(const fb::Model& model, const Call& c, int max_kv_len) {
  const auto* a = c.layer->options_as_AdditiveAttention();
  const int ad = static_cast<int>(a->attn_dim());
  const LayerShape s = shape_with(*c.layer, shape);
  const Layout at = layout(s, c.q_len, c.kv_len);
  const Layout cached = layout(s, c.q_len, max_kv_len);  // the cache's own layout
  uint8_t* coverage = a->coverage() ? c.cache + cached.coverage : nullptr;
  if (coverage != nullptr && !c.keys_cached) {
    for (size_t i = 0; i < static_cast<size_t>(c.kv_len) * 4; ++i) coverage[i] = 0;
  }
  uint8_t* qp = c.scratch + at.qp;
  uint8_t* kp = c.cache + cached.keys;
  uint8_t* row = c.scratch + at.row;
  run_linear(model, c, a->w_q(), c.q_len, c.query, qp);
  if (!c.keys_cached) run_linear(model, c, a->w_k(), c.kv_len, c.key, kp);
  const int vd = static_cast<int>(a->value_dim());
  if (c.int8()) {
    k::QS8AdditiveArgs g = {};
    g.q_len = c.q_len; g.kv_len = c.kv_len; g.attn_dim = ad; g.v_dim = vd;
    g.qp = reinterpret_cast<const int8_t*>(qp); g.qp_stride = ad; g.qp_zp = zp_of(a->w_q()->output());
    g.kp = reinterpret_cast<const int8_t*>(kp); g.kp_stride = ad; g.kp_zp = zp_of(a->w_k()->output());
    g.pre_mult = c.range != nullptr ? c.range->pre_mult : a->pre_tanh()->multiplier()->Get(0);
    g.pre_shift = c.range != nullptr ? c.range->pre_shift : a->pre_tanh()->shift()->Get(0);
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
    g.scratch = reinterpret_cast<int32_t*>(row + at.row_scratch.scores);
    g.prob_scratch = reinterpret_cast<uint16_t*>(row + at.row_scratch.probs);
    if (coverage != nullptr) {
      g.coverage = reinterpret_cast<int32_t*>(coverage);
      g.cov_w = tensor_data<int8_t>(model, a->w_c());
      g.cov_mult = c.range != nullptr ? c.range->cov_mult : a->coverage_multiplier();
      g.cov_shift = c.range != nullptr ? c.range->cov_shift : a->coverage_shift();
    }
    k::qs8_additive_kernel()(g);
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
    g.scratch = reinterpret_cast<float*>(row + at.row_scratch.scores);
    if (coverage != nullptr) {
      g.coverage = reinterpret_cast<float*>(coverage);
      g.cov_w = tensor_data<float>(model, a->w_c());
    }
    k::f32_additive_kernel()(g);
  }
}

// A new sequence: c = 0 (int32 0 and float 0.0f are both zero bytes).
void reset_coverage(const fb::Layer& l, uint8_t* cache, int max_kv_len) {
  const auto* a = l.options_as_AdditiveAttention();
  if (!a->coverage()) return;
  const Layout cached = layout(shape_with(l, shape), 1, max_kv_len);
  uint8_t* c = cache + cached.coverage;
  for (size_t i = 0; i < static_cast<size_t>(max_kv_len) * 4; ++i) c[i] = 0;
}

void cache_keys(const fb::Model& model, const Call& c, int max_kv_len) {
  const Layout cached = layout(shape_with(*c.layer, shape), 1, max_kv_len);
  run_linear(model, c, c.layer->options_as_AdditiveAttention()->w_k(), c.kv_len, c.key, c.cache + cached.keys);
  reset_coverage(*c.layer, c.cache, max_kv_len);  // a new memory starts a new sequence
}

bool has_key_cache(const LayerShape&) { return true; }

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  const auto* a = l.options_as_AdditiveAttention();
  out[0] = a->w_q(); out[1] = a->w_k();
  return 2;
}

// Range mode: the pre-tanh multiplier (projected q + k to the tanh table's
// fixed input scale) times R; the coverage term, which adds a fixed real
// amount to a pre-tanh sum whose step is R times larger, divided by R.
bool scale_pre_tanh_and_coverage(const fb::Layer& l, uint32_t range_q16, RangeScale* rs) {
  const fb::AdditiveAttention* a = l.options_as_AdditiveAttention();
  rs->pre_mult = a->pre_tanh()->multiplier()->Get(0);
  rs->pre_shift = a->pre_tanh()->shift()->Get(0);
  bool fits = scale_multiplier(&rs->pre_mult, &rs->pre_shift, range_q16);
  if (a->coverage()) {
    rs->cov_mult = a->coverage_multiplier();
    rs->cov_shift = a->coverage_shift();
    fits = fits && divide_multiplier(&rs->cov_mult, &rs->cov_shift, range_q16);
  }
  return fits;
}

// Range mode (scores are tanh outputs times fixed v weights: R does not reach them).
const fb::SoftmaxQuant* range_softmax(const fb::Layer& l) { return l.options_as_AdditiveAttention()->softmax(); }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_ADDITIVE);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.cache_keys = cache_keys;
  m.has_key_cache = has_key_cache;
  m.cached_run_reads_values = true;
  m.linears = linears;
  m.reset_coverage = reset_coverage;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_additive = module();
const RangeRule range_rule_additive = {range_softmax, 0, scale_pre_tanh_and_coverage};
}  // namespace layers

}  // namespace edgeattn
