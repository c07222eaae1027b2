#include "converter/calib_method.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "converter/calibrate.h"
#include "converter/error.h"

namespace edgeattn {
namespace convert {
namespace {

// The value below which a fraction q of `v` lies: linear interpolation
// between the order statistics floor(pos) and floor(pos) + 1 (pos = q (n - 1)),
// read off the sorted values. nth_element puts the first where sorting would
// and everything after it no smaller, so the second is the least of those:
// the same two values as a full sort gives, in O(n) instead of O(n log n)
// (sorting every tensor's millions of values was most of a percentile
// calibration). Reorders v.
double quantile(std::vector<float>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, v.size() - 1);
  const double t = pos - static_cast<double>(i);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  const float at_i = v[i];
  const float at_j = j == i ? at_i : *std::min_element(v.begin() + static_cast<long>(j), v.end());
  return (1.0 - t) * at_i + t * at_j;
}

// At most this many values enter the MSE search (a fixed stride over the
// rest): the search tries 71 ranges, and a large model's tensor has millions.
constexpr size_t kMseSample = 1 << 16;

}  // namespace

const char* calib_method_name(CalibMethod m) {
  switch (m) {
    case CalibMethod::kMinMax: return "minmax";
    case CalibMethod::kPercentile: return "percentile";
    case CalibMethod::kMse: return "mse";
  }
  return "?";
}

CalibMethod parse_calib_method(const std::string& name) {
  for (CalibMethod m : {CalibMethod::kMinMax, CalibMethod::kPercentile, CalibMethod::kMse}) {
    if (name == calib_method_name(m)) return m;
  }
  fail("--calib-method must be minmax, percentile or mse, got '", name, "'");
}

std::string describe(const CalibOptions& o) {
  std::string s = calib_method_name(o.method);
  if (o.method == CalibMethod::kPercentile) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.10g", o.percentile);
    s += buf;
  }
  if (o.headroom > 0.0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", headroom %.10g %%", 100.0 * o.headroom);
    s += buf;
  }
  return s;
}

double quantization_mse(const std::vector<float>& values, double lo, double hi) {
  if (values.empty()) return 0.0;
  const ActQuantParams q = act_quant(lo, hi);
  const size_t stride = std::max<size_t>(1, values.size() / kMseSample);
  double sum = 0.0;
  size_t n = 0;
  for (size_t i = 0; i < values.size(); i += stride, ++n) {
    const double x = values[i];
    const double level = std::clamp(std::round(x / q.scale) + q.zero_point, -128.0, 127.0);
    const double e = q.scale * (level - q.zero_point) - x;
    sum += e * e;
  }
  return sum / static_cast<double>(n);
}

namespace {

ClipRange method_range(const Range& seen, const CalibOptions& o) {
  const ClipRange full{seen.lo, seen.hi};
  if (o.method == CalibMethod::kMinMax || seen.values.empty()) return full;
  if (o.method == CalibMethod::kPercentile) {
    if (!(o.percentile > 50.0 && o.percentile <= 100.0)) {
      fail("--calib-percentile must be in (50, 100], got ", o.percentile);
    }
    std::vector<float> values = seen.values;
    const double q = o.percentile / 100.0;
    const double lo = quantile(values, 1.0 - q);
    return {lo, quantile(values, q)};
  }
  // MSE: both ends shrunk by one factor a (keeping the zero point's side
  // balance), a = 1.00, 0.99, ..., 0.30; the first of equal errors (the widest) wins.
  ClipRange best = full;
  double best_mse = quantization_mse(seen.values, full.lo, full.hi);
  for (int step = 99; step >= 30; --step) {
    const double a = step / 100.0;
    const double mse = quantization_mse(seen.values, a * full.lo, a * full.hi);
    if (mse < best_mse) {
      best_mse = mse;
      best = {a * full.lo, a * full.hi};
    }
  }
  return best;
}

}  // namespace

ClipRange choose_range(const Range& seen, const CalibOptions& o) {
  if (!(o.headroom >= 0.0 && o.headroom <= 10.0)) fail("--calib-headroom must be in [0, 1000] %, got ", 100.0 * o.headroom, " %");
  const ClipRange r = method_range(seen, o);
  return {r.lo * (1.0 + o.headroom), r.hi * (1.0 + o.headroom)};
}

}  // namespace convert
}  // namespace edgeattn
