#include "fixtures.h"

#include "converter/cli/commands.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fixtures {
namespace {

using Mat = std::vector<double>;  // row-major

// y [rows][out] = x [rows][in] W^T + b (b may be empty)
Mat linear(const double* x, int rows, int in, const Mat& w, const Mat& b, int out) {
  Mat y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r) {
    for (int n = 0; n < out; ++n) {
      double acc = b.empty() ? 0.0 : b[static_cast<size_t>(n)];
      for (int k = 0; k < in; ++k) acc += w[static_cast<size_t>(n) * in + k] * x[static_cast<size_t>(r) * in + k];
      y[static_cast<size_t>(r) * out + n] = acc;
    }
  }
  return y;
}

// Softmax over the first `limit` scores; writes probabilities into p (0 past limit).
void softmax_prefix(std::vector<double>& s, int limit) {
  if (limit <= 0) {
    std::fill(s.begin(), s.end(), 0.0);
    return;
  }
  const double m = *std::max_element(s.begin(), s.begin() + limit);
  double sum = 0.0;
  for (int j = 0; j < limit; ++j) sum += (s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - m));
  for (size_t j = 0; j < s.size(); ++j) s[j] = static_cast<int>(j) < limit ? s[j] / sum : 0.0;
}


int valid_of(const ArrayMap& in, const std::string& key, int i, int lk) {
  auto it = in.find(key);
  if (it == in.end()) return lk;
  return static_cast<int>(it->second.data[static_cast<size_t>(i)]);
}

// N samples of query [Lq, dq] (dq > 0), key [Lk, dk] (dk > 0), value [Lk, dv]
// (dv > 0) and kv_valid_len (padding).
Entries make_inputs(Rng& rng, const std::string& name, int n, int lq, int dq, int lk, int dk, int dv,
                    bool padding, double sigma) {
  Entries e;
  if (dq > 0) e.emplace_back(name + ".query", random_normal(rng, {size_t(n), size_t(lq), size_t(dq)}, sigma));
  if (dk > 0) e.emplace_back(name + ".key", random_normal(rng, {size_t(n), size_t(lk), size_t(dk)}, sigma));
  if (dv > 0) e.emplace_back(name + ".value", random_normal(rng, {size_t(n), size_t(lk), size_t(dv)}, sigma));
  if (padding) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(i == 0 ? lk : rng.integer(1, lk));
    e.emplace_back(name + ".kv_valid_len", make("<i4", {size_t(n)}, v));
  }
  return e;
}

// The first n samples (axis 0) of every entry. The round-trip tests evaluate
// on a subset of the calibration set: they check the conversion and runtime
// numerics given calibrated ranges, not how a calibration set generalizes
// (a held-out sample whose context falls outside the calibrated range clips).
ArrayMap first_samples(const Entries& e, size_t n) {
  ArrayMap m;
  for (const auto& [k, v] : e) {
    Array a = v;
    const size_t per = a.numel() / a.shape[0];
    a.shape[0] = n;
    a.data.resize(n * per);
    m[k] = a;
  }
  return m;
}

}  // namespace

Array make(const std::string& dtype, std::vector<size_t> shape, std::vector<double> data) {
  Array a;
  a.dtype = dtype;
  a.is_float = dtype[0] == 'F' || dtype[0] == 'B' || dtype[1] == 'f';
  a.shape = std::move(shape);
  a.data = std::move(data);
  if (a.data.size() != a.numel()) throw std::runtime_error("fixture: data does not match shape");
  return a;
}

Array random_weight(Rng& rng, std::vector<size_t> shape, double gain, const std::string& dtype) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  const double a = gain / std::sqrt(static_cast<double>(shape.back()));
  std::vector<double> v(n);
  for (double& x : v) x = rng.uniform(-a, a);
  return make(dtype, std::move(shape), std::move(v));
}

Array random_normal(Rng& rng, std::vector<size_t> shape, double sigma, const std::string& dtype) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  std::vector<double> v(n);
  for (double& x : v) x = sigma * rng.normal();
  return make(dtype, std::move(shape), std::move(v));
}

LayerCase mha_case(const std::string& mask, bool cross, const std::string& preset, unsigned seed) {
  Rng rng(seed);
  const int E = 20, H = 4, hd = E / H;
  const int lq = cross ? 6 : 8, lk = cross ? 7 : 8;
  const int kd = cross ? 14 : E, vd = cross ? 10 : E;
  const std::string p = "blk.attn.";
  LayerCase c;
  c.name = "attn";
  c.self_padding = !cross && mask == "key_padding";
  const Array wq = random_weight(rng, {size_t(E), size_t(E)}), wk = random_weight(rng, {size_t(E), size_t(kd)});
  const Array wv = random_weight(rng, {size_t(E), size_t(vd)}), wo = random_weight(rng, {size_t(E), size_t(E)});
  const Array bq = random_weight(rng, {size_t(E)}, 0.5), bk = random_weight(rng, {size_t(E)}, 0.5);
  const Array bv = random_weight(rng, {size_t(E)}, 0.5), bo = random_weight(rng, {size_t(E)}, 0.5);
  if (preset == "torch_mha" && kd == E && vd == E) {
    std::vector<double> w = wq.data, b = bq.data;
    w.insert(w.end(), wk.data.begin(), wk.data.end());
    w.insert(w.end(), wv.data.begin(), wv.data.end());
    b.insert(b.end(), bk.data.begin(), bk.data.end());
    b.insert(b.end(), bv.data.begin(), bv.data.end());
    c.weights.emplace_back(p + "in_proj_weight", make("F32", {size_t(3 * E), size_t(E)}, w));
    c.weights.emplace_back(p + "in_proj_bias", make("F32", {size_t(3 * E)}, b));
    c.weights.emplace_back(p + "out_proj.weight", wo);
    c.weights.emplace_back(p + "out_proj.bias", bo);
  } else if (preset == "torch_mha") {
    std::vector<double> b = bq.data;
    b.insert(b.end(), bk.data.begin(), bk.data.end());
    b.insert(b.end(), bv.data.begin(), bv.data.end());
    c.weights.emplace_back(p + "q_proj_weight", wq);
    c.weights.emplace_back(p + "k_proj_weight", wk);
    c.weights.emplace_back(p + "v_proj_weight", wv);
    c.weights.emplace_back(p + "in_proj_bias", make("F32", {size_t(3 * E)}, b));
    c.weights.emplace_back(p + "out_proj.weight", wo);
    c.weights.emplace_back(p + "out_proj.bias", bo);
  } else {  // linear
    c.weights = {{p + "q_proj.weight", wq}, {p + "q_proj.bias", bq}, {p + "k_proj.weight", wk},
                 {p + "k_proj.bias", bk},   {p + "v_proj.weight", wv}, {p + "v_proj.bias", bv},
                 {p + "out_proj.weight", wo}, {p + "out_proj.bias", bo}};
  }
  std::ostringstream s;
  s << R"({"model": "test_mha", "layers": [{"name": "attn", "kind": "mha", "preset": ")" << preset
    << R"(", "prefix": ")" << p << R"(", "embed_dim": )" << E << R"(, "num_heads": )" << H
    << R"(, "cross": )" << (cross ? "true" : "false") << R"(, "mask": ")" << mask << R"(", "kdim": )" << kd
    << R"(, "vdim": )" << vd << R"(, "scale": null, "bias": true, "max_q_len": )" << lq
    << R"(, "max_kv_len": )" << lk << "}]}";
  c.spec_json = s.str();
  const bool pad = mask == "key_padding";
  c.calib = make_inputs(rng, "attn", 64, lq, E, lk, cross ? kd : 0, cross ? vd : 0, pad, 1.0);
  c.test = first_samples(c.calib, 8);
  const bool causal = mask == "causal";
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("attn.query");
    const int n = static_cast<int>(q.shape[0]);
    out->assign(static_cast<size_t>(n) * lq * E, 0.0);
    wts->assign(static_cast<size_t>(n) * H * lq * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* qi = q.data.data() + static_cast<size_t>(i) * lq * E;
      const double* ki = cross ? in.at("attn.key").data.data() + static_cast<size_t>(i) * lk * kd : qi;
      const double* vi = cross ? in.at("attn.value").data.data() + static_cast<size_t>(i) * lk * vd : qi;
      const Mat Q = linear(qi, lq, E, wq.data, bq.data, E);
      const Mat K = linear(ki, lk, kd, wk.data, bk.data, E);
      const Mat V = linear(vi, lk, vd, wv.data, bv.data, E);
      Mat ctx(static_cast<size_t>(lq) * E, 0.0);
      const int valid = valid_of(in, "attn.kv_valid_len", i, lk);
      for (int h = 0; h < H; ++h) {
        for (int r = 0; r < lq; ++r) {
          int limit = valid;
          if (causal) limit = std::min(limit, r + 1 + (lk - lq));
          std::vector<double> sc(static_cast<size_t>(lk), 0.0);
          for (int j = 0; j < limit; ++j) {
            double acc = 0.0;
            for (int d = 0; d < hd; ++d) acc += Q[static_cast<size_t>(r) * E + h * hd + d] * K[static_cast<size_t>(j) * E + h * hd + d];
            sc[static_cast<size_t>(j)] = acc / std::sqrt(static_cast<double>(hd));
          }
          softmax_prefix(sc, limit);
          for (int j = 0; j < lk; ++j) {
            (*wts)[((static_cast<size_t>(i) * H + h) * lq + r) * lk + j] = sc[static_cast<size_t>(j)];
            for (int d = 0; d < hd; ++d) ctx[static_cast<size_t>(r) * E + h * hd + d] += sc[static_cast<size_t>(j)] * V[static_cast<size_t>(j) * E + h * hd + d];
          }
        }
      }
      const Mat o = linear(ctx.data(), lq, E, wo.data, bo.data, E);
      std::copy(o.begin(), o.end(), out->begin() + static_cast<long>(i) * lq * E);
    }
  };
  return c;
}

LayerCase additive_case(unsigned seed, bool separate_value) {
  Rng rng(seed);
  const int dq = 12, dk = 10, A = 8, lq = 5, lk = 9, dv = separate_value ? 6 : dk;
  LayerCase c;
  c.name = "bahdanau";
  const Array wq = random_weight(rng, {size_t(A), size_t(dq)}, 1.5), wk = random_weight(rng, {size_t(A), size_t(dk)}, 1.5);
  const Array b = random_weight(rng, {size_t(A)}, 0.5), v = random_weight(rng, {1, size_t(A)}, 4.0);
  c.weights = {{"attn.W_q.weight", wq}, {"attn.W_k.weight", wk}, {"attn.W_k.bias", b}, {"attn.v.weight", v}};
  c.spec_json = R"({"model": "test_additive", "layers": [{"name": "bahdanau", "kind": "additive", "query_dim": 12, "key_dim": 10, "attn_dim": 8,
    "tensors": {"w_q": "attn.W_q.weight", "w_k": "attn.W_k.weight", "b": "attn.W_k.bias", "v": "attn.v.weight"},
    "mask": "key_padding", "max_q_len": 5, "max_kv_len": 9}]})";
  if (separate_value) {
    c.spec_json.replace(c.spec_json.find("\"attn_dim\": 8"), 13, "\"attn_dim\": 8, \"value_dim\": 6");
  }
  c.calib = make_inputs(rng, "bahdanau", 64, lq, dq, lk, dk, separate_value ? dv : 0, true, 1.0);
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("bahdanau.query");
    const Array& k = in.at("bahdanau.key");
    const Array& vals = separate_value ? in.at("bahdanau.value") : k;
    const int n = static_cast<int>(q.shape[0]);
    out->assign(static_cast<size_t>(n) * lq * dv, 0.0);
    wts->assign(static_cast<size_t>(n) * lq * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* ki = k.data.data() + static_cast<size_t>(i) * lk * dk;
      const double* vi = vals.data.data() + static_cast<size_t>(i) * lk * dv;
      const Mat qp = linear(q.data.data() + static_cast<size_t>(i) * lq * dq, lq, dq, wq.data, {}, A);
      const Mat kp = linear(ki, lk, dk, wk.data, b.data, A);
      const int valid = valid_of(in, "bahdanau.kv_valid_len", i, lk);
      for (int r = 0; r < lq; ++r) {
        std::vector<double> sc(static_cast<size_t>(lk), 0.0);
        for (int j = 0; j < valid; ++j) {
          double acc = 0.0;
          for (int a = 0; a < A; ++a) acc += v.data[static_cast<size_t>(a)] * std::tanh(qp[static_cast<size_t>(r) * A + a] + kp[static_cast<size_t>(j) * A + a]);
          sc[static_cast<size_t>(j)] = acc;
        }
        softmax_prefix(sc, valid);
        for (int j = 0; j < lk; ++j) {
          (*wts)[(static_cast<size_t>(i) * lq + r) * lk + j] = sc[static_cast<size_t>(j)];
          for (int d = 0; d < dv; ++d) (*out)[(static_cast<size_t>(i) * lq + r) * dv + d] += sc[static_cast<size_t>(j)] * vi[static_cast<size_t>(j) * dv + d];
        }
      }
    }
  };
  return c;
}

LayerCase additive_tutorial_case(unsigned seed) {
  Rng rng(seed);
  const int H = 8, lq = 4, lk = 7, vocab = 13;
  LayerCase c;
  c.name = "attn";
  const Array wa = random_weight(rng, {size_t(H), size_t(H)}, 1.5), ba = random_weight(rng, {size_t(H)}, 3.0);
  const Array ua = random_weight(rng, {size_t(H), size_t(H)}, 1.5), bu = random_weight(rng, {size_t(H)}, 3.0);
  const Array va = random_weight(rng, {1, size_t(H)}, 4.0), bva = random_weight(rng, {1}, 1.0);
  c.weights = {{"embedding.weight", random_weight(rng, {size_t(vocab), size_t(H)})},
               {"attention.Wa.weight", wa},
               {"attention.Wa.bias", ba},
               {"attention.Ua.weight", ua},
               {"attention.Ua.bias", bu},
               {"attention.Va.weight", va},
               {"attention.Va.bias", bva},
               {"gru.weight_ih_l0", random_weight(rng, {size_t(3 * H), size_t(2 * H)})},
               {"gru.weight_hh_l0", random_weight(rng, {size_t(3 * H), size_t(H)})},
               {"gru.bias_ih_l0", random_weight(rng, {size_t(3 * H)})},
               {"gru.bias_hh_l0", random_weight(rng, {size_t(3 * H)})},
               {"out.weight", random_weight(rng, {size_t(vocab), size_t(H)})},
               {"out.bias", random_weight(rng, {size_t(vocab)})}};
  c.spec_json = R"({"model": "seq2seq_tutorial", "layers": [{"name": "attn", "kind": "additive",
    "query_dim": 8, "key_dim": 8, "attn_dim": 8,
    "tensors": {"w_q": "attention.Wa.weight", "b_q": "attention.Wa.bias", "w_k": "attention.Ua.weight",
                "b_k": "attention.Ua.bias", "v": "attention.Va.weight", "b_v": "attention.Va.bias"},
    "mask": "key_padding", "max_q_len": 4, "max_kv_len": 7}]})";
  c.calib = make_inputs(rng, "attn", 64, lq, H, lk, H, 0, true, 1.0);
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("attn.query");
    const Array& k = in.at("attn.key");
    const int n = static_cast<int>(q.shape[0]);
    out->assign(static_cast<size_t>(n) * lq * H, 0.0);
    wts->assign(static_cast<size_t>(n) * lq * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* keys = k.data.data() + static_cast<size_t>(i) * lk * H;
      const Mat wq = linear(q.data.data() + static_cast<size_t>(i) * lq * H, lq, H, wa.data, ba.data, H);  // Wa(query)
      const Mat uk = linear(keys, lk, H, ua.data, bu.data, H);                                             // Ua(keys)
      const int valid = valid_of(in, "attn.kv_valid_len", i, lk);
      for (int r = 0; r < lq; ++r) {
        std::vector<double> scores(static_cast<size_t>(lk), 0.0);
        for (int j = 0; j < valid; ++j) {
          Mat t(static_cast<size_t>(H));  // tanh(Wa(query) + Ua(keys))
          for (int a = 0; a < H; ++a) {
            t[static_cast<size_t>(a)] = std::tanh(wq[static_cast<size_t>(r) * H + a] + uk[static_cast<size_t>(j) * H + a]);
          }
          scores[static_cast<size_t>(j)] = linear(t.data(), 1, H, va.data, bva.data, 1)[0];  // Va(...)
        }
        softmax_prefix(scores, valid);
        for (int j = 0; j < lk; ++j) {
          (*wts)[(static_cast<size_t>(i) * lq + r) * lk + j] = scores[static_cast<size_t>(j)];
          for (int d = 0; d < H; ++d) {
            (*out)[(static_cast<size_t>(i) * lq + r) * H + d] += scores[static_cast<size_t>(j)] * keys[static_cast<size_t>(j) * H + d];
          }
        }
      }
    }
  };
  return c;
}

std::string spec_without(const std::string& spec_json, const std::string& field) {
  const std::string key = "\"" + field + "\": ";
  const size_t at = spec_json.find(key);
  if (at == std::string::npos) throw std::runtime_error("fixture: no " + field + " in the spec");
  const size_t end = spec_json.find_first_of(",}", spec_json.find('"', at + key.size() + 1));
  std::string s = spec_json;
  // "b_q": "x", -> removed with its comma (or the comma before it, at the end of an object).
  if (s[end] == ',') return s.erase(at, end + 1 - at);
  const size_t comma = s.rfind(',', at);
  return s.erase(comma, end - comma);
}

LayerCase luong_case(const std::string& score, unsigned seed) {
  Rng rng(seed);
  const bool general = score == "general";
  const int dq = general ? 12 : 16, dk = general ? 10 : 16, lq = 5, lk = 11;
  LayerCase c;
  c.name = "luong";
  // torch: nn.Linear(key_dim, query_dim).weight, [query_dim][key_dim]; score = q^T W k.
  const Array W = random_weight(rng, {size_t(dq), size_t(dk)}, 1.0);
  if (general) c.weights = {{"attn.W.weight", W}};
  else c.weights = {{"unused.weight", random_weight(rng, {4})}};
  std::ostringstream s;
  s << R"({"model": "test_luong", "layers": [{"name": "luong", "kind": "luong", "score": ")" << score
    << R"(", "query_dim": )" << dq << R"(, "key_dim": )" << dk << R"(, "value_dim": )" << dk
    << (general ? R"(, "tensors": {"w": "attn.W.weight"})" : "")
    << R"(, "mask": "key_padding", "max_q_len": 5, "max_kv_len": 11}]})";
  c.spec_json = s.str();
  const double sigma = score == "scaled_dot" ? 1.0 : 0.5;
  c.calib = make_inputs(rng, "luong", 64, lq, dq, lk, dk, 0, true, sigma);
  c.test = first_samples(c.calib, 8);
  const double scale = score == "scaled_dot" ? 1.0 / std::sqrt(static_cast<double>(dk)) : 1.0;
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("luong.query");
    const Array& k = in.at("luong.key");
    const int n = static_cast<int>(q.shape[0]);
    out->assign(static_cast<size_t>(n) * lq * dk, 0.0);
    wts->assign(static_cast<size_t>(n) * lq * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* qi = q.data.data() + static_cast<size_t>(i) * lq * dq;
      const double* ki = k.data.data() + static_cast<size_t>(i) * lk * dk;
      const int valid = valid_of(in, "luong.kv_valid_len", i, lk);
      for (int r = 0; r < lq; ++r) {
        std::vector<double> sc(static_cast<size_t>(lk), 0.0);
        for (int j = 0; j < valid; ++j) {
          double acc = 0.0;
          if (general) {
            for (int a = 0; a < dq; ++a)
              for (int b = 0; b < dk; ++b) acc += qi[static_cast<size_t>(r) * dq + a] * W.data[static_cast<size_t>(a) * dk + b] * ki[static_cast<size_t>(j) * dk + b];
          } else {
            for (int d = 0; d < dk; ++d) acc += qi[static_cast<size_t>(r) * dq + d] * ki[static_cast<size_t>(j) * dk + d];
          }
          sc[static_cast<size_t>(j)] = acc * scale;
        }
        softmax_prefix(sc, valid);
        for (int j = 0; j < lk; ++j) {
          (*wts)[(static_cast<size_t>(i) * lq + r) * lk + j] = sc[static_cast<size_t>(j)];
          for (int d = 0; d < dk; ++d) (*out)[(static_cast<size_t>(i) * lq + r) * dk + d] += sc[static_cast<size_t>(j)] * ki[static_cast<size_t>(j) * dk + d];
        }
      }
    }
  };
  return c;
}

LayerCase pooling_case(unsigned seed) {
  Rng rng(seed);
  const int D = 16, lk = 9;
  LayerCase c;
  c.name = "pool";
  const Array w = random_weight(rng, {1, size_t(D)}, 4.0);
  c.weights = {{"pool.query.weight", w}};
  c.spec_json = R"({"model": "test_pool", "layers": [{"name": "pool", "kind": "pooling", "dim": 16,
    "tensors": {"query": "pool.query.weight"}, "mask": "key_padding", "max_kv_len": 9}]})";
  c.calib = make_inputs(rng, "pool", 64, 1, 0, lk, D, 0, true, 1.0);
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& k = in.at("pool.key");
    const int n = static_cast<int>(k.shape[0]);
    out->assign(static_cast<size_t>(n) * D, 0.0);
    wts->assign(static_cast<size_t>(n) * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* ki = k.data.data() + static_cast<size_t>(i) * lk * D;
      const int valid = valid_of(in, "pool.kv_valid_len", i, lk);
      std::vector<double> sc(static_cast<size_t>(lk), 0.0);
      for (int j = 0; j < valid; ++j) {
        double acc = 0.0;
        for (int d = 0; d < D; ++d) acc += w.data[static_cast<size_t>(d)] * ki[static_cast<size_t>(j) * D + d];
        sc[static_cast<size_t>(j)] = acc;
      }
      softmax_prefix(sc, valid);
      for (int j = 0; j < lk; ++j) {
        (*wts)[static_cast<size_t>(i) * lk + j] = sc[static_cast<size_t>(j)];
        for (int d = 0; d < D; ++d) (*out)[static_cast<size_t>(i) * D + d] += sc[static_cast<size_t>(j)] * ki[static_cast<size_t>(j) * D + d];
      }
    }
  };
  return c;
}

LayerCase linear_case(unsigned seed) {
  Rng rng(seed);
  const int in = 30, out = 21, lq = 7;  // in not a multiple of 4, out a ragged 16-channel block
  LayerCase c;
  c.name = "linear";
  const Array w = random_weight(rng, {size_t(out), size_t(in)}, 2.0);
  const Array b = random_weight(rng, {size_t(out)}, 1.0);
  c.weights = {{"head.weight", w}, {"head.bias", b}};
  c.spec_json = R"({"model": "test_linear", "layers": [{"name": "head", "kind": "linear", "prefix": "head.",
    "max_q_len": 7}]})";
  c.calib = make_inputs(rng, "head", 64, lq, in, 0, 0, 0, false, 1.0);
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& inputs, std::vector<double>* y, std::vector<double>* wts) {
    const Array& q = inputs.at("head.query");
    const int n = static_cast<int>(q.shape[0]);
    y->clear();
    wts->clear();  // no attention weights
    for (int i = 0; i < n; ++i) {
      const Mat r = linear(q.data.data() + static_cast<size_t>(i) * lq * in, lq, in, w.data, b.data, out);
      y->insert(y->end(), r.begin(), r.end());
    }
  };
  return c;
}

namespace {

// nn.LayerNorm over each of `rows` rows of width d (biased variance).
Mat layer_norm(const double* x, int rows, int d, const std::vector<double>& g, const std::vector<double>& b,
               double eps) {
  Mat y(static_cast<size_t>(rows) * d);
  for (int r = 0; r < rows; ++r) {
    const double* xr = x + static_cast<size_t>(r) * d;
    double mean = 0, var = 0;
    for (int k = 0; k < d; ++k) mean += xr[k];
    mean /= d;
    for (int k = 0; k < d; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    var /= d;
    for (int k = 0; k < d; ++k) y[static_cast<size_t>(r) * d + k] = (xr[k] - mean) / std::sqrt(var + eps) * g[k] + b[k];
  }
  return y;
}

// PyTorch's exact GELU, x * Phi(x).
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// One nn.MultiheadAttention over packed in_proj weights [3E][E] (q from x,
// k and v from mem): queries attend to keys j < valid (and j <= r when
// causal); its weights [H][lq][lk] into w when not null.
Mat mha_packed(const double* x, int lq, const double* mem, int lk, int E, int H, const Array& wqkv,
               const Array& bqkv, const Array& wo, const Array& bo, int valid, bool causal, double* w) {
  const int hd = E / H;
  const size_t EE = static_cast<size_t>(E) * E;
  const std::vector<double> wq(wqkv.data.begin(), wqkv.data.begin() + EE);
  const std::vector<double> wk(wqkv.data.begin() + EE, wqkv.data.begin() + 2 * EE);
  const std::vector<double> wv(wqkv.data.begin() + 2 * EE, wqkv.data.end());
  const std::vector<double> bq(bqkv.data.begin(), bqkv.data.begin() + E);
  const std::vector<double> bk(bqkv.data.begin() + E, bqkv.data.begin() + 2 * E);
  const std::vector<double> bv(bqkv.data.begin() + 2 * E, bqkv.data.end());
  const Mat Q = linear(x, lq, E, wq, bq, E), K = linear(mem, lk, E, wk, bk, E), V = linear(mem, lk, E, wv, bv, E);
  Mat ctx(static_cast<size_t>(lq) * E, 0.0);
  for (int h = 0; h < H; ++h) {
    for (int r = 0; r < lq; ++r) {
      const int limit = causal ? std::min(valid, r + 1) : valid;
      std::vector<double> sc(static_cast<size_t>(lk), 0.0);
      for (int j = 0; j < limit; ++j) {
        double acc = 0.0;
        for (int k = 0; k < hd; ++k) acc += Q[static_cast<size_t>(r) * E + h * hd + k] * K[static_cast<size_t>(j) * E + h * hd + k];
        sc[static_cast<size_t>(j)] = acc / std::sqrt(static_cast<double>(hd));
      }
      softmax_prefix(sc, limit);
      for (int j = 0; j < lk; ++j) {
        if (w != nullptr) w[(static_cast<size_t>(h) * lq + r) * lk + j] = sc[static_cast<size_t>(j)];
        for (int k = 0; k < hd; ++k) ctx[static_cast<size_t>(r) * E + h * hd + k] += sc[static_cast<size_t>(j)] * V[static_cast<size_t>(j) * E + h * hd + k];
      }
    }
  }
  return linear(ctx.data(), lq, E, wo.data, bo.data, E);
}

void add_to(Mat* y, const Mat& a) {
  for (size_t k = 0; k < y->size(); ++k) (*y)[k] += a[k];
}

// fc2(act(fc1(x))) over rows.
Mat mlp(const double* x, int rows, int d, int hidden, const Array& w1, const Array& b1, const Array& w2,
        const Array& b2, bool relu) {
  Mat h = linear(x, rows, d, w1.data, b1.data, hidden);
  for (double& v : h) v = relu ? std::max(v, 0.0) : gelu(v);
  return linear(h.data(), rows, hidden, w2.data, b2.data, d);
}

}  // namespace

LayerCase layernorm_case(unsigned seed) {
  Rng rng(seed);
  const int d = 27, lq = 6;  // d not a multiple of 4 or 16
  LayerCase c;
  c.name = "norm";
  Array g = random_weight(rng, {size_t(d)}, 1.0), b = random_weight(rng, {size_t(d)}, 0.5);
  for (double& v : g.data) v += 1.0;  // gains around 1, as trained ones are
  c.weights = {{"norm.weight", g}, {"norm.bias", b}};
  c.spec_json = R"({"model": "test_layernorm", "layers": [{"name": "norm", "kind": "layernorm", "prefix": "norm.",
    "dim": 27, "eps": 1e-6, "max_q_len": 6}]})";
  Entries in = make_inputs(rng, "norm", 64, lq, d, 0, 0, 0, false, 1.0);
  // Rows with an offset and a spread of their own, as a residual stream has.
  for (size_t i = 0; i < in[0].second.data.size(); ++i) in[0].second.data[i] = 3.0 * in[0].second.data[i] + 0.7;
  c.calib = in;
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& inputs, std::vector<double>* y, std::vector<double>* wts) {
    const Array& q = inputs.at("norm.query");
    const int n = static_cast<int>(q.shape[0]);
    y->clear();
    wts->clear();
    for (int i = 0; i < n; ++i) {
      const Mat r = layer_norm(q.data.data() + static_cast<size_t>(i) * lq * d, lq, d, g.data, b.data, 1e-6);
      y->insert(y->end(), r.begin(), r.end());
    }
  };
  return c;
}

LayerCase ffn_case(unsigned seed) {
  Rng rng(seed);
  const int d = 24, hidden = 37, lq = 5;  // a ragged hidden width
  LayerCase c;
  c.name = "mlp";
  const Array w1 = random_weight(rng, {size_t(hidden), size_t(d)}, 2.0), b1 = random_weight(rng, {size_t(hidden)}, 1.0);
  const Array w2 = random_weight(rng, {size_t(d), size_t(hidden)}, 2.0), b2 = random_weight(rng, {size_t(d)}, 1.0);
  c.weights = {{"mlp.fc1.weight", w1}, {"mlp.fc1.bias", b1}, {"mlp.fc2.weight", w2}, {"mlp.fc2.bias", b2}};
  c.spec_json = R"({"model": "test_ffn", "layers": [{"name": "mlp", "kind": "ffn", "preset": "mlp", "prefix": "mlp.",
    "dim": 24, "activation": "gelu", "max_q_len": 5}]})";
  c.calib = make_inputs(rng, "mlp", 64, lq, d, 0, 0, 0, false, 1.0);
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& inputs, std::vector<double>* y, std::vector<double>* wts) {
    const Array& q = inputs.at("mlp.query");
    const int n = static_cast<int>(q.shape[0]);
    y->clear();
    wts->clear();
    for (int i = 0; i < n; ++i) {
      const Mat r = mlp(q.data.data() + static_cast<size_t>(i) * lq * d, lq, d, hidden, w1, b1, w2, b2, false);
      y->insert(y->end(), r.begin(), r.end());
    }
  };
  return c;
}

LayerCase encoder_block_case(unsigned seed, bool norm_first) {
  Rng rng(seed);
  const int E = 16, H = 2, F = 40, lq = 9;
  LayerCase c;
  c.name = "block";
  const Array wqkv = random_weight(rng, {size_t(3 * E), size_t(E)}), bqkv = random_weight(rng, {size_t(3 * E)}, 0.5);
  const Array wo = random_weight(rng, {size_t(E), size_t(E)}), bo = random_weight(rng, {size_t(E)}, 0.5);
  Array g1 = random_weight(rng, {size_t(E)}, 0.5), n1b = random_weight(rng, {size_t(E)}, 0.3);
  Array g2 = random_weight(rng, {size_t(E)}, 0.5), n2b = random_weight(rng, {size_t(E)}, 0.3);
  for (double& v : g1.data) v += 1.0;
  for (double& v : g2.data) v += 1.0;
  const Array w1 = random_weight(rng, {size_t(F), size_t(E)}), b1 = random_weight(rng, {size_t(F)}, 0.5);
  const Array w2 = random_weight(rng, {size_t(E), size_t(F)}), b2 = random_weight(rng, {size_t(E)}, 0.5);
  const std::string p = "enc.";
  c.weights = {{p + "self_attn.in_proj_weight", wqkv}, {p + "self_attn.in_proj_bias", bqkv},
               {p + "self_attn.out_proj.weight", wo},  {p + "self_attn.out_proj.bias", bo},
               {p + "norm1.weight", g1}, {p + "norm1.bias", n1b}, {p + "norm2.weight", g2}, {p + "norm2.bias", n2b},
               {p + "linear1.weight", w1}, {p + "linear1.bias", b1}, {p + "linear2.weight", w2},
               {p + "linear2.bias", b2}};
  std::ostringstream s;
  s << R"({"model": "test_encoder_block", "layers": [{"name": "block", "kind": "encoder_block", "preset": "torch",
    "prefix": "enc.", "embed_dim": 16, "num_heads": 2, "ffn_dim": 40, "norm_first": )"
    << (norm_first ? "true" : "false") << R"(, "mask": "key_padding", "max_q_len": 9}]})";
  c.spec_json = s.str();
  c.self_padding = true;
  c.calib = make_inputs(rng, "block", 64, lq, E, lq, 0, 0, true, 1.0);
  c.test = first_samples(c.calib, 8);
  // nn.TransformerEncoderLayer (ReLU, eps 1e-5) with src_key_padding_mask;
  // the attention weights are the self-attention's, per head.
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("block.query");
    const int n = static_cast<int>(q.shape[0]);
    out->clear();
    wts->assign(static_cast<size_t>(n) * H * lq * lq, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* x = q.data.data() + static_cast<size_t>(i) * lq * E;
      const int valid = valid_of(in, "block.kv_valid_len", i, lq);
      double* w = wts->data() + static_cast<size_t>(i) * H * lq * lq;
      Mat y(x, x + static_cast<size_t>(lq) * E);
      if (norm_first) {  // x + attn(norm1(x)), then + ffn(norm2(.))
        const Mat n1 = layer_norm(y.data(), lq, E, g1.data, n1b.data, 1e-5);
        add_to(&y, mha_packed(n1.data(), lq, n1.data(), lq, E, H, wqkv, bqkv, wo, bo, valid, false, w));
        add_to(&y, mlp(layer_norm(y.data(), lq, E, g2.data, n2b.data, 1e-5).data(), lq, E, F, w1, b1, w2, b2, true));
      } else {  // norm1(x + attn(x)), then norm2(. + ffn(.))
        add_to(&y, mha_packed(y.data(), lq, y.data(), lq, E, H, wqkv, bqkv, wo, bo, valid, false, w));
        y = layer_norm(y.data(), lq, E, g1.data, n1b.data, 1e-5);
        add_to(&y, mlp(y.data(), lq, E, F, w1, b1, w2, b2, true));
        y = layer_norm(y.data(), lq, E, g2.data, n2b.data, 1e-5);
      }
      out->insert(out->end(), y.begin(), y.end());
    }
  };
  return c;
}

LayerCase decoder_block_case(unsigned seed) {
  Rng rng(seed);
  const int E = 16, H = 4, F = 24, lq = 6, lk = 7;
  LayerCase c;
  c.name = "dec";
  const std::string p = "dec.";
  const Array sqkv = random_weight(rng, {size_t(3 * E), size_t(E)}), sqkv_b = random_weight(rng, {size_t(3 * E)}, 0.5);
  const Array so = random_weight(rng, {size_t(E), size_t(E)}), so_b = random_weight(rng, {size_t(E)}, 0.5);
  const Array cqkv = random_weight(rng, {size_t(3 * E), size_t(E)}), cqkv_b = random_weight(rng, {size_t(3 * E)}, 0.5);
  const Array co = random_weight(rng, {size_t(E), size_t(E)}), co_b = random_weight(rng, {size_t(E)}, 0.5);
  Array g[3], nb[3];
  for (int k = 0; k < 3; ++k) {
    g[k] = random_weight(rng, {size_t(E)}, 0.5);
    for (double& v : g[k].data) v += 1.0;
    nb[k] = random_weight(rng, {size_t(E)}, 0.3);
  }
  const Array w1 = random_weight(rng, {size_t(F), size_t(E)}), b1 = random_weight(rng, {size_t(F)}, 0.5);
  const Array w2 = random_weight(rng, {size_t(E), size_t(F)}), b2 = random_weight(rng, {size_t(E)}, 0.5);
  c.weights = {{p + "self_attn.in_proj_weight", sqkv},      {p + "self_attn.in_proj_bias", sqkv_b},
               {p + "self_attn.out_proj.weight", so},       {p + "self_attn.out_proj.bias", so_b},
               {p + "multihead_attn.in_proj_weight", cqkv}, {p + "multihead_attn.in_proj_bias", cqkv_b},
               {p + "multihead_attn.out_proj.weight", co},  {p + "multihead_attn.out_proj.bias", co_b},
               {p + "norm1.weight", g[0]}, {p + "norm1.bias", nb[0]}, {p + "norm2.weight", g[1]},
               {p + "norm2.bias", nb[1]},  {p + "norm3.weight", g[2]}, {p + "norm3.bias", nb[2]},
               {p + "linear1.weight", w1}, {p + "linear1.bias", b1}, {p + "linear2.weight", w2},
               {p + "linear2.bias", b2}};
  c.spec_json = R"({"model": "test_decoder_block", "layers": [{"name": "dec", "kind": "decoder_block",
    "preset": "torch", "prefix": "dec.", "embed_dim": 16, "num_heads": 4, "ffn_dim": 24, "mask": "key_padding",
    "max_q_len": 6, "max_kv_len": 7}]})";
  c.calib = make_inputs(rng, "dec", 64, lq, E, lk, E, 0, true, 1.0);
  c.test = first_samples(c.calib, 8);
  // nn.TransformerDecoderLayer (post-norm, ReLU, eps 1e-5) with a causal
  // target mask and memory_key_padding_mask; the attention weights are the
  // cross-attention's, per head.
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("dec.query");
    const Array& mem = in.at("dec.key");
    const int n = static_cast<int>(q.shape[0]);
    out->clear();
    wts->assign(static_cast<size_t>(n) * H * lq * lk, 0.0);
    for (int i = 0; i < n; ++i) {
      const double* x = q.data.data() + static_cast<size_t>(i) * lq * E;
      const double* m = mem.data.data() + static_cast<size_t>(i) * lk * E;
      const int valid = valid_of(in, "dec.kv_valid_len", i, lk);
      Mat y(x, x + static_cast<size_t>(lq) * E);
      add_to(&y, mha_packed(y.data(), lq, y.data(), lq, E, H, sqkv, sqkv_b, so, so_b, lq, true, nullptr));
      y = layer_norm(y.data(), lq, E, g[0].data, nb[0].data, 1e-5);
      add_to(&y, mha_packed(y.data(), lq, m, lk, E, H, cqkv, cqkv_b, co, co_b, valid, false,
                            wts->data() + static_cast<size_t>(i) * H * lq * lk));
      y = layer_norm(y.data(), lq, E, g[1].data, nb[1].data, 1e-5);
      add_to(&y, mlp(y.data(), lq, E, F, w1, b1, w2, b2, true));
      y = layer_norm(y.data(), lq, E, g[2].data, nb[2].data, 1e-5);
      out->insert(out->end(), y.begin(), y.end());
    }
  };
  return c;
}

namespace {
// Removes every directory temp_dir() made when the test process exits.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const std::string& d : dirs) std::filesystem::remove_all(d, ec);
  }
};
TempDirs g_temp_dirs;
}  // namespace

std::string temp_dir(const std::string& tag) {
  const char* base = std::getenv("TMPDIR");
  std::string t = std::string(base != nullptr ? base : "/tmp") + "/ea_conv_" + tag + "_XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  g_temp_dirs.dirs.push_back(buf.data());
  return buf.data();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::string convert_files(const std::string& dir, const Entries& weights, const std::string& spec,
                          const Entries& calib, const std::string& dtype, const std::string& residual) {
  using namespace edgeattn::convert;  // NOLINT(build/namespaces)
  save_safetensors(dir + "/weights.safetensors", weights);
  write_text(dir + "/spec.json", spec);
  save_npz(dir + "/calib.npz", calib);
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = dtype;
  if (!residual.empty()) o.residual = residual;
  o.output = dir + "/model_" + dtype + ".eatn";
  std::ostringstream report;
  run_convert(o, report);
  return o.output;
}

LayerCase embedding_case(unsigned seed) {
  Rng rng(seed);
  const int vocab = 23, dim = 12, lq = 7;
  LayerCase c;
  c.name = "emb";
  Array table = random_normal(rng, {size_t(vocab), size_t(dim)}, 1.0, "F32");
  // The table's extremes in rows the calibration ids (0..9) never use.
  table.data[20 * dim + 3] = 4.5;
  table.data[15 * dim + 0] = -4.75;
  c.weights = {{"tok.weight", table}};
  c.spec_json = R"({"model": "test_embedding", "layers": [{"name": "emb", "kind": "embedding", "prefix": "tok.",
    "scale": 2.0, "max_q_len": 7}]})";
  // Calibration ids use only the first 10 tokens: the output range must still be the table's.
  std::vector<double> ids;
  for (int i = 0; i < 16 * lq; ++i) ids.push_back(rng.integer(0, 9));
  c.calib = {{"emb.query", make("<i4", {16, size_t(lq)}, ids)}};
  std::vector<double> test;
  for (int i = 0; i < 5 * lq; ++i) test.push_back(i % vocab);  // every id, 0..22, then 0..11
  c.test["emb.query"] = make("<i4", {5, size_t(lq)}, test);
  c.reference = [=](const ArrayMap& inputs, std::vector<double>* y, std::vector<double>* wts) {
    const Array& q = inputs.at("emb.query");
    y->clear();
    wts->clear();  // no attention weights
    for (double id : q.data) {
      for (int k = 0; k < dim; ++k) y->push_back(2.0 * table.data[static_cast<size_t>(id) * dim + k]);
    }
  };
  return c;
}

LayerCase argmax_case(unsigned seed, int k) {
  Rng rng(seed);
  const int dim = 13, lq = 6;
  LayerCase c;
  c.name = "top";
  c.spec_json = R"({"model": "test_argmax", "layers": [{"name": "top", "kind": "argmax", "dim": 13, "k": )" +
                std::to_string(k) + R"(, "max_q_len": 6}]})";
  const auto grid_rows = [&](int n) {
    std::vector<double> v(static_cast<size_t>(n) * lq * dim);
    for (double& x : v) x = 0.5 * rng.integer(-8, 8);
    v[0] = -4.0;  // the grid's ends in the first sample: the calibrated range is [-4, 4]
    v[1] = 4.0;
    return make("<f4", {size_t(n), size_t(lq), size_t(dim)}, v);
  };
  c.calib = {{"top.query", grid_rows(32)}};
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& inputs, std::vector<double>* y, std::vector<double>* wts) {
    const Array& q = inputs.at("top.query");
    const size_t rows = q.data.size() / dim;
    y->clear();
    wts->clear();
    for (size_t r = 0; r < rows; ++r) {
      std::vector<int> order(dim);
      for (int i = 0; i < dim; ++i) order[static_cast<size_t>(i)] = i;
      const double* x = q.data.data() + r * dim;
      // stable: equal values keep increasing index order
      std::stable_sort(order.begin(), order.end(), [x](int a, int b) { return x[a] > x[b]; });
      for (int j = 0; j < k; ++j) y->push_back(order[static_cast<size_t>(j)]);
    }
  };
  return c;
}

LayerCase positions_case(const std::string& table, unsigned seed) {
  Rng rng(seed);
  const int D = 12, lq = 7;
  const bool learned = table == "learned";
  const int nc = learned ? 1 : 2;
  LayerCase c;
  c.name = "pos_" + table;
  const Array cls = random_normal(rng, {1, size_t(nc), size_t(D)}, 0.5, "F32");
  const Array pos = random_normal(rng, {1, size_t(nc + lq), size_t(D)}, 0.3, "F32");
  if (learned) {
    c.weights = {{"cls_token", cls}, {"pos_embed", pos}};
    c.spec_json = R"({"model": "test_positions", "layers": [{"name": "tok", "kind": "positions", "max_q_len": 7}]})";
  } else {
    c.weights = {{"front.cls", make("F32", {size_t(nc), size_t(D)}, cls.data)}};
    c.spec_json = R"({"model": "test_positions", "layers": [{"name": "tok", "kind": "positions", "num_cls": 2,
      "table": "sinusoidal", "tensors": {"cls_token": "front.cls"}, "mask": "key_padding", "max_q_len": 7}]})";
  }
  c.calib = make_inputs(rng, "tok", 64, lq, D, lq, 0, 0, !learned, 1.0);
  std::vector<double>& x = c.calib[0].second.data;
  for (size_t i = 0; i < x.size(); ++i) x[i] += 0.1 * static_cast<double>(i % D);  // columns off zero
  if (!learned) {  // padded rows hold zeros, as a padded batch does
    for (int i = 0; i < 64; ++i) {
      const int valid = static_cast<int>(c.calib[1].second.data[static_cast<size_t>(i)]);
      std::fill(x.begin() + (static_cast<long>(i) * lq + valid) * D, x.begin() + (static_cast<long>(i) + 1) * lq * D, 0.0);
    }
  }
  c.test = first_samples(c.calib, 8);
  // Row r: (r < nc ? cls[r] : x[r - nc]) + pos[r]; the sinusoidal table as
  // sin(r w) / cos(r w), w = exp(-ln(10000) 2i / D) for columns 2i, 2i + 1.
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& q = in.at("tok.query");
    const int n = static_cast<int>(q.shape[0]);
    out->clear();
    wts->clear();
    for (int i = 0; i < n; ++i) {
      for (int r = 0; r < lq + nc; ++r) {
        for (int k = 0; k < D; ++k) {
          const double v = r < nc ? cls.data[static_cast<size_t>(r) * D + k]
                                  : q.data[(static_cast<size_t>(i) * lq + (r - nc)) * D + k];
          const double w = std::exp(-std::log(10000.0) * (k / 2 * 2) / D);
          const double p = learned ? pos.data[static_cast<size_t>(r) * D + k]
                                   : (k % 2 == 0 ? std::sin(r * w) : std::cos(r * w));
          out->push_back(v + p);
        }
      }
    }
  };
  return c;
}

LayerCase row_pool_case(const std::string& mode, unsigned seed) {
  Rng rng(seed);
  const int D = 10, lk = 9;
  LayerCase c;
  c.name = "rowpool_" + mode;
  c.spec_json = R"({"model": "test_row_pool", "layers": [{"name": "pool", "kind": "row_pool", "mode": ")" + mode +
                R"(", "dim": 10, "mask": "key_padding", "max_kv_len": 9}]})";
  c.calib = make_inputs(rng, "pool", 64, 1, 0, lk, D, 0, true, 1.0);
  std::vector<double>& x = c.calib[0].second.data;
  for (size_t i = 0; i < x.size(); ++i) x[i] += 0.2 * static_cast<double>(i % D) - 0.5;  // columns off zero
  c.test = first_samples(c.calib, 8);
  const bool mean = mode == "mean";
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& k = in.at("pool.key");
    const int n = static_cast<int>(k.shape[0]);
    out->clear();
    wts->clear();
    for (int i = 0; i < n; ++i) {
      const int valid = mean ? valid_of(in, "pool.kv_valid_len", i, lk) : 1;
      for (int d = 0; d < D; ++d) {
        double s = 0.0;
        for (int j = 0; j < valid; ++j) s += k.data[(static_cast<size_t>(i) * lk + j) * D + d];
        out->push_back(s / valid);
      }
    }
  };
  return c;
}

Entries torch_kwt_weights(Rng& rng, bool to_out, int features, int dim, int mlp, int depth, int classes, int rows) {
  const size_t D = static_cast<size_t>(dim), M = static_cast<size_t>(mlp);
  auto gain_one = [](Array a) {
    for (double& v : a.data) v += 1.0;
    return a;
  };
  Entries w = {{"to_patch_embedding.1.weight", random_weight(rng, {D, static_cast<size_t>(features)}, 1.5)},
               {"to_patch_embedding.1.bias", random_weight(rng, {D}, 0.5)},
               {"pos_embedding", random_normal(rng, {1, static_cast<size_t>(rows), D}, 0.5, "F32")},
               {"cls_token", random_normal(rng, {1, 1, D}, 0.5, "F32")}};
  for (int i = 0; i < depth; ++i) {
    const std::string b = "transformer.layers." + std::to_string(i) + ".";
    w.emplace_back(b + "0.norm.weight", gain_one(random_weight(rng, {D}, 0.5)));
    w.emplace_back(b + "0.norm.bias", random_weight(rng, {D}, 0.3));
    w.emplace_back(b + "0.fn.to_qkv.weight", random_weight(rng, {3 * D, D}, 2.0));
    if (to_out) {
      w.emplace_back(b + "0.fn.to_out.0.weight", random_weight(rng, {D, D}, 1.5));
      w.emplace_back(b + "0.fn.to_out.0.bias", random_weight(rng, {D}, 0.3));
    }
    w.emplace_back(b + "1.norm.weight", gain_one(random_weight(rng, {D}, 0.5)));
    w.emplace_back(b + "1.norm.bias", random_weight(rng, {D}, 0.3));
    w.emplace_back(b + "1.fn.net.0.weight", random_weight(rng, {M, D}, 2.0));
    w.emplace_back(b + "1.fn.net.0.bias", random_weight(rng, {M}, 0.5));
    w.emplace_back(b + "1.fn.net.3.weight", random_weight(rng, {D, M}, 1.5));
    w.emplace_back(b + "1.fn.net.3.bias", random_weight(rng, {D}, 0.3));
  }
  w.emplace_back("mlp_head.0.weight", gain_one(random_weight(rng, {D}, 0.5)));
  w.emplace_back("mlp_head.0.bias", random_weight(rng, {D}, 0.3));
  w.emplace_back("mlp_head.1.weight", random_weight(rng, {static_cast<size_t>(classes), D}, 2.0));
  w.emplace_back("mlp_head.1.bias", random_weight(rng, {static_cast<size_t>(classes)}, 0.5));
  return w;
}

LayerCase add_case(unsigned seed) {
  Rng rng(seed);
  const int D = 12, L = 7;
  LayerCase c;
  c.name = "add";
  c.spec_json = R"({"model": "test_add", "layers": [{"name": "res", "kind": "add", "dim": 12, "max_q_len": 7}]})";
  c.calib = make_inputs(rng, "res", 64, L, D, L, D, 0, false, 1.0);
  std::vector<double>& r = c.calib[1].second.data;  // the residual: wider, off zero
  for (size_t i = 0; i < r.size(); ++i) r[i] = 3.0 * r[i] + 0.4 * static_cast<double>(i % D) - 1.0;
  c.test = first_samples(c.calib, 8);
  c.reference = [=](const ArrayMap& in, std::vector<double>* out, std::vector<double>* wts) {
    const Array& x = in.at("res.query");
    const Array& k = in.at("res.key");
    out->resize(x.data.size());
    for (size_t i = 0; i < x.data.size(); ++i) (*out)[i] = x.data[i] + k.data[i];
    wts->clear();
  };
  return c;
}

ArrayMap tutorial_transformer(const ArrayMap& bundled, const Array* positions) {
  const double dim = static_cast<double>(bundled.at("src_emb.weight").shape[1]);
  const std::pair<std::string, std::string> parts[] = {
      {"cross_attn.", "multihead_attn."}, {"ff1.", "linear1."}, {"ff2.", "linear2."}};
  ArrayMap out;
  for (const auto& [name, a] : bundled) {
    std::string to = name;
    Array t = a;
    for (const std::string side : {"encoder.", "decoder."}) {
      if (name.rfind(side, 0) != 0) continue;
      std::string rest = name.substr(side.size());
      if (rest.rfind("norm_out.", 0) == 0) {
        to = "transformer." + side + "norm." + rest.substr(9);
      } else {
        for (const auto& [from, into] : parts) {
          if (rest.rfind(from, 0) == 0) rest = into + rest.substr(from.size());
        }
        to = "transformer." + side + "layers.0." + rest;
      }
    }
    if (name == "src_emb.weight" || name == "tgt_emb.weight") {
      to = name == "src_emb.weight" ? "src_tok_emb.embedding.weight" : "tgt_tok_emb.embedding.weight";
      for (double& v : t.data) v /= std::sqrt(dim);
    }
    if (name == "out.weight" || name == "out.bias") to = "generator" + name.substr(3);
    if (name == "src_pos" || name == "tgt_pos") {
      if (positions != nullptr) continue;
      if (name == "src_pos") {
        to = "positional_encoding.pos_embedding";
        t.shape = {a.shape[0], 1, a.shape[1]};
      }
    }
    out[to] = t;
  }
  if (positions != nullptr) out["positional_encoding.pos_embedding"] = *positions;
  return out;
}

Array tutorial_position_buffer(size_t maxlen, int dim) {
  Array a;
  a.dtype = "F32";
  a.shape = {maxlen, 1, static_cast<size_t>(dim)};
  a.data.resize(maxlen * static_cast<size_t>(dim));
  for (size_t p = 0; p < maxlen; ++p) {
    for (int i = 0; i + 1 < dim; i += 2) {
      const float den = std::exp(-static_cast<float>(i) * std::log(10000.0f) / static_cast<float>(dim));
      const float angle = static_cast<float>(p) * den;
      a.data[p * static_cast<size_t>(dim) + static_cast<size_t>(i)] = std::sin(angle);
      a.data[p * static_cast<size_t>(dim) + static_cast<size_t>(i) + 1] = std::cos(angle);
    }
  }
  return a;
}

}  // namespace fixtures
