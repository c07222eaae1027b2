// A standalone projection y = W x + b over each row (nn.Linear, e.g. a
// model's output head): one output row per input row, no scratch. int8: the
// packed K4N16 weights with per-channel requantization, the same qs8_linear
// kernels as every projection inside the other kinds; run_linear() tiles it
// on the caller's pool. output16 (issue 37, the residual stream's 16-bit
// entry): int16 rows through the qs8_linear_res16 kernels, contract 5c-out
// (a zero residual row in the scratch, read at stride 0).
#include <cstring>

#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_Linear();
  return c.Dim(p->in_features(), "in_features") && c.Dim(p->out_features(), "out_features") &&
         c.Linear(p, s8, p->in_features(), p->out_features(), "linear", true);
}

void shape(const void* options, LayerShape* s) {
  const auto* o = static_cast<const fb::Linear*>(options);
  s->embed_dim = static_cast<int>(o->in_features());
  s->out_dim = static_cast<int>(o->out_features());
  s->output16 = s->dtype == EA_S8 && o->output16();
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_Linear();
  row_layer_info(static_cast<int>(p->in_features()), static_cast<int>(p->out_features()), p->input(), p->output(),
                 info);
  if (l.dtype() == fb::DType::S8 && p->output16()) info->output_dtype = EA_S16;  // the stream's entry
}

// Each row is projected from the caller's input to its output; output16
// needs one int16 row of zeros (5c-out's residual) in the scratch.
LayerPlan plan(const LayerShape& s, int, int) {
  return LayerPlan{0, s.output16 ? align_up(static_cast<uint64_t>(s.out_dim) * sizeof(int16_t)) : 0, 0};
}

void run(const fb::Model& model, const Call& c, int) {
  const auto* p = c.layer->options_as_Linear();
  if (kWithInt16Stream && c.int8() && p->output16()) {
    // Cleared on every run: the scratch is shared with the other layers.
    std::memset(c.scratch, 0, static_cast<size_t>(p->out_features()) * sizeof(int16_t));
    const Residual zero = {nullptr, c.scratch, true, true};
    run_linear(model, c, p, c.q_len, c.query, c.output, &zero);
    return;
  }
  run_linear(model, c, p, c.q_len, c.query, c.output);
}

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  out[0] = l.options_as_Linear();
  return 1;
}

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_LINEAR);
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
const LayerKindModule kind_linear = module();
}  // namespace layers

}  // namespace edgeattn
