// Luong attention: dot, general (bilinear, score = q^T W k: W^T q is
// projected first) and scaled dot scores over the caller's keys, softmax,
// weighted sum of the values. No projections of keys or values, no cache.
#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* g = l.options_as_LuongAttention();
  bool ok = c.Dim(g->query_dim(), "query_dim") && c.Dim(g->key_dim(), "key_dim") &&
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
  return ok;
}

void shape(const void* options, LayerShape* s) {
  const auto* g = static_cast<const fb::LuongAttention*>(options);
  s->key_dim = static_cast<int>(g->key_dim());
  s->projects_query = g->score() == fb::LuongScore::General;
  s->head_dim = s->key_dim;
  s->v_dim = static_cast<int>(g->value_dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* g = l.options_as_LuongAttention();
  info->query_dim = static_cast<int32_t>(g->query_dim());
  info->key_dim = static_cast<int32_t>(g->key_dim());
  info->value_dim = static_cast<int32_t>(g->value_dim());
  info->output_dim = info->value_dim;
  info->cross = 1;
  info->query_quant = quant_of(g->query_input());
  info->key_quant = quant_of(g->key_input());
  info->value_quant = quant_of(g->value_input());
  info->output_quant = quant_of(g->output());
}

// The layer's buffers at these lengths, the one description plan() and
// run() use. Scratch: (general: W^T q [q][key_dim]), row scratch.
struct Layout {
  uint64_t qp, row;  // qp only when the query is projected
  LayerPlan bytes;
};

Layout layout(const LayerShape& s, int q_len, int kv_len) {
  const uint64_t elem = s.dtype == EA_S8 ? 1 : 4;
  Regions scratch;
  Layout l = {};
  if (s.projects_query) {
    l.qp = scratch.Add(static_cast<uint64_t>(q_len) * static_cast<uint64_t>(s.key_dim) * elem);
  }
  l.row = scratch.Add(planned_row_scratch(s, q_len, kv_len, true).bytes);
  l.bytes = LayerPlan{0, scratch.bytes(), 0};
  return l;
}

LayerPlan plan(const LayerShape& s, int q_len, int kv_len) { return layout(s, q_len, kv_len).bytes; }

void run(const fb::Model& model, const Call& c, int /*max_kv_len*/) {
  const auto* g = c.layer->options_as_LuongAttention();
  const int qd = static_cast<int>(g->query_dim());
  const int kd = static_cast<int>(g->key_dim());
  const int vd = static_cast<int>(g->value_dim());
  const Layout at = layout(shape_with(*c.layer, shape), c.q_len, c.kv_len);
  HeadView v = {};
  if (g->score() == fb::LuongScore::General) {
    uint8_t* qp = c.scratch + at.qp;
    run_linear(model, c, g->w(), c.q_len, c.query, qp);
    v.q = qp; v.q_zp = c.int8() ? zp_of(g->w()->output()) : 0;
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
  run_head(c, v, 0, c.q_len, g->scale(), g->softmax(), false, c.scratch + at.row);
}

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  const fb::Linear* w = l.options_as_LuongAttention()->w();
  if (w == nullptr) return 0;
  out[0] = w;
  return 1;
}

// Range mode (q and k both scale with R).
const fb::SoftmaxQuant* range_softmax(const fb::Layer& l) { return l.options_as_LuongAttention()->softmax(); }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_LUONG);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_luong = module();
const RangeRule range_rule_luong = {range_softmax, 2, nullptr};
}  // namespace layers

}  // namespace edgeattn
