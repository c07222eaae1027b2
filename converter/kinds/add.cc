// The add kind (y = x + r, row by row: the residual add of a block form the
// fused blocks lack, e.g. Torch-KWT's post-norm x + LayerNorm(f(x))): spec
// field "dim", the float64 forward, calibration points ("query" = x, "key"
// = the residual r, "output"), int8 quantization (requant.h's add contract)
// and its Add table. Its residual rows are its keys: the spec's "memory"
// names the layer whose output they are. No weights.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "converter/kinds/block_parts.h"
#include "converter/kinds/kind.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {
namespace {
namespace add_module {

void resolve(const SpecFields& f, const SpecWeights&, FloatLayer* L) {
  const int dim = f.integer("dim");
  if (dim > 16384) fail(f.where, ": field 'dim' is ", dim, ", above 16384");
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = dim;
}

void shell(const LayerInfo&, FloatLayer*) {}

// The residual rows are its keys; no attention weights.
LayerIo io(const FloatLayer&) { return LayerIo{true, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const int d = L.query_dim;
  if (in.kv_len != in.q_len) {
    fail("layer '", L.name, "': ", in.q_len, " rows and ", in.kv_len, " residual rows: an add needs as many of each");
  }
  const size_t n = static_cast<size_t>(in.q_len) * d;
  for (size_t i = 0; i < n; ++i) out[i] = in.query[i] + in.key[i];
  // Rows past the valid ones are padding, as for self-attention.
  const int valid = in.valid > 0 ? std::min(in.valid, in.q_len) : in.q_len;
  record(ranges, "query", in.query, in.q_len, d, d, valid);
  record(ranges, "key", in.key, in.q_len, d, d, valid);
  record(ranges, "output", out, in.q_len, d, d, valid);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "key", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
std::vector<std::string> memory_points(const FloatLayer&) { return {"key"}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  return add_table_s8(w, L.query_dim, c("query"), c("key"), c("output"), c.where).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return fb::CreateAdd(w.fbb(), static_cast<uint32_t>(L.query_dim)).Union();
}

void tensors(const fb::Layer&, const std::string&, std::vector<TensorEntry>*) {}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  os << "    rows of " << l.options_as_Add()->dim() << " plus the residual's rows (its keys), one to one\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_add_table(os, "y = x + r", l.options_as_Add()); }

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_ADD);
  m.fields = {"dim"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.memory_points = memory_points;
  m.keys_pair_rows = true;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace add_module
}  // namespace

namespace kinds {
const KindModule kind_add = add_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
