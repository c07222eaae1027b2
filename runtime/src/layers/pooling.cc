// Attention pooling: a learned query attends over the caller's sequence
// (keys = values = the input): one output row per call.
#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_AttentionPooling();
  bool ok = c.Dim(p->dim(), "dim") &&
            c.Tensor(p->query(), s8 ? fb::DType::S8 : fb::DType::F32, 1, p->dim(), "query");
  if (ok && s8) {
    ok = c.Quant(p->input(), "input") && c.Quant(p->output(), "output") && c.Softmax(p->softmax());
  }
  return ok;
}

void shape(const void* options, LayerShape* s) {
  const auto* o = static_cast<const fb::AttentionPooling*>(options);
  s->head_dim = static_cast<int>(o->dim());
  s->v_dim = s->head_dim;
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_AttentionPooling();
  info->key_dim = static_cast<int32_t>(p->dim());
  info->value_dim = info->key_dim;
  info->output_dim = info->key_dim;
  info->cross = 1;
  info->max_q_len = 1;
  info->key_quant = quant_of(p->input());
  info->value_quant = info->key_quant;
  info->output_quant = quant_of(p->output());
}

// Scratch: row scratch (run_head lays it out), nothing else.
LayerPlan plan(const LayerShape& s, int q_len, int kv_len) {
  return LayerPlan{0, planned_row_scratch(s, q_len, kv_len, true).bytes, 0};
}

void run(const fb::Model& model, const Call& c, int /*max_kv_len*/) {
  const auto* p = c.layer->options_as_AttentionPooling();
  const int d = static_cast<int>(p->dim());
  HeadView v = {};
  v.q = c.int8() ? static_cast<const void*>(tensor_data<int8_t>(model, p->query()))
             : static_cast<const void*>(tensor_data<float>(model, p->query()));
  v.q_stride = d; v.q_zp = 0;  // the learned query is symmetric
  v.k = c.key; v.k_stride = d; v.k_zp = zp_of(p->input());
  v.v = c.key; v.v_stride = d; v.v_zp = zp_of(p->input());
  v.out = c.output; v.out_stride = d; v.out_zp = zp_of(p->output());
  v.head_dim = d; v.v_dim = d;
  v.weights = c.weights;
  run_head(c, v, 0, c.q_len, 1.0f, p->softmax(), false, c.scratch);
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// Range mode (its query is a learned weight: the scores scale with R once).
const fb::SoftmaxQuant* range_softmax(const fb::Layer& l) { return l.options_as_AttentionPooling()->softmax(); }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_POOLING);
  m.learned_query = true;
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
const LayerKindModule kind_pooling = module();
const RangeRule range_rule_pooling = {range_softmax, 1, nullptr};
}  // namespace layers

}  // namespace edgeattn
