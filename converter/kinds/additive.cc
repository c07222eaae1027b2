// The additive (Bahdanau) attention kind, with optional coverage: spec
// fields, the float64 forward, calibration points (w_q/w_k outputs, the
// pre-tanh sums), quantization (shared w_q/w_k output scale, the tanh table,
// the coverage term, b_q folded into w_k's bias) and its AdditiveAttention
// table.
#include "converter/kinds/additive.h"

#include <algorithm>
#include <cmath>
#include <iomanip>

#include "converter/write/file_contents.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/quantize_multiplier.h"

namespace edgeattn {
namespace convert {
namespace {
namespace additive_module {

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  AdditiveParams& P = L->params.emplace<AdditiveParams>();
  L->query_dim = f.integer("query_dim");
  L->key_dim = f.integer("key_dim");
  P.attn_dim = f.integer("attn_dim");
  L->value_dim = f.integer("value_dim", L->key_dim);
  L->output_dim = L->value_dim;
  const std::string p = f.string("prefix", "");
  const int A = P.attn_dim;
  // A bias named in "tensors" must be there; without "tensors", the preset
  // name is used when the file has it (PyTorch nn.Linear(..., bias=True)).
  const bool presets = !f.has("tensors");
  std::string b_k = f.tensor_name("b_k");
  if (!f.tensor_name("b").empty()) {
    if (!b_k.empty()) fail(f.where, ": tensors.b and tensors.b_k both name w_k's bias (b is its older name): keep b_k");
    b_k = f.tensor_name("b");
  }
  struct Bias {
    std::string name;
    bool named;
  };
  auto bias = [&](std::string named, const char* preset) {
    return named.empty() && presets ? Bias{p + preset, false} : Bias{named, !named.empty()};
  };
  const Bias bq = bias(f.tensor_name("b_q"), "W_q.bias"), bk = bias(b_k, "W_k.bias"),
             bv = bias(f.tensor_name("b_v"), "v.bias");
  P.w_q = w.linear(tensor_or(f, "w_q", p, "W_q.weight"), bq.name, A, L->query_dim, "w_q [attn_dim, query_dim]",
                   bq.named);
  P.w_k = w.linear(tensor_or(f, "w_k", p, "W_k.weight"), bk.name, A, L->key_dim, "w_k [attn_dim, key_dim]", bk.named);
  P.v_name = tensor_or(f, "v", p, "v.weight");
  P.v = w.get(P.v_name, 0, static_cast<size_t>(A), "v [attn_dim] or [1, attn_dim]").data;
  if (bv.named || (!bv.name.empty() && w.has(bv.name))) {  // PyTorch nn.Linear(attn_dim, 1): bias [1]
    P.b_v_name = bv.name;
    P.b_v = w.get(bv.name, 0, 1, "b_v [1]").data[0];
  }
  // PyTorch's bias of a weight 'M.weight' the spec does not map: 'M.bias',
  // probed (not fetched: it stays unused, and check_unused names it).
  auto unmapped = [&](const std::string& weight, bool mapped, size_t n) {
    const std::string suffix = ".weight";
    if (mapped || weight.size() <= suffix.size() ||
        weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) != 0) {
      return std::vector<double>();
    }
    const std::string name = weight.substr(0, weight.size() - suffix.size()) + ".bias";
    const auto it = w.map.find(name);
    if (it == w.map.end() || !it->second.is_float || it->second.data.size() != n ||
        (w.fetched != nullptr && w.fetched->count(name) != 0)) {  // absent, not a bias, or mapped to another field
      return std::vector<double>();
    }
    for (double x : it->second.data) {
      if (!std::isfinite(x)) return std::vector<double>();
    }
    return it->second.data;
  };
  P.unmapped_b_q = unmapped(P.w_q.w_name, !P.w_q.b.empty(), static_cast<size_t>(A));
  P.unmapped_b_k = unmapped(P.w_k.w_name, !P.w_k.b.empty(), static_cast<size_t>(A));
  const std::vector<double> ubv = unmapped(P.v_name, !P.b_v_name.empty(), 1);
  P.unmapped_b_v = ubv.empty() ? 0.0 : ubv[0];
  P.coverage = f.boolean("coverage", false);
  if (P.coverage) {  // PyTorch nn.Linear(1, attn_dim, bias=False): weight [attn_dim, 1]
    P.w_c_name = tensor_or(f, "w_c", p, "W_c.weight");
    const auto it = w.map.find(P.w_c_name);
    const bool column = it != w.map.end() && it->second.shape.size() == 2 && it->second.shape[1] == 1 &&
                        A != 1;
    P.w_c = column ? w.get(P.w_c_name, static_cast<size_t>(A), 1, "w_c [attn_dim, 1] or [attn_dim]").data
                   : w.get(P.w_c_name, 0, static_cast<size_t>(A), "w_c [attn_dim, 1] or [attn_dim]").data;
  } else if (!f.tensor_name("w_c").empty()) {
    fail(f.where, ": tensors.w_c needs \"coverage\": true");
  }
}

void shell(const LayerInfo& info, FloatLayer* L) {
  L->params.emplace<AdditiveParams>().coverage = info.coverage != 0;
}

LayerIo io(const FloatLayer&) { return LayerIo{true, 1}; }

// The runtime's w_q has no bias: b_q moves to the key side,
// (W q + b_q) + (U k + b_k) = W q + (U k + b_k + b_q). b_v is not stored (the
// softmax cancels it).
struct Folded {
  FloatLinear w_q, w_k;
};
Folded fold_biases(const AdditiveParams& P) {
  Folded f{P.w_q, P.w_k};
  if (P.w_q.b.empty()) return f;
  f.w_q.b.clear();
  f.w_q.b_name.clear();
  if (f.w_k.b.empty()) {
    f.w_k.b = P.w_q.b;
    f.w_k.b_name = P.w_q.b_name;
  } else {
    for (size_t c = 0; c < f.w_k.b.size(); ++c) f.w_k.b[c] += P.w_q.b[c];
    f.w_k.b_name += " + " + P.w_q.b_name;
  }
  return f;
}

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const AdditiveParams& P = L.as<AdditiveParams>();
  AttentionFrame f(L, in, weights, ranges);
  const int lq = f.lq, lk = f.lk, q_rec = f.q_rec;
  const int A = P.attn_dim;
  // PyTorch's projections, with their own biases.
  const std::vector<double> qp = linear(P.w_q, in.query, lq);
  const std::vector<double> kp = linear(P.w_k, f.key, lk);
  if (ranges != nullptr && !P.w_q.b.empty()) {  // the runtime's: b_q folded into w_k's bias
    std::vector<double> q_out = qp, k_out = kp;
    for (size_t i = 0; i < q_out.size(); ++i) q_out[i] -= P.w_q.b[i % static_cast<size_t>(A)];
    for (size_t i = 0; i < k_out.size(); ++i) k_out[i] += P.w_q.b[i % static_cast<size_t>(A)];
    record(ranges, "w_q", q_out.data(), lq, A, A, q_rec);
    record(ranges, "w_k", k_out.data(), lk, A, A, f.valid);
  } else {
    record(ranges, "w_q", qp.data(), lq, A, A, q_rec);
    record(ranges, "w_k", kp.data(), lk, A, A, f.valid);
  }
  // Biases PyTorch adds and the model lacks (--allow-unused): in the score,
  // not in the recorded pre-tanh range (the model's).
  std::vector<double> unmapped(static_cast<size_t>(A), 0.0);
  for (size_t c = 0; c < P.unmapped_b_q.size(); ++c) unmapped[c] += P.unmapped_b_q[c];
  for (size_t c = 0; c < P.unmapped_b_k.size(); ++c) unmapped[c] += P.unmapped_b_k[c];
  Range* pre = ranges != nullptr ? &(*ranges)["pre_tanh"] : nullptr;
  Range* cov_range = ranges != nullptr && P.coverage ? &(*ranges)["coverage"] : nullptr;
  std::vector<double> cov(static_cast<size_t>(P.coverage ? lk : 0), 0.0);  // c_j, from 0 per sample
  for (int r = 0; r < lq; ++r) {
    const int limit = f.limit(r);
    for (int j = 0; j < limit; ++j) {
      double acc = 0.0;
      const double cj = P.coverage ? cov[static_cast<size_t>(j)] : 0.0;
      if (cov_range != nullptr) cov_range->add(cj);
      for (int c = 0; c < A; ++c) {
        double t = qp[static_cast<size_t>(r) * A + c] + kp[static_cast<size_t>(j) * A + c];
        if (P.coverage) t += P.w_c[static_cast<size_t>(c)] * cj;
        if (pre != nullptr && r < q_rec) pre->add(t);
        acc += P.v[static_cast<size_t>(c)] * std::tanh(t + unmapped[static_cast<size_t>(c)]);
      }
      f.s[static_cast<size_t>(j)] = acc + P.b_v + P.unmapped_b_v;
    }
    f.attend(0, r, limit, f.value, L.value_dim, L.value_dim, out + static_cast<size_t>(r) * L.output_dim);
    if (P.coverage) {
      for (int j = 0; j < limit; ++j) cov[static_cast<size_t>(j)] += f.s[static_cast<size_t>(j)];
    }
  }
  record(ranges, "output", out, lq, L.output_dim, L.output_dim, q_rec);
}

std::vector<std::string> value_points(const FloatLayer&) {
  return {"query", "key", "value", "w_q", "w_k", "output"};
}
// The table clips at +-6 where tanh is flat.
std::vector<std::string> minmax_points(const FloatLayer&) { return {"pre_tanh"}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const AdditiveParams& P = L.as<AdditiveParams>();
  const std::string& at = c.where;
  const ActQuantParams qin = c("query"), kin = c("key");
  const ActQuantParams val = c.has("value") ? c("value") : kin;
  // w_q and w_k outputs share one scale so the kernel can add them exactly.
  const Range& rq = c.range("w_q");
  const Range& rk = c.range("w_k");
  const ActQuantParams pq = act_quant(rq, at + ": w_q"), pk = act_quant(rk, at + ": w_k");
  const double span_q = std::max(rq.hi, 0.0) - std::min(rq.lo, 0.0);
  const double span_k = std::max(rk.hi, 0.0) - std::min(rk.lo, 0.0);
  double s_h = std::max(span_q, span_k) / 255.0;
  if (!(s_h > 0.0)) s_h = 1.0 / 255.0;
  s_h = static_cast<double>(static_cast<float>(s_h));
  (void)pq;
  (void)pk;
  auto zp = [&](const Range& r) {
    return static_cast<int>(std::clamp(std::round(-128.0 - std::min(r.lo, 0.0) / s_h), -128.0, 127.0));
  };
  const ActQuantParams oq{s_h, zp(rq)}, ok{s_h, zp(rk)};
  const Folded fl = fold_biases(P);
  const QuantLinear wq = quantize_linear(fl.w_q, qin, oq, at + ": " + P.w_q.w_name);
  const QuantLinear wk = quantize_linear(fl.w_k, kin, ok, at + ": " + P.w_k.w_name);
  const TanhTable tt = tanh_table(c.range("pre_tanh"), at);
  const Requant pre = requant(s_h / tt.index.scale, at + ": pre-tanh");
  const QuantVector v = quantize_symmetric(P.v);
  const ActQuantParams out = c("output");
  const Requant score = requant(v.scale / 127.0 * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(val.scale / (32768.0 * out.scale), at + ": softmax output");
  const auto fq = w.LinearS8(wq, fl.w_q), fk = w.LinearS8(wk, fl.w_k);
  const auto fv = w.TensorS8(P.v_name, {static_cast<uint32_t>(P.attn_dim)}, 1, P.attn_dim, v.q.data(),
                             {static_cast<float>(v.scale)});
  // Coverage: w_c symmetric int8 (scale s_wc); the term w_c c_j in units of
  // s_h with c_j in Q15: requantize(w_c8 * c_j) by s_wc / (32768 s_h).
  flatbuffers::Offset<fb::Tensor> fwc = 0;
  Requant cov{int32_t{1} << 30, -31};  // 2^-32: stays unused without coverage (or w_c = 0)
  if (P.coverage) {
    QuantVector wc = quantize_symmetric(P.w_c);
    const double r = wc.scale / (32768.0 * s_h);
    bool zero = true;
    for (int8_t x : wc.q) zero = zero && x == 0;
    // Below 2^-32 the term |w_c c_j| / s_h < 127 * 2^24 * 2^-32 < 1 of s_h:
    // negligible, stored as w_c = 0 (the term is exactly 0).
    if (!zero && r < std::ldexp(1.0, -32)) {
      std::fill(wc.q.begin(), wc.q.end(), int8_t{0});
      zero = true;
    }
    if (!zero) {
      cov = requant(r, at + ": coverage");
      if (cov.shift > 0) {
        fail(at, ": coverage multiplier ", r, " exceeds 1 (w_c too large for the w_q/w_k output scale)");
      }
    }
    fwc = w.TensorS8(P.w_c_name, {static_cast<uint32_t>(P.attn_dim)}, 1, P.attn_dim, wc.q.data(),
                     {static_cast<float>(wc.scale)});
  }
  const auto fpre = w.Requants({pre});
  const auto fval = w.Act(val), fout = w.Act(out);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateAdditiveAttentionDirect(w.fbb(), L.query_dim, L.key_dim, P.attn_dim, L.value_dim, fq, fk, fv,
                                           fpre, tt.index.zero_point, static_cast<float>(tt.index.scale),
                                           &tt.table, fval, fout, sm, P.coverage, fwc, cov.multiplier, cov.shift)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const AdditiveParams& P = L.as<AdditiveParams>();
  const Folded fl = fold_biases(P);
  const auto fq = w.LinearF32(fl.w_q), fk = w.LinearF32(fl.w_k);
  const auto fv = w.TensorF32(P.v_name, 0, P.attn_dim, P.v.data());
  const auto fwc = P.coverage ? w.TensorF32(P.w_c_name, 0, P.attn_dim, P.w_c.data()) : 0;
  fb::AdditiveAttentionBuilder b(w.fbb());
  b.add_query_dim(L.query_dim);
  b.add_key_dim(L.key_dim);
  b.add_attn_dim(P.attn_dim);
  b.add_value_dim(L.value_dim);
  b.add_w_q(fq);
  b.add_w_k(fk);
  b.add_v(fv);
  if (P.coverage) {
    b.add_coverage(true);
    b.add_w_c(fwc);
  }
  return b.Finish().Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  const auto* a = l.options_as_AdditiveAttention();
  add_linear(out, name, "w_q", a->w_q());
  add_linear(out, name, "w_k", a->w_k());
  add_tensor(out, name, "v", a->v());
  if (a->coverage()) add_tensor(out, name, "w_c", a->w_c());
}

void inspect(const fb::Layer& l, const LayerInfo& info, std::ostream& os) {
  os << "  attn_dim " << l.options_as_AdditiveAttention()->attn_dim() << "\n";
  if (info.coverage) {
    os << "  coverage: " << info.max_kv_len << " positions, " << info.coverage_bytes
       << " arena bytes (c_j, reset by BeginSequence)\n";
  }
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* ad = l.options_as_AdditiveAttention();
  print_linear(os, "w_q", ad->w_q());
  print_linear(os, "w_k", ad->w_k());
  const double st = ad->pre_tanh_scale();
  os << "    pre-tanh: scale " << st << " zero_point " << ad->pre_tanh_zero_point() << "  range ["
     << std::setprecision(4) << st * (-128 - ad->pre_tanh_zero_point()) << ", "
     << st * (127 - ad->pre_tanh_zero_point()) << "]" << std::setprecision(6) << "\n";
  print_requant(os, "pre_tanh", ad->pre_tanh());
  if (ad->coverage()) {
    os << "    coverage: w_c * c_j (Q15) -> pre-tanh units, multiplier " << std::setprecision(6)
       << kernels::dequantize_multiplier(ad->coverage_multiplier(), ad->coverage_shift()) << " ("
       << ad->coverage_multiplier() << ", " << ad->coverage_shift() << ")\n";
  }
  print_act(os, "value input", ad->value_input());
  print_act(os, "output", ad->output());
  print_softmax(os, ad->softmax());
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_ADDITIVE);
  m.fields = {"query_dim", "key_dim", "attn_dim", "value_dim", "coverage"};
  m.tensor_fields = {"w_q", "b_q", "w_k", "b_k", "b", "v", "b_v", "w_c"};
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

}  // namespace additive_module
}  // namespace

namespace kinds {
const KindModule kind_additive = additive_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
