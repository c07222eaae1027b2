// Two sequences added row by row, y = x + r (the residual add of a block
// form the fused blocks lack: Torch-KWT's post-norm x + LayerNorm(f(x)),
// whose norm sits on the sub-layer's output, before the add). Its query rows
// are x, its keys the residual rows r, as many (a graph step's query and
// memory; ea_layer_info.cross = 1). int8: requant.h's add contract,
// y = sat8((A (x - zp_x) + B (r - zp_r) + 2^(n-1) + zp_y 2^n) >> n), a plain
// scalar loop (two multiply-adds per element, the same integers everywhere).
// float: one float add per element.
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_Add();
  if (!c.Dim(p->dim(), "dim")) return false;
  if (l.max_kv_len() != l.max_q_len()) {
    c.Msg() << "max_kv_len " << l.max_kv_len() << " (residual rows) differs from max_q_len " << l.max_q_len()
            << ": an add pairs them one to one";
    return false;
  }
  if (s8 && p->residual16()) {
    c.Msg() << "an add layer with an int16 residual (residual16): that is a branch-norm block's, not this kind's";
    return false;
  }
  return !s8 || verify_add_table(c, p, "add");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Add*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_Add();
  const int d = static_cast<int>(p->dim());
  row_layer_info(d, d, p->input(), p->output(), info);
  info->cross = 1;  // the residual rows come in as its keys (and values)
  info->key_quant = quant_of(p->residual());
  info->value_quant = info->key_quant;
}

// No buffers: each output element is made from one element of each input.
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model& model, const Call& c, int) {
  (void)model;
  const auto* p = c.layer->options_as_Add();  // Run checked kv_len == q_len
  AddStep(c, p, static_cast<int>(p->dim()), c.query, c.key, c.output).Alone(c.q_len);
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_ADD);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  m.keys_pair_rows = true;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_add = module();
}  // namespace layers

}  // namespace edgeattn
