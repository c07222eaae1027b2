// The ffn kind (a feed-forward network fc2(act(fc1(x))) over each row):
// presets for the usual module names, the float64 forward, calibration points
// ("query", "hidden" = fc1's output, "act" = the activation's output,
// "output"), quantization (the activation as requant.h contract 6's table)
// and its table.
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/kinds/ffn.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace ffn_module {

// Module names of the two linears: nn.TransformerEncoderLayer's linear1 /
// linear2, timm's Mlp fc1 / fc2, nn.Sequential(Linear, act, Linear)'s 0 / 2.
void preset_names(const SpecFields& f, const std::string& preset, std::string* fc1, std::string* fc2) {
  if (preset == "torch") {
    *fc1 = "linear1";
    *fc2 = "linear2";
  } else if (preset == "mlp") {
    *fc1 = "fc1";
    *fc2 = "fc2";
  } else if (preset == "sequential") {
    *fc1 = "0";
    *fc2 = "2";
  } else {
    fail(f.where, ": unknown preset '", preset, "' (expected torch, mlp or sequential, or give \"tensors\")");
  }
}

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  FfnParams& P = L->params.emplace<FfnParams>();
  const int d = f.integer("dim");
  const std::string p = f.string("prefix", "");
  std::string fc1 = "fc1", fc2 = "fc2";
  if (f.has("preset")) preset_names(f, f.string("preset"), &fc1, &fc2);
  P.ffn = read_ffn(f, w, tensor_or(f, "fc1_w", p, (fc1 + ".weight").c_str()),
                   tensor_or(f, "fc1_b", p, (fc1 + ".bias").c_str()), tensor_or(f, "fc2_w", p, (fc2 + ".weight").c_str()),
                   tensor_or(f, "fc2_b", p, (fc2 + ".bias").c_str()), d, f.has("ffn_dim") ? f.integer("ffn_dim") : 0,
                   read_activation(f, "gelu"));
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = d;
  L->max_kv_len = L->max_q_len;
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<FfnParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{false, 0}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double*, RangeMap* ranges) {
  const FloatFfn& f = L.as<FfnParams>().ffn;
  record(ranges, "query", in.query, in.q_len, f.dim, f.dim, in.q_len);
  ffn_forward_recorded(f, in.q_len, in.query, out, ranges, "", in.q_len);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "hidden", "act", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  return ffn_table_s8(w, L.as<FfnParams>().ffn, c("query"), c, c.where).Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  return ffn_table_f32(w, L.as<FfnParams>().ffn).Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_ffn_tensors(out, name, "", l.options_as_FeedForward());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) { print_ffn(os, "ffn", l.options_as_FeedForward()); }

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_FEED_FORWARD);
  m.fields = {"dim", "ffn_dim", "activation", "preset"};
  m.tensor_fields = {"fc1_w", "fc1_b", "fc2_w", "fc2_b"};
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

}  // namespace ffn_module
}  // namespace

namespace kinds {
const KindModule kind_ffn = ffn_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
