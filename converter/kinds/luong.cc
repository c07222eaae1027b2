// The Luong attention kind (dot, general, scaled_dot scores): spec fields,
// the float64 forward, calibration points, quantization and its
// LuongAttention table.
#include "converter/kinds/luong.h"

#include <cmath>
#include <iomanip>

#include "converter/write/file_contents.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace luong_module {

fb::LuongScore score_of(LuongScore k) {
  switch (k) {
    case LuongScore::kDot: return fb::LuongScore::Dot;
    case LuongScore::kGeneral: return fb::LuongScore::General;
    case LuongScore::kScaledDot: return fb::LuongScore::ScaledDot;
  }
  return fb::LuongScore::Dot;
}

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  LuongParams& P = L->params.emplace<LuongParams>();
  const std::string score = f.string("score", "dot");
  L->query_dim = f.integer("query_dim");
  L->key_dim = f.integer("key_dim", L->query_dim);
  L->value_dim = f.integer("value_dim", L->key_dim);
  L->output_dim = L->value_dim;
  if (score == "dot" || score == "scaled_dot") {
    P.score = score == "dot" ? LuongScore::kDot : LuongScore::kScaledDot;
    if (L->query_dim != L->key_dim) {
      fail(f.where, ": ", score, " scores need query_dim == key_dim (", L->query_dim, " vs ", L->key_dim, ")");
    }
  } else if (score == "general") {
    P.score = LuongScore::kGeneral;
    const std::string p = f.string("prefix", "");
    const std::string name = tensor_or(f, "w", p, "W.weight");
    // torch: nn.Linear(key_dim, query_dim).weight is [query_dim][key_dim]; store W^T.
    const Array& a = w.get(name, static_cast<size_t>(L->query_dim), static_cast<size_t>(L->key_dim),
                           "[query_dim, key_dim], nn.Linear(key_dim, query_dim).weight");
    P.w.in = L->query_dim;
    P.w.out = L->key_dim;
    P.w.w_name = name + ".T";
    P.w.w.resize(a.data.size());
    for (int r = 0; r < L->query_dim; ++r) {
      for (int c = 0; c < L->key_dim; ++c) {
        P.w.w[static_cast<size_t>(c) * L->query_dim + r] = a.data[static_cast<size_t>(r) * L->key_dim + c];
      }
    }
  } else {
    fail(f.where, ": unknown Luong score '", score, "' (expected dot, general or scaled_dot)");
  }
  const double def = P.score == LuongScore::kScaledDot ? 1.0 / std::sqrt(static_cast<double>(L->key_dim)) : 1.0;
  P.scale = f.number("scale").value_or(def);
}

void shell(const LayerInfo&, FloatLayer* L) { L->params.emplace<LuongParams>(); }

LayerIo io(const FloatLayer&) { return LayerIo{true, 1}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const LuongParams& P = L.as<LuongParams>();
  AttentionFrame f(L, in, weights, ranges);
  const int lq = f.lq;
  std::vector<double> qp;
  const double* q = in.query;
  if (P.score == LuongScore::kGeneral) {
    qp = linear(P.w, in.query, lq);
    record(ranges, "w", qp.data(), lq, L.key_dim, L.key_dim, f.q_rec);
    q = qp.data();
  }
  const int D = L.key_dim;
  for (int r = 0; r < lq; ++r) {
    const int limit = f.limit(r);
    for (int j = 0; j < limit; ++j) {
      double acc = 0.0;
      for (int i = 0; i < D; ++i) acc += q[static_cast<size_t>(r) * D + i] * f.key[static_cast<size_t>(j) * D + i];
      f.s[static_cast<size_t>(j)] = acc * P.scale;
    }
    f.attend(0, r, limit, f.value, L.value_dim, L.value_dim, out + static_cast<size_t>(r) * L.output_dim);
  }
  record(ranges, "output", out, lq, L.output_dim, L.output_dim, f.q_rec);
}

std::vector<std::string> value_points(const FloatLayer&) { return {"query", "key", "value", "w", "output"}; }
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const LuongParams& P = L.as<LuongParams>();
  const std::string& at = c.where;
  const ActQuantParams qin = c("query"), kin = c("key");
  const ActQuantParams vin = c.has("value") ? c("value") : kin;
  const ActQuantParams out = c("output");
  double s_q = qin.scale;
  flatbuffers::Offset<fb::Linear> fw = 0;
  if (P.score == LuongScore::kGeneral) {
    const ActQuantParams wo = c("w");
    fw = w.LinearS8(quantize_linear(P.w, qin, wo, at + ": " + P.w.w_name), P.w);
    s_q = wo.scale;
  }
  const Requant score = requant(s_q * kin.scale * P.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(vin.scale / (32768.0 * out.scale), at + ": softmax output");
  const auto fqi = w.Act(qin), fki = w.Act(kin), fvi = w.Act(vin), fo = w.Act(out);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateLuongAttention(w.fbb(), score_of(P.score), L.query_dim, L.key_dim, L.value_dim,
                                  static_cast<float>(P.scale), fw, fqi, fki, fvi, fo, sm)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const LuongParams& P = L.as<LuongParams>();
  flatbuffers::Offset<fb::Linear> fw = 0;
  if (P.score == LuongScore::kGeneral) fw = w.LinearF32(P.w);
  return fb::CreateLuongAttention(w.fbb(), score_of(P.score), L.query_dim, L.key_dim, L.value_dim,
                                  static_cast<float>(P.scale), fw)
      .Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  add_linear(out, name, "w", l.options_as_LuongAttention()->w());
}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  const auto* g = l.options_as_LuongAttention();
  os << "  score " << fb::EnumNameLuongScore(g->score()) << ", scale " << g->scale() << "\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* g = l.options_as_LuongAttention();
  print_linear(os, "w", g->w());
  print_act(os, "query input", g->query_input());
  print_act(os, "key input", g->key_input());
  print_act(os, "value input", g->value_input());
  print_act(os, "output", g->output());
  print_softmax(os, g->softmax());
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_LUONG);
  m.fields = {"score", "query_dim", "key_dim", "value_dim", "scale"};
  m.tensor_fields = {"w"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace luong_module
}  // namespace

namespace kinds {
const KindModule kind_luong = luong_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
