// An int8 model's rows out as floats, its last layer (logits for a host or a
// float post-processing step).
//
// Numerics. int8: y = s * (q - zp), (q - zp) exact in single precision and
// one IEEE multiplication, so every target gives the same floats. f32: a
// copy. No arena.
#include <cstring>

#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_Dequantize();
  if (!c.Dim(p->dim(), "dim")) return false;
  return !s8 || c.Quant(p->input(), "dequantize input");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Dequantize*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_Dequantize();
  row_layer_info(static_cast<int>(p->dim()), static_cast<int>(p->dim()), p->input(), nullptr, info);
  info->output_dtype = EA_F32;  // float rows out, whatever the model's dtype
}

LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model&, const Call& c, int) {
  const auto* p = c.layer->options_as_Dequantize();
  const size_t n = static_cast<size_t>(c.q_len) * p->dim();
  float* y = static_cast<float*>(c.output);
  if (!c.int8()) {
    std::memcpy(y, c.query, n * sizeof(float));
    return;
  }
  const float scale = p->input()->scale();
  const int32_t zp = p->input()->zero_point();
  const int8_t* x = static_cast<const int8_t*>(c.query);
  for (size_t i = 0; i < n; ++i) y[i] = scale * static_cast<float>(x[i] - zp);
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_DEQUANTIZE);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  m.rows_independent = true;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_dequantize = module();
}  // namespace layers

}  // namespace edgeattn
