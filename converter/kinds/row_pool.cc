// The row_pool kind (a sequence to one row: "first", the class row of a ViT
// or keyword-spotting transformer, or "mean" over the valid rows): spec
// fields, the float64 forward, calibration points ("key" = the pooled rows,
// "output"), int8 quantization (requant.h's row-mean contract: one
// requantization of the mean in 2^-16 input steps) and its RowPool table.
// Like attention pooling its rows are its keys: no query, one output row.
#include "converter/kinds/row_pool.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "converter/quantize/quantize.h"
#include "converter/write/file_contents.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {
namespace {
namespace row_pool_module {

void resolve(const SpecFields& f, const SpecWeights&, FloatLayer* L) {
  RowPoolParams& P = L->params.emplace<RowPoolParams>();
  const std::string mode = f.string("mode");
  if (mode != "first" && mode != "mean") {
    fail(f.where, ": field 'mode' must be \"first\" (the class row) or \"mean\" (over the valid rows), got '", mode,
         "'");
  }
  P.mean = mode == "mean";
  const int D = f.integer("dim");
  if (D > 16384) fail(f.where, ": dim ", D, " is above 16384");
  L->query_dim = 0;
  L->key_dim = L->value_dim = L->output_dim = D;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<RowPoolParams>(); }

// The rows are keys; no attention weights.
LayerIo io(const FloatLayer&) { return LayerIo{true, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const RowPoolParams& P = L.as<RowPoolParams>();
  const int D = L.key_dim;
  // As the runtime: kv_valid_len <= 0 means every row.
  const int n = in.valid > 0 ? std::min(in.valid, in.kv_len) : in.kv_len;
  record(ranges, "key", in.key, in.kv_len, D, D, n);
  if (!P.mean) {
    std::copy(in.key, in.key + D, out);
  } else {
    for (int k = 0; k < D; ++k) {
      double sum = 0.0;
      for (int j = 0; j < n; ++j) sum += in.key[static_cast<size_t>(j) * D + k];
      out[k] = sum / n;
    }
  }
  record(ranges, "output", out, 1, D, D, 1);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"key", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
std::vector<std::string> input_points(const FloatLayer&) { return {"key"}; }
// "first" passes its input's quantization on (an exact copy of the row),
// unless the row comes from the int16 stream and leaves at its own range.
std::string output_point(const FloatLayer& L) {
  return L.as<RowPoolParams>().mean || L.input16 != L.output16 ? "output" : "key";
}

// int8, or (--residual int16) the row-mean contract 16: int16 rows of the
// stream in (zero point 0, the mean in 2^-8 input steps), int8 out for the
// head, or int16 out (zero point 0) for a layernorm reading the stream.
flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const ActQuantParams qi = L.input16 ? c.s16("key") : c("key");
  const ActQuantParams qo = L.output16 ? c.s16(output_point(L)) : c(output_point(L));
  const int bits = L.input16 ? kernels::kRowMean16Bits : kernels::kRowMeanBits;
  const Requant r = requant(qi.scale / (std::ldexp(1.0, bits) * qo.scale), c.where + ": row pool");
  const auto fi = L.input16 ? w.Act16(qi) : w.Act(qi), fo = L.output16 ? w.Act16(qo) : w.Act(qo);
  const auto rq = w.Requants({r});
  return fb::CreateRowPool(w.fbb(), static_cast<uint32_t>(L.key_dim),
                           L.as<RowPoolParams>().mean ? fb::RowPoolMode::Mean : fb::RowPoolMode::First, fi, fo, rq,
                           L.input16, L.output16)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return fb::CreateRowPool(w.fbb(), static_cast<uint32_t>(L.key_dim),
                           L.as<RowPoolParams>().mean ? fb::RowPoolMode::Mean : fb::RowPoolMode::First)
      .Union();
}

void tensors(const fb::Layer&, const std::string&, std::vector<TensorEntry>*) {}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  os << "  "
     << (l.options_as_RowPool()->mode() == fb::RowPoolMode::Mean ? "mean over the valid rows (kv_valid_len)"
                                                                 : "first row (the class row)")
     << "\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* p = l.options_as_RowPool();
  print_act(os, "input", p->input(), p->input16());
  print_act(os, "output", p->output(), p->output16());
  print_requant(os, "mean", p->requant());
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_ROW_POOL);
  m.learned_query = true;
  m.fields = {"dim", "mode"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.input_points = input_points;
  m.output_point = output_point;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace row_pool_module
}  // namespace

namespace kinds {
const KindModule kind_row_pool = row_pool_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
