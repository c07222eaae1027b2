// The linear kind (nn.Linear over each row, e.g. a model's output head): spec
// fields, the float64 forward, calibration points ("query" = the input rows,
// "output"), int8 quantization (symmetric per-channel weights, one requant
// per output channel, as every projection) and its Linear table. With
// output16 (the int16 residual stream's entry, a positions layer reading it)
// the output is int16 at the stream's scale for "output", contract 5c-out.
#include <algorithm>
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/kinds/linear.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {
namespace {
namespace linear_module {

// The widths from the spec, or from the weight's shape [out, in] when the
// spec leaves them out; the weight is then fetched (and checked) at them.
// A patch projection's Conv2d weight [out, C, kh, kw] (timm's
// patch_embed.proj) or a Conv1d's [out, C, k] is read as [out, C*kh*kw]:
// the same floats, for patches flattened channel, row, column.
void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  LinearParams& P = L->params.emplace<LinearParams>();
  const std::string p = f.string("prefix", "");
  const std::string weight = tensor_or(f, "weight", p, "weight");
  const std::string bias = tensor_or(f, "bias", p, "bias");
  int out = f.has("out_features") ? f.integer("out_features") : 0;
  int in = f.has("in_features") ? f.integer("in_features") : 0;
  if (out == 0 || in == 0) {
    auto it = w.map.find(weight);
    if (it == w.map.end()) w.missing(weight);
    const std::vector<size_t>& shape = it->second.shape;
    if (shape.size() < 2 || shape.size() > 4) {
      fail(w.where(), ": tensor '", weight, "' has shape ", shape_string(shape),
           ", expected [out_features, in_features] (or a convolution's [out, C, kh, kw])");
    }
    size_t inner = 1;
    for (size_t d = 1; d < shape.size(); ++d) inner *= shape[d];
    if (out == 0) out = static_cast<int>(std::min<size_t>(shape[0], 1u << 30));
    if (in == 0) in = static_cast<int>(std::min<size_t>(inner, 1u << 30));
  }
  if (in < 1 || in > 16384 || out < 1 || out > 16384) {
    fail(f.where, ": in_features ", in, " and out_features ", out, " must be in 1..16384");
  }
  // A bias the spec names must exist; the default name is optional (nn.Linear(bias=False)).
  const bool bias_named = !f.tensor_name("bias").empty();
  P.linear = w.linear(weight, bias, out, in, "[out_features, in_features]", bias_named, /*conv_patch=*/true);
  L->query_dim = L->key_dim = L->value_dim = in;
  L->output_dim = out;
  L->max_kv_len = L->max_q_len;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<LinearParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  record(ranges, "query", in.query, in.q_len, L.query_dim, L.query_dim, in.q_len);
  linear(L.as<LinearParams>().linear, in.query, in.q_len, out);
  record(ranges, "output", out, in.q_len, L.output_dim, L.output_dim, in.q_len);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const FloatLinear& f = L.as<LinearParams>().linear;
  const std::string what = c.where + ": " + f.w_name;
  if (L.output16) {
    const QuantLinear q = quantize_linear(f, c("query"), c.s16("output"), what, kernels::kResidual5cOutShift);
    return w.LinearS8(q, f, true, true).Union();
  }
  return w.LinearS8(quantize_linear(f, c("query"), c("output"), what), f).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return w.LinearF32(L.as<LinearParams>().linear).Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_linear(out, name, "linear", l.options_as_Linear());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* p = l.options_as_Linear();
  print_linear(os, "linear", p, p->output16());
  if (p->output16()) os << "      output int16 (the residual stream's entry, contract 5c-out)\n";
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_LINEAR);
  m.fields = {"in_features", "out_features"};
  m.tensor_fields = {"weight", "bias"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace linear_module
}  // namespace

namespace kinds {
const KindModule kind_linear = linear_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
