// The quantize kind (float rows into an int8 model, its first layer): spec
// field "dim", the float64 forward (the rows as they are), its calibration
// point ("query": the float rows' range, which is also its output's: the
// int8 layer after it reads the bytes at that quantization) and its table.
// No weights. In a float32 model it is a copy.
#include <algorithm>
#include <ostream>

#include "converter/kinds/kind.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace quantize_module {

void resolve(const SpecFields& f, const SpecWeights&, FloatLayer* L) {
  const int dim = f.integer("dim");
  if (dim > 16384) fail(f.where, ": field 'dim' is ", dim, ", above 16384");
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = dim;
}

void shell(const LayerInfo&, FloatLayer*) {}

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const int d = L.query_dim;
  record(ranges, "query", in.query, in.q_len, d, d, in.q_len);
  std::copy(in.query, in.query + static_cast<size_t>(in.q_len) * d, out);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
std::string output_point(const FloatLayer&) { return "query"; }  // the bytes stand for the same values

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const auto out = w.Act(c("query"));
  return fb::CreateQuantize(w.fbb(), static_cast<uint32_t>(L.query_dim), out).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return fb::CreateQuantize(w.fbb(), static_cast<uint32_t>(L.query_dim)).Union();
}

void tensors(const fb::Layer&, const std::string&, std::vector<TensorEntry>*) {}

void inspect(const fb::Layer& l, const LayerInfo& info, std::ostream& os) {
  os << "    float rows of " << l.options_as_Quantize()->dim() << " in"
     << (info.dtype == EA_S8 ? ", quantized: nearbyint(x / scale) + zero_point, saturated" : " (a copy)") << "\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_act(os, "output", l.options_as_Quantize()->output()); }

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_QUANTIZE);
  m.fields = {"dim"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.output_point = output_point;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace quantize_module
}  // namespace

namespace kinds {
const KindModule kind_quantize = quantize_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
