#include "converter/eval/plain_int8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "converter/base/error.h"
#include "converter/kinds/mha.h"
#include "converter/eval/metrics.h"

namespace edgeattn {
namespace convert {

PlainInt8Options PlainInt8Options::none() {
  PlainInt8Options o;
  o.inputs = o.weights = o.q = o.k = o.v = o.context = o.output = false;
  return o;
}

const char* const kPlainInt8Scheme =
    "int8 per tensor (calibrated ranges): inputs, q/k/v, context, output; int8 weights per output channel, "
    "exact integer accumulation; float64 scores, softmax and P.V";

bool plain_int8_supported(const FloatLayer& layer) { return layer.kind == &kinds::kind_mha; }

namespace {

// The int8 code of x: sat8(round(x / s) + zp), round half away from zero
// (the converter's runner quantizes the runtime's float inputs the same way).
int code_of(double x, const ActQuantParams& q) {
  return static_cast<int>(std::clamp(std::round(x / q.scale) + q.zero_point, -128.0, 127.0));
}

ActQuantParams params(const LayerCalibration& c, const char* key, const std::string& what) {
  const auto it = c.ranges.find(key);
  if (it == c.ranges.end()) fail(what, ": no calibration data for ", key);
  return act_quant(it->second, what + ": " + key);
}

}  // namespace

double fake_quant_int8(double x, const ActQuantParams& q) { return q.scale * (code_of(x, q) - q.zero_point); }

PlainInt8Layer::PlainInt8Layer(const FloatLayer& layer, const LayerCalibration& calibration,
                               const PlainInt8Options& options, const std::string& what)
    : layer_(layer), options_(options) {
  if (!plain_int8_supported(layer)) {
    fail(what, ": layer '", layer.name, "': the plain int8 scheme is defined for mha layers only, not ",
         layer.kind->name);
  }
  const std::string at = what + ": layer '" + layer.name + "'";
  // The ranges edgeattn's int8 layer was made from (kinds/mha.cc, mha_table_s8).
  query_ = params(calibration, "query", at);
  key_ = params(calibration, "key", at);
  value_ = params(calibration, "value", at);
  context_ = params(calibration, "context", at);
  const ActQuantParams qo = params(calibration, "q_proj", at), ko = params(calibration, "k_proj", at);
  const ActQuantParams vo = params(calibration, "v_proj", at), out = params(calibration, "output", at);
  const MhaParams& P = layer.as<MhaParams>();
  q_ = make_proj(P.q_proj, query_, qo, options.inputs, options.q, at + ": " + P.q_proj.w_name);
  k_ = make_proj(P.k_proj, key_, ko, options.inputs, options.k, at + ": " + P.k_proj.w_name);
  v_ = make_proj(P.v_proj, value_, vo, options.inputs, options.v, at + ": " + P.v_proj.w_name);
  o_ = make_proj(P.out_proj, context_, out, options.context, options.output, at + ": " + P.out_proj.w_name);
}

PlainInt8Layer::Proj PlainInt8Layer::make_proj(const FloatLinear& f, const ActQuantParams& in,
                                               const ActQuantParams& out, bool round_in, bool round_out,
                                               const std::string& what) const {
  Proj p;
  p.f = &f;
  p.q = quantize_linear(f, in, out, what);  // edgeattn's int8 weights, per output channel
  p.round_in = round_in;
  p.round_w = options_.weights;
  p.round_out = round_out;
  p.bias_q.resize(static_cast<size_t>(f.out));
  for (int n = 0; n < f.out; ++n) {
    const double b = f.b.empty() ? 0.0 : f.b[static_cast<size_t>(n)];
    p.bias_q[static_cast<size_t>(n)] = std::round(b / (in.scale * static_cast<double>(p.q.w_scale[static_cast<size_t>(n)])));
  }
  return p;
}

void PlainInt8Layer::project(const Proj& p, const double* x, int rows, double* y) const {
  const int in = p.f->in, out = p.f->out;
  const ActQuantParams& qi = p.q.input;
  const ActQuantParams& qo = p.q.output;
  std::vector<int> codes(static_cast<size_t>(in));
  std::vector<double> xr(static_cast<size_t>(in));
  for (int r = 0; r < rows; ++r) {
    const double* xrow = x + static_cast<size_t>(r) * in;
    for (int k = 0; k < in; ++k) {
      codes[static_cast<size_t>(k)] = code_of(xrow[k], qi);
      xr[static_cast<size_t>(k)] = p.round_in ? qi.scale * (codes[static_cast<size_t>(k)] - qi.zero_point) : xrow[k];
    }
    for (int n = 0; n < out; ++n) {
      const double s_w = static_cast<double>(p.q.w_scale[static_cast<size_t>(n)]);
      const int8_t* wq = p.q.w.data() + static_cast<size_t>(n) * p.q.row_stride;
      double real;
      if (p.round_in && p.round_w) {
        // Steps 2-3: an exact integer sum (int64 here; it fits int32 for
        // in <= 2^17 as in the runtime), then the real value of one unit.
        int64_t acc = static_cast<int64_t>(p.bias_q[static_cast<size_t>(n)]);
        for (int k = 0; k < in; ++k) {
          acc += static_cast<int64_t>(wq[k]) * (codes[static_cast<size_t>(k)] - qi.zero_point);
        }
        if (p.round_out) {
          // Step 4 / 10: requantized in float.
          const double m = qi.scale * s_w / qo.scale;
          const double c = std::clamp(std::round(static_cast<double>(acc) * m) + qo.zero_point, -128.0, 127.0);
          y[static_cast<size_t>(r) * out + n] = qo.scale * (c - qo.zero_point);
          continue;
        }
        real = static_cast<double>(acc) * (qi.scale * s_w);
      } else {
        // A rounding switched off: the same sum over real values.
        const double* wf = p.f->w.data() + static_cast<size_t>(n) * in;
        real = p.round_w ? p.bias_q[static_cast<size_t>(n)] * (qi.scale * s_w)
                         : (p.f->b.empty() ? 0.0 : p.f->b[static_cast<size_t>(n)]);
        for (int k = 0; k < in; ++k) real += (p.round_w ? s_w * wq[k] : wf[k]) * xr[static_cast<size_t>(k)];
      }
      y[static_cast<size_t>(r) * out + n] = p.round_out ? fake_quant_int8(real, qo) : real;
    }
  }
}

void PlainInt8Layer::forward(const SampleInput& in, double* out, double* weights) const {
  const FloatLayer& L = layer_;
  const bool self = L.self_attention();
  const int lq = in.q_len;
  const double* key = self ? in.query : in.key;
  const double* value = self ? in.query : (in.value != nullptr ? in.value : key);
  const int lk = self ? in.q_len : in.kv_len;
  const int valid = in.valid >= 0 ? std::min(in.valid, lk) : lk;
  const MhaParams& P = L.as<MhaParams>();
  const int H = P.num_heads, hd = P.head_dim, E = P.q_proj.out, KV = P.k_proj.out;
  const int group = H / (KV / hd);  // query heads per K/V head

  // Steps 1-4: int8 inputs, int8 projections, int8 q/k/v (as real values on
  // their int8 grids). Self-attention: key and value are the query input.
  std::vector<double> Q(static_cast<size_t>(lq) * E), K(static_cast<size_t>(lk) * KV), V(static_cast<size_t>(lk) * KV);
  project(q_, in.query, lq, Q.data());
  project(k_, key, lk, K.data());
  project(v_, value, lk, V.data());

  // Steps 5-7 in float64.
  std::vector<double> ctx(static_cast<size_t>(lq) * E, 0.0), p(static_cast<size_t>(std::max(lk, 1)));
  for (int h = 0; h < H; ++h) {
    const int kv_off = (h / group) * hd;
    for (int r = 0; r < lq; ++r) {
      const int limit = row_limit(L, r, lq, lk, valid);
      const double* q = Q.data() + static_cast<size_t>(r) * E + h * hd;
      double m = -HUGE_VAL;
      for (int j = 0; j < limit; ++j) {
        const double* k = K.data() + static_cast<size_t>(j) * KV + kv_off;
        double s = 0.0;
        for (int i = 0; i < hd; ++i) s += q[i] * k[i];
        p[static_cast<size_t>(j)] = s * P.scale;
        m = std::max(m, p[static_cast<size_t>(j)]);
      }
      double sum = 0.0;
      for (int j = 0; j < limit; ++j) sum += (p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - m));
      for (int j = 0; j < limit; ++j) p[static_cast<size_t>(j)] /= sum;
      double* c = ctx.data() + static_cast<size_t>(r) * E + h * hd;
      for (int j = 0; j < limit; ++j) {
        const double* v = V.data() + static_cast<size_t>(j) * KV + kv_off;
        for (int i = 0; i < hd; ++i) c[i] += p[static_cast<size_t>(j)] * v[i];
      }
      if (weights != nullptr) {
        double* w = weights + (static_cast<size_t>(h) * lq + r) * lk;
        std::copy(p.begin(), p.begin() + limit, w);
        std::fill(w + limit, w + lk, 0.0);
      }
    }
  }
  // Steps 8-10: int8 context, int8 out_proj, int8 output.
  project(o_, ctx.data(), lq, out);
}

void PlainInt8Layer::run(const LayerData& d, std::vector<double>* out, std::vector<double>* weights) const {
  out->clear();  // fresh zeros: forward() need not write every weight
  weights->clear();
  forward_samples(layer_, d, out, weights,
                  [this](const SampleInput& in, double* o, double* w) { forward(in, o, w); });
}

}  // namespace convert
}  // namespace edgeattn
