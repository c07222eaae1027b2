// The attention pooling kind (a learned query over one sequence): spec
// fields, the float64 forward, calibration points, quantization and its
// AttentionPooling table.
#include "converter/kinds/pooling.h"

#include "converter/write/file_contents.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace pooling_module {

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  PoolingParams& P = L->params.emplace<PoolingParams>();
  const int D = f.integer("dim");
  L->key_dim = L->value_dim = L->output_dim = D;
  L->query_dim = 0;
  P.query_name = tensor_or(f, "query", f.string("prefix", ""), "query.weight");
  P.query = w.get(P.query_name, 0, static_cast<size_t>(D), "[dim] or [1, dim]").data;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<PoolingParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{true, 1}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const PoolingParams& P = L.as<PoolingParams>();
  AttentionFrame f(L, in, weights, ranges);
  const int D = L.key_dim;
  const int limit = f.limit(0);
  for (int j = 0; j < limit; ++j) {
    double acc = 0.0;
    for (int i = 0; i < D; ++i) acc += P.query[static_cast<size_t>(i)] * f.key[static_cast<size_t>(j) * D + i];
    f.s[static_cast<size_t>(j)] = acc;
  }
  f.attend(0, 0, limit, f.key, D, D, out);
  record(ranges, "output", out, 1, D, D, 1);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"key", "value", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
// Chained ("input"), the earlier layer's output rows are its keys and values.
std::vector<std::string> input_points(const FloatLayer&) { return {"key"}; }
// Its output keeps the input's quantization (write_s8).
std::string output_point(const FloatLayer&) { return "key"; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const PoolingParams& P = L.as<PoolingParams>();
  const std::string& at = c.where;
  const ActQuantParams h = c("key");
  const QuantVector q = quantize_symmetric(P.query);
  const Requant score = requant(q.scale * h.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(1.0 / 32768.0, at + ": softmax output");
  const auto fq = w.TensorS8(P.query_name, {static_cast<uint32_t>(L.key_dim)}, 1, L.key_dim, q.q.data(),
                             {static_cast<float>(q.scale)});
  const auto fi = w.Act(h), fo = w.Act(h);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateAttentionPooling(w.fbb(), L.key_dim, fq, fi, fo, sm).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const PoolingParams& P = L.as<PoolingParams>();
  const auto fq = w.TensorF32(P.query_name, 0, L.key_dim, P.query.data());
  return fb::CreateAttentionPooling(w.fbb(), L.key_dim, fq).Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_tensor(out, name, "query", l.options_as_AttentionPooling()->query());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* p = l.options_as_AttentionPooling();
  print_act(os, "input", p->input());
  print_act(os, "output", p->output());
  print_softmax(os, p->softmax());
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_POOLING);
  m.learned_query = true;
  m.fields = {"dim"};
  m.tensor_fields = {"query"};
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
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace pooling_module
}  // namespace

namespace kinds {
const KindModule kind_pooling = pooling_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
