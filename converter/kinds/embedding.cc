// The embedding kind (nn.Embedding, a model's first layer): spec fields, the
// float64 forward (the table lookup), its calibration point ("output", the
// whole table's range, exact), int8 writing (the table rounded once at the
// output's quantization, so the runtime copies rows) and its table.
//
// Why the whole table's range and not the rows the calibration ids use: the
// runtime must give every id in 0..vocab-1 its row, and the table is known
// exactly. A range from the calibration ids would clip (silently, by
// saturation) the rows of ids the calibration set happened not to contain;
// the whole table's range is never wrong and does not depend on the
// calibration data. The cost: a table whose rare rows reach far beyond the
// common ones gets a coarser step for all of them.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "converter/kinds/embedding.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace embedding_module {

constexpr int kMaxVocab = 1 << 20;  // the runtime's bound (runtime/src/layers/embedding.cc)

// The weight [vocab, dim] (widths from its shape; "vocab" / "dim" in the
// spec, when given, must match it), times the spec's "scale".
void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  EmbeddingParams& P = L->params.emplace<EmbeddingParams>();
  const std::string p = f.string("prefix", "");
  const std::string weight = tensor_or(f, "weight", p, "weight");
  auto it = w.map.find(weight);
  if (it == w.map.end()) w.missing(weight);
  if (it->second.shape.size() != 2) {
    fail(w.where(), ": tensor '", weight, "' has shape ", shape_string(it->second.shape),
         ", expected [vocab, dim] (nn.Embedding's weight)");
  }
  const size_t vocab = it->second.shape[0], dim = it->second.shape[1];
  if (vocab < 1 || vocab > static_cast<size_t>(kMaxVocab) || dim < 1 || dim > 16384) {
    fail(w.where(), ": tensor '", weight, "' has shape ", shape_string(it->second.shape), ": vocab must be in 1..",
         kMaxVocab, " and dim in 1..16384");
  }
  P.vocab = static_cast<int>(vocab);
  P.dim = static_cast<int>(dim);
  if (f.has("vocab") && f.integer("vocab") != P.vocab) {
    fail(f.where, ": field 'vocab' is ", f.integer("vocab"), ", tensor '", weight, "' has ", P.vocab, " rows");
  }
  if (f.has("dim") && f.integer("dim") != P.dim) {
    fail(f.where, ": field 'dim' is ", f.integer("dim"), ", tensor '", weight, "' has ", P.dim, " columns");
  }
  const Array& a = w.get(weight, vocab, dim, "[vocab, dim]");
  const double scale = f.number("scale").value_or(1.0);
  P.table.resize(a.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) P.table[i] = a.data[i] * scale;
  P.lo = *std::min_element(P.table.begin(), P.table.end());
  P.hi = *std::max_element(P.table.begin(), P.table.end());
  P.name = weight;
  L->query_dim = L->key_dim = L->value_dim = 1;  // one token id per row
  L->output_dim = P.dim;
}

void shell(const LayerInfo& info, FloatLayer* L) {
  EmbeddingParams& P = L->params.emplace<EmbeddingParams>();
  P.vocab = info.input_range;
  P.dim = info.output_dim;
}

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

int input_range(const FloatLayer& L) { return L.as<EmbeddingParams>().vocab; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const EmbeddingParams& P = L.as<EmbeddingParams>();
  for (int r = 0; r < in.q_len; ++r) {
    const double id = in.query[r];
    if (!(id >= 0 && id < P.vocab) || id != std::floor(id)) {
      fail("layer '", L.name, "': token id ", id, " at row ", r, " is outside 0..", P.vocab - 1);
    }
    const double* row = P.table.data() + static_cast<size_t>(id) * P.dim;
    std::copy(row, row + P.dim, out + static_cast<size_t>(r) * P.dim);
  }
  // Every id may occur on the device: the output's range is the table's.
  const double ends[2] = {P.lo, P.hi};
  record(ranges, "output", ends, 1, 2, 2, 1);
}

std::vector<std::string> value_points(const FloatLayer&) { return {}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
std::vector<std::string> exact_points(const FloatLayer&) { return {"output"}; }

// q = clamp(round(x / s_out) + zp_out, -128, 127), rounding half away from
// zero: the one rounding of the layer (the run copies these bytes).
// --residual int16 with a block after it: the table as int16 at the
// stream's scale (symmetric over the whole table, zero point 0), rounded once
// half away from zero; the run still only copies rows. Why an int16 table
// and not the int8 one widened at run time: the rows are the stream's first
// values, and an int8 table would put the int8 rounding the stream exists to
// avoid into every block after it; the price is the table's size, doubled.
flatbuffers::Offset<void> write_s8_stream16(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const EmbeddingParams& P = L.as<EmbeddingParams>();
  const ActQuantParams q = c.s16("output");
  std::vector<int16_t> table(P.table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = static_cast<int16_t>(std::clamp(std::round(P.table[i] / q.scale), -32768.0, 32767.0));
  }
  const auto t = w.TensorS16(P.name, P.vocab, P.dim, table);
  const auto out = w.Act16(q);
  return fb::CreateEmbedding(w.fbb(), static_cast<uint32_t>(P.vocab), static_cast<uint32_t>(P.dim), t, out, true)
      .Union();
}

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  if (L.output16) return write_s8_stream16(w, L, c);
  const EmbeddingParams& P = L.as<EmbeddingParams>();
  const ActQuantParams q = c("output");
  std::vector<int8_t> table(P.table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const double v = std::round(P.table[i] / q.scale) + q.zero_point;
    table[i] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
  }
  const auto t = w.TensorS8(P.name, {static_cast<uint32_t>(P.vocab), static_cast<uint32_t>(P.dim)}, P.vocab, P.dim,
                            table.data(), {static_cast<float>(q.scale)});
  const auto out = w.Act(q);
  return fb::CreateEmbedding(w.fbb(), static_cast<uint32_t>(P.vocab), static_cast<uint32_t>(P.dim), t, out).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const EmbeddingParams& P = L.as<EmbeddingParams>();
  const auto t = w.TensorF32(P.name, P.vocab, P.dim, P.table.data());
  return fb::CreateEmbedding(w.fbb(), static_cast<uint32_t>(P.vocab), static_cast<uint32_t>(P.dim), t).Union();
}

void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_tensor(out, name, "table", l.options_as_Embedding()->table());
}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  const auto* e = l.options_as_Embedding();
  os << "    token ids in 0.." << e->vocab() - 1 << " (int32, one per row) -> rows of " << e->dim() << "\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  print_act(os, "output", l.options_as_Embedding()->output(), l.options_as_Embedding()->output16());
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_EMBEDDING);
  m.fields = {"vocab", "dim", "scale"};
  m.tensor_fields = {"weight"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.exact_points = exact_points;
  m.input_range = input_range;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace embedding_module
}  // namespace

namespace kinds {
const KindModule kind_embedding = embedding_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
