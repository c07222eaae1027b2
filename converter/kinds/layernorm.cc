// The layernorm kind (nn.LayerNorm over each row, e.g. a model's final norm):
// spec fields, the float64 forward, calibration points ("query" = the input
// rows, "output"), quantization (requant.h contract 4) and its table.
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/kinds/layernorm.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace layernorm_module {

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  NormParams& P = L->params.emplace<NormParams>();
  const int d = f.integer("dim");
  const std::string p = f.string("prefix", "");
  P.norm = read_norm(w, tensor_or(f, "weight", p, "weight"), tensor_or(f, "bias", p, "bias"), d,
                     f.number("eps").value_or(1e-5));
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = d;
  L->max_kv_len = L->max_q_len;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<NormParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const int d = L.query_dim;
  record(ranges, "query", in.query, in.q_len, d, d, in.q_len);
  layernorm_forward(L.as<NormParams>().norm, in.q_len, in.query, out);
  record(ranges, "output", out, in.q_len, d, d, in.q_len);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const FloatNorm& n = L.as<NormParams>().norm;
  if (L.input16) {  // after a block of the 16-bit residual stream: int16 rows in (contract 4b), int8 out
    const ActQuantParams out = c("output");
    return write_layernorm_s8(w, n, quantize_layernorm16(n, c.s16("query"), &out, nullptr, c.where)).Union();
  }
  return norm_table_s8(w, n, c("query"), c("output"), c.where).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return write_layernorm_f32(w, L.as<NormParams>().norm).Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_norm_tensors(out, name, "norm", l.options_as_LayerNorm());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_norm(os, "norm", l.options_as_LayerNorm()); }

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_LAYERNORM);
  m.fields = {"dim", "eps"};
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

}  // namespace layernorm_module
}  // namespace

namespace kinds {
const KindModule kind_layernorm = layernorm_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
