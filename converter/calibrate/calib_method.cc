#include "converter/calibrate/calib_method.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "converter/calibrate/calibrate.h"
#include "converter/base/error.h"

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

// The prediction level of the auto headroom (estimated_ends).
constexpr double kAutoHeadroomLevel = 0.975;

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
  if (o.auto_headroom) {
    s += ", headroom auto";
  } else if (o.headroom > 0.0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", headroom %.10g %%", 100.0 * o.headroom);
    s += buf;
  }
  return s;
}

void parse_calib_headroom(const std::string& text, CalibOptions* o) {
  if (text == "auto") {
    o->auto_headroom = true;
    o->headroom = 0.0;
    return;
  }
  char* end = nullptr;
  const double pct = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(pct >= 0.0 && pct <= 1000.0)) {
    fail("--calib-headroom must be auto or a percentage in [0, 1000], got '", text, "'");
  }
  o->auto_headroom = false;
  o->headroom = pct / 100.0;
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

// P(T <= t) for Student's t with integer `df` >= 1 degrees of freedom,
// from the closed forms for integer df: with a = atan(t / sqrt(df)) and
// c = cos^2 a, P(|T| <= t) is
//   odd df:  (2 / pi) (a + sin a cos a (1 + 2/3 c + (2 4)/(3 5) c^2 + ...)), the
//            sum up to the c^((df - 3) / 2) term (df = 1: (2 / pi) a);
//   even df: sin a (1 + 1/2 c + (1 3)/(2 4) c^2 + ...), up to c^((df - 2) / 2).
double student_t_cdf(double t, int df) {
  const double a = std::atan(t / std::sqrt(static_cast<double>(df)));
  const double c = std::cos(a) * std::cos(a);
  double sum = 1.0, term = 1.0;
  for (int k = df % 2 == 1 ? 3 : 2; k <= df - 2; k += 2) {
    term *= c * (k - 1) / k;
    sum += term;
  }
  const double two_sided =
      df % 2 == 1 ? 2.0 / M_PI * (a + (df > 1 ? std::sin(a) * std::cos(a) * sum : 0.0)) : std::sin(a) * sum;
  return 0.5 * (1.0 + two_sided);
}

double student_t_quantile(double q, int df) {
  if (!(q > 0.5 && q < 1.0) || df < 1) fail("student_t_quantile: needs 0.5 < q < 1 and df >= 1");
  double lo = 0.0, hi = 1.0;
  while (student_t_cdf(hi, df) < q) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {  // bisection: the cdf rises with t
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The auto headroom: how far beyond the calibration data a tensor's range
// probably reaches.
//
// Each calibration sample (a sequence) gives the tensor's largest value over
// that sample, M_1 ... M_n. Calibrating on max M_i assumes no new sample goes
// beyond the ones seen; with exchangeable samples a new one beats all n with
// probability 1 / (n + 1): 1 in 5 with 4 calibration samples, 1 in 17 with 16.
// Small calibration sets therefore saturate on new data and large ones
// rarely, and the margin a tensor needs depends on n and on how much its
// per-sample maxima spread, which a fixed headroom ignores.
//
// The estimate is the upper bound of a one-sided 97.5 % prediction interval
// for the next sample's maximum, treating the M_i as draws from a normal
// distribution with unknown mean and spread:
//
//   hi = max(M_max, mean(M) + t(0.975, n - 1) * sd(M) * sqrt(1 + 1/n))
//
// (sd with n - 1; t the Student t quantile). Its three factors are the three
// properties wanted:
//  - sd(M): tensors whose samples all peak at the same value (a fixed token,
//    a bounded or clipped activation) get no margin; widely spread maxima,
//    a range still growing from sample to sample, get a wide one;
//  - t(0.975, n - 1) * sqrt(1 + 1/n) is large for few samples (3.56 at n = 4,
//    2.51 at n = 8, 2.20 at n = 16) and tends to 1.96: the uncertainty of the
//    mean and spread themselves;
//  - max(M_max, ...): the bound tends to the 97.5 % quantile of the
//    per-sample maxima, while the largest of n of them keeps growing with n
//    (for normal maxima it is above the bound, leaving no margin, never for
//    n <= 8, 14 % of the time for n = 16, 59 % for 40, 95 % for 100: a Monte
//    Carlo, docs/quantization.md), so with many samples the margin is mostly
//    zero and costs nothing.
// The lower end is the mirror image with the per-sample minima. One sample
// gives no spread to read: no margin. Two or three give very wide bounds
// (t(0.975, 1) = 12.7), so the estimate is capped at twice the observed end.
//
// Why not a classical endpoint estimator: Robson and Whitlock's
// hi = M_(1) + (M_(1) - M_(2)) reads one gap, between the two largest
// maxima, which is noisy: on the bundled transformer (8 samples) one
// outlying sequence made it widen the encoder's output range by 40 %, and on
// the coverage model (4 samples) it still left 'plain' at 1.64x the
// calibrate-on-all error on held-out data (docs/quantization.md has the
// measurements). The prediction
// bound reads every sample's maximum.
//
// The estimate comes from the per-sample extremes, not from the pooled
// values: values within a sequence are correlated, so the sequences are the
// independent draws.
ClipRange estimated_ends(const Range& seen) {
  auto end_of = [](const std::vector<double>& v, double sign, double observed) {
    // The upper end of sign * v (observed: the largest of sign * value).
    // In distances below the observed end (exactly 0 for samples that reach
    // it), so equal maxima give exactly no margin.
    const size_t n = v.size();
    if (n < 2) return observed;
    double mean = 0.0;
    for (double x : v) mean += observed - sign * x;
    mean /= static_cast<double>(n);
    double ss = 0.0;
    for (double x : v) ss += (observed - sign * x - mean) * (observed - sign * x - mean);
    const double sd = std::sqrt(ss / static_cast<double>(n - 1));
    const double margin = student_t_quantile(kAutoHeadroomLevel, static_cast<int>(n) - 1) * sd *
                              std::sqrt(1.0 + 1.0 / static_cast<double>(n)) - mean;
    return observed + std::clamp(margin, 0.0, std::fabs(observed));
  };
  return {-end_of(seen.sample_lo, -1.0, -seen.lo), end_of(seen.sample_hi, 1.0, seen.hi)};
}

ClipRange choose_range(const Range& seen, const CalibOptions& o) {
  if (!(o.headroom >= 0.0 && o.headroom <= 10.0)) fail("--calib-headroom must be in [0, 1000] %, got ", 100.0 * o.headroom, " %");
  const ClipRange r = method_range(seen, o);
  if (o.auto_headroom) {
    // The method's range (within what was seen) moved out by the gaps
    // between what was seen and the estimated ends: for minmax exactly the
    // estimate, for a clipping method its clipped range plus the same margin.
    const ClipRange e = estimated_ends(seen);
    return {r.lo - (seen.lo - e.lo), r.hi + (e.hi - seen.hi)};
  }
  return {r.lo * (1.0 + o.headroom), r.hi * (1.0 + o.headroom)};
}

}  // namespace convert
}  // namespace edgeattn
