// Float rows into an int8 model, its first layer: a model fed float features
// (audio frames, image patches) takes them as they are, and the first int8
// layer reads the bytes this one writes at its input's quantization.
//
// Numerics. int8: q = clamp(nearbyint(x / s) + zp, -128, 127), x / s one
// IEEE single-precision division and nearbyint rounding to the nearest even
// integer (the default rounding mode), so every target gives the same bytes;
// values beyond the calibrated range saturate like any int8 tensor. This is
// float arithmetic at the model's edge only: the integer-only contract holds
// from this layer's output on. The interpreter refuses NaN and infinite
// inputs before run() (a NaN has no byte). f32: a copy. No arena.
#include <cmath>
#include <cstring>

#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_Quantize();
  if (!c.Dim(p->dim(), "dim")) return false;
  return !s8 || c.Quant(p->output(), "quantize output");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Quantize*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_Quantize();
  row_layer_info(static_cast<int>(p->dim()), static_cast<int>(p->dim()), nullptr, p->output(), info);
  info->input_dtype = EA_F32;  // float rows in, whatever the model's dtype
}

LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model&, const Call& c, int) {
  const auto* p = c.layer->options_as_Quantize();
  const size_t n = static_cast<size_t>(c.q_len) * p->dim();
  const float* x = static_cast<const float*>(c.query);
  if (!c.int8()) {
    std::memcpy(c.output, x, n * sizeof(float));
    return;
  }
  const float scale = p->output()->scale();
  const int32_t zp = p->output()->zero_point();
  int8_t* y = static_cast<int8_t*>(c.output);
  for (size_t i = 0; i < n; ++i) {
    // Clamped in float first: the integer conversion below is then defined.
    const float r = std::fmin(std::fmax(std::nearbyint(x[i] / scale), -256.0f), 256.0f);
    const int32_t q = static_cast<int32_t>(r) + zp;
    y[i] = static_cast<int8_t>(q < -128 ? -128 : q > 127 ? 127 : q);
  }
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_QUANTIZE);
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
const LayerKindModule kind_quantize = module();
}  // namespace layers

}  // namespace edgeattn
