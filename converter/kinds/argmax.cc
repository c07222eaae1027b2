// The argmax kind (top-k class indices of each row, a model's last layer):
// spec fields ("dim", "k" = 1), the float64 forward (indices of the k
// largest values, largest first, equal values by increasing index, as the
// runtime), its calibration point ("query": the rows it reads; chained, its
// source's output range) and its table. No weights. Its outputs are indices:
// the report compares them with the float model's by agreement (the fraction
// of rows whose k indices are the same), not by relative error.
#include <ostream>

#include "converter/kinds/argmax.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace argmax_module {

void resolve(const SpecFields& f, const SpecWeights&, FloatLayer* L) {
  ArgmaxParams& P = L->params.emplace<ArgmaxParams>();
  const int dim = f.integer("dim");
  if (dim > 16384) fail(f.where, ": field 'dim' is ", dim, ", above 16384");
  P.k = f.integer("k", 1);
  if (P.k > dim) fail(f.where, ": field 'k' is ", P.k, ", more than the row's ", dim, " values (dim)");
  L->query_dim = L->key_dim = L->value_dim = dim;
  L->output_dim = P.k;
}

void shell(const LayerInfo& info, FloatLayer* L) { L->params.emplace<ArgmaxParams>().k = info.output_dim; }

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

// (a, i) before (b, j): larger value first, equal values by increasing index.
bool before(double a, int i, double b, int j) { return a != b ? a > b : i < j; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const int d = L.query_dim, k = L.as<ArgmaxParams>().k;
  record(ranges, "query", in.query, in.q_len, d, d, in.q_len);
  for (int r = 0; r < in.q_len; ++r) {
    const double* x = in.query + static_cast<size_t>(r) * d;
    int prev = -1;
    for (int j = 0; j < k; ++j) {
      int best = -1;
      for (int i = 0; i < d; ++i) {
        if (prev >= 0 && !before(x[prev], prev, x[i], i)) continue;
        if (best < 0 || before(x[i], i, x[best], best)) best = i;
      }
      out[static_cast<size_t>(r) * k + j] = best;
      prev = best;
    }
  }
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const auto in = w.Act(c("query"));
  return fb::CreateArgmax(w.fbb(), static_cast<uint32_t>(L.query_dim), static_cast<uint32_t>(L.output_dim), in)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return fb::CreateArgmax(w.fbb(), static_cast<uint32_t>(L.query_dim), static_cast<uint32_t>(L.output_dim)).Union();
}

void tensors(const fb::Layer&, const std::string&, std::vector<TensorEntry>*) {}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  const auto* a = l.options_as_Argmax();
  os << "    rows of " << a->dim() << " -> the indices of the " << a->k()
     << " largest (int32, largest first, ties to the lower index)\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_act(os, "input", l.options_as_Argmax()->input()); }

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_ARGMAX);
  m.fields = {"dim", "k"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.index_output = true;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace argmax_module
}  // namespace

namespace kinds {
const KindModule kind_argmax = argmax_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
