#include "converter/quantize/block_quant.h"

#include <algorithm>
#include <cmath>

#include "converter/base/error.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {

QuantNorm quantize_layernorm(const FloatNorm& n, const ActQuantParams& in, const ActQuantParams& out,
                             const std::string& what) {
  if (!(n.eps > 0.0) || !std::isfinite(n.eps)) fail(what, ": LayerNorm eps ", n.eps, " must be finite and > 0");
  QuantNorm q;
  q.input = in;
  q.output = out;
  double gmax = 0.0;
  for (double g : n.gain) gmax = std::max(gmax, std::fabs(g));
  const double s_g = gmax > 0.0 ? gmax / 32767.0 : 1.0 / 32767.0;
  const int f = kernels::layernorm_frac_bits(n.dim);
  const double bias_scale = s_g * std::ldexp(1.0, -f);
  q.gain.resize(n.dim);
  q.bias.resize(n.dim);
  for (int i = 0; i < n.dim; ++i) {
    q.gain[i] = static_cast<int16_t>(std::clamp(std::round(n.gain[i] / s_g), -32767.0, 32767.0));
    const double b = std::round(n.bias[i] / bias_scale);
    if (!(std::fabs(b) <= kernels::kLayerNormMaxBias)) {
      fail(what, ": LayerNorm bias[", i, "] = ", n.bias[i], " is more than 2^15 times the largest gain ", gmax,
           " (not representable in the int8 LayerNorm)");
    }
    q.bias[i] = static_cast<int32_t>(b);
  }
  const double e = std::round(65536.0 * n.dim * n.dim * n.eps / (in.scale * in.scale));
  q.eps_term = static_cast<int64_t>(std::clamp(e, 1.0, static_cast<double>(kernels::kLayerNormMaxEpsTerm)));
  q.requant = requant(bias_scale / out.scale, what);
  return q;
}

QuantNorm quantize_layernorm16(const FloatNorm& n, const ActQuantParams& in, const ActQuantParams* out8,
                               const ActQuantParams* out16, const std::string& what) {
  // Contract 4's gain, bias and (for the int8 output) multiplier; the
  // variance scale is 4^p instead of 2^16.
  QuantNorm q = quantize_layernorm(n, in, out8 != nullptr ? *out8 : *out16, what);
  q.input16 = true;
  const double var_scale = std::ldexp(1.0, 2 * kernels::layernorm16_var_shift(n.dim));
  const double e = std::round(var_scale * n.dim * n.dim * n.eps / (in.scale * in.scale));
  q.eps_term = static_cast<int64_t>(std::clamp(e, 1.0, static_cast<double>(kernels::kLayerNormMaxEpsTerm)));
  q.has_output8 = out8 != nullptr;
  if (out16 != nullptr) {
    q.has_output16 = true;
    q.output16 = *out16;
    double gmax = 0.0;
    for (double g : n.gain) gmax = std::max(gmax, std::fabs(g));
    const double s_g = gmax > 0.0 ? gmax / 32767.0 : 1.0 / 32767.0;
    q.requant16 = requant(s_g * std::ldexp(1.0, -kernels::layernorm_frac_bits(n.dim)) / out16->scale, what);
  }
  return q;
}

std::vector<int8_t> activation_table(Activation act, const ActQuantParams& in, const ActQuantParams& out) {
  std::vector<int8_t> t(256);
  for (int i = 0; i < 256; ++i) {
    const double x = in.scale * (i - 128 - in.zero_point);
    const double q = std::round(activate(act, x) / out.scale) + out.zero_point;
    t[i] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
  }
  return t;
}

namespace {

// The largest x left of the activation's minimum with |act(x)| <= limit for
// every input below it (act rises towards 0 to the left of its minimum).
double flat_below(Activation act, double limit) {
  if (act == Activation::kRelu) return 0.0;
  double lo = -64.0, hi = act == Activation::kSilu ? -1.2785 : -0.7518;  // the minima
  if (std::fabs(activate(act, hi)) <= limit) return hi;
  for (int i = 0; i < 100; ++i) {  // bisection: |act| falls monotonically to the left of hi
    const double mid = 0.5 * (lo + hi);
    (std::fabs(activate(act, mid)) <= limit ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

ActQuantParams activation_input_quant(Activation act, const ActQuantParams& in, const ActQuantParams& out) {
  const double flat = flat_below(act, 0.25 * out.scale);
  const double lo = in.scale * (-128 - in.zero_point), hi = in.scale * (127 - in.zero_point);
  if (!(flat > lo) || !(hi > 0.0)) return in;
  // act_quant rounds the zero point: the grid's lowest value must stay at or
  // below `flat` (inputs under it saturate there and must give 0's code).
  double target = flat;
  for (int i = 0; i < 8; ++i) {
    const ActQuantParams q = act_quant(target, hi);
    const double q_lo = q.scale * (-128 - q.zero_point);
    if (q_lo <= flat) return q_lo > lo ? q : in;
    target -= q_lo - flat + 0.5 * q.scale;  // at most about a step below `flat`
  }
  return in;
}

QuantAdd quantize_add(const ActQuantParams& a, const ActQuantParams& out, const std::string& what) {
  QuantAdd q;
  q.a = a;
  q.output = out;
  const double ra = a.scale / out.scale;
  for (int n = kernels::kResidualMaxShift; n >= 1; --n) {
    const double ma = std::round(std::ldexp(ra, n));
    if (ma <= kernels::kResidualMaxMultiplier) {
      q.a_multiplier = static_cast<int32_t>(ma);
      q.shift = n;
      return q;
    }
  }
  fail(what, ": residual add input scale ", a.scale, " is more than 2^19 times the output's ", out.scale);
}

QuantAdd quantize_add16(const ActQuantParams& a, const ActQuantParams& out, const std::string& what) {
  QuantAdd q;
  q.stream16 = true;
  q.a = a;
  q.output = out;
  const double ra = a.scale / out.scale;
  for (int n = kernels::kResidual16MaxShift; n >= 1; --n) {
    const double ma = std::round(std::ldexp(ra, n));
    if (ma <= kernels::kResidual16MaxMultiplier) {
      q.a_multiplier = static_cast<int32_t>(ma);
      q.shift = n;
      return q;
    }
  }
  fail(what, ": residual add input scale ", a.scale, " is more than 2^12 times the output's ", out.scale,
       " (the int16 stream's add, contract 5c)");
}

void layernorm_s8(const QuantNorm& q, int dim, int rows, const int8_t* x, int8_t* y) {
  kernels::QS8LayerNormArgs a = {};
  a.rows = rows;
  a.dim = dim;
  a.x = x;
  a.x_stride = dim;
  a.eps_term = q.eps_term;
  a.gain = q.gain.data();
  a.bias = q.bias.data();
  a.mult = q.requant.multiplier;
  a.shift = q.requant.shift;
  a.y_zp = q.output.zero_point;
  a.y = y;
  a.y_stride = dim;
  kernels::qs8_layernorm__ref(a);
}

}  // namespace convert
}  // namespace edgeattn
