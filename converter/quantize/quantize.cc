#include "converter/quantize/quantize.h"

#include <algorithm>
#include <cmath>

#include "converter/base/error.h"
#include "edgeattn/kernels/quantize_multiplier.h"

namespace edgeattn {
namespace convert {

Requant requant(double real, const std::string& what) {
  Requant r;
  if (!kernels::quantize_multiplier(real, &r.multiplier, &r.shift)) {
    fail(what, ": requantization multiplier ", real, " is not representable (needs a finite value in [2^-32, 2^30))");
  }
  return r;
}

QuantLinear quantize_linear(const FloatLinear& l, const ActQuantParams& input,
                            const ActQuantParams& output, const std::string& what, int32_t out_shift) {
  QuantLinear q;
  q.in = l.in;
  q.out = l.out;
  q.row_stride = padded_row(l.in);
  q.input = input;
  q.output = output;
  q.w.assign(static_cast<size_t>(l.out) * q.row_stride, 0);
  q.w_scale.resize(static_cast<size_t>(l.out));
  q.bias.resize(static_cast<size_t>(l.out));
  q.requant.resize(static_cast<size_t>(l.out));
  for (int n = 0; n < l.out; ++n) {
    const double* row = l.w.data() + static_cast<size_t>(n) * l.in;
    double amax = 0.0;
    for (int k = 0; k < l.in; ++k) amax = std::max(amax, std::fabs(row[k]));
    const float s_w = amax > 0.0 ? static_cast<float>(amax / 127.0) : 1.0f;
    q.w_scale[static_cast<size_t>(n)] = s_w;
    int64_t wsum = 0;
    for (int k = 0; k < l.in; ++k) {
      const double v = std::clamp(std::round(row[k] / s_w), -127.0, 127.0);
      q.w[static_cast<size_t>(n) * q.row_stride + k] = static_cast<int8_t>(v);
      wsum += static_cast<int64_t>(v);
    }
    const double s_acc = input.scale * static_cast<double>(s_w);
    const double b = l.b.empty() ? 0.0 : l.b[static_cast<size_t>(n)];
    const double folded = std::round(b / s_acc) - static_cast<double>(input.zero_point) * static_cast<double>(wsum);
    // The runtime's int32 accumulator starts at this bias and adds up to
    // in * 128 * 128 in either direction (Model::Load checks the same bound).
    const double headroom = static_cast<double>(l.in) * 128.0 * 128.0;
    if (!(folded >= -2147483648.0 + headroom && folded <= 2147483647.0 - headroom)) {
      fail(what, ": int32 bias overflow in channel ", n, " (bias ", b, " at scale ", s_acc,
           " leaves no room for ", l.in, " int8 products in the int32 accumulator)");
    }
    q.bias[static_cast<size_t>(n)] = static_cast<int32_t>(folded);
    q.requant[static_cast<size_t>(n)] =
        requant(std::ldexp(s_acc / output.scale, out_shift), what + " channel " + std::to_string(n));
  }
  return q;
}

QuantVector quantize_symmetric(const std::vector<double>& x) {
  QuantVector v;
  double amax = 0.0;
  for (double e : x) amax = std::max(amax, std::fabs(e));
  v.scale = amax > 0.0 ? static_cast<double>(static_cast<float>(amax / 127.0)) : 1.0;
  v.q.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    v.q[i] = static_cast<int8_t>(std::clamp(std::round(x[i] / v.scale), -127.0, 127.0));
  }
  return v;
}

// The index t = (W_q q) + (W_k k + b) is calibrated over all (query, valid key)
// pairs; beyond |t| = 6 tanh is within 1.2e-5 of +-1, so the range is clipped
// to [-6, 6] to spend the 256 levels where tanh still changes.
TanhTable tanh_table(const Range& pre_tanh, const std::string& what) {
  if (pre_tanh.count == 0) fail(what, ": calibration saw no pre-tanh values (no valid keys?)");
  TanhTable t;
  t.index = act_quant(std::clamp(pre_tanh.lo, -6.0, 6.0), std::clamp(pre_tanh.hi, -6.0, 6.0));
  t.table.resize(256);
  for (int i = -128; i <= 127; ++i) {
    const double x = t.index.scale * (i - t.index.zero_point);
    t.table[static_cast<size_t>(i + 128)] = static_cast<int8_t>(std::clamp(std::round(127.0 * std::tanh(x)), -127.0, 127.0));
  }
  return t;
}

}  // namespace convert
}  // namespace edgeattn
