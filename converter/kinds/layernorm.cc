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
  return norm_table_s8(w, L.as<NormParams>().norm, c("query"), c("output"), c.where).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return write_layernorm_f32(w, L.as<NormParams>().norm).Union();
}

void shape(const FloatLayer& L, LayerShape* s) {
  s->kind = EA_LAYER_LAYERNORM;
  s->embed_dim = L.query_dim;
}

void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_norm_tensors(out, name, "norm", l.options_as_LayerNorm());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_norm(os, "norm", l.options_as_LayerNorm()); }

}  // namespace

namespace kinds {
const KindModule kLayerNorm = {
    "layernorm", EA_LAYER_LAYERNORM, fb::LayerOptions::LayerNorm,
    /*learned_query=*/false, /*causal_mask=*/false,
    {"dim", "eps"},
    {"weight", "bias"},
    resolve, shell, io, forward_layer, value_points, minmax_points, write_s8, write_f32, shape, tensors, nullptr,
    inspect_quant,
    /*smooth_pairs=*/nullptr};
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
