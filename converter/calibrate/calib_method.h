// Calibration methods: how the int8 range of an activation tensor is chosen
// from the values the calibration set produced (--calib-method).
#ifndef EDGEATTN_CONVERTER_CALIBRATE_CALIB_METHOD_H_
#define EDGEATTN_CONVERTER_CALIBRATE_CALIB_METHOD_H_

#include <string>
#include <vector>

#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

enum class CalibMethod {
  kMinMax,      // the observed min and max
  kPercentile,  // the p-th and (100 - p)-th percentiles
  kMse,         // the clip range with the least int8 round-trip error
};

struct CalibOptions {
  CalibMethod method = CalibMethod::kMinMax;
  double percentile = 99.99;  // kPercentile: in (50, 100]
  // Headroom: the chosen range widened by this fraction on each side (0.25:
  // [lo, hi] -> [1.25 lo, 1.25 hi]) so inputs up to that far beyond what
  // calibration saw do not saturate, at the cost of a coarser int8 step.
  double headroom = 0.0;
  // Auto headroom (--calib-headroom auto; replaces `headroom`): each end of
  // each tensor's range moved out by as much as the calibration samples say
  // the range is still growing there (estimated_ends() below).
  bool auto_headroom = false;
};

const char* calib_method_name(CalibMethod m);
// "minmax", "percentile" or "mse"; throws ConvertError otherwise.
CalibMethod parse_calib_method(const std::string& name);
// e.g. "minmax", "percentile 99.99", "mse, headroom 25 %", "minmax, headroom auto".
std::string describe(const CalibOptions& o);
// --calib-headroom: "auto" sets o->auto_headroom, a number P in [0, 1000]
// sets o->headroom = P / 100 (and clears auto); throws ConvertError otherwise.
void parse_calib_headroom(const std::string& text, CalibOptions* o);

struct ClipRange {
  double lo = 0.0, hi = 0.0;
};

// Where the tensor's range probably ends, estimated from the calibration
// samples' own extremes (seen.sample_lo / sample_hi): the upper end is the
// larger of the observed max and mean + t(0.975, n - 1) sd sqrt(1 + 1/n) of
// the n per-sample maxima (a 97.5 % prediction bound for the next sample's
// max), capped at twice the observed max; the lower end likewise from the
// per-sample minima. Fewer than 2 samples: [seen.lo, seen.hi]. The reasoning
// is in calib_method.cc.
ClipRange estimated_ends(const Range& seen);
// Student's t distribution with integer df >= 1: P(T <= t), and the t with
// P(T <= t) = q for 0.5 < q < 1.
double student_t_cdf(double t, int df);
double student_t_quantile(double q, int df);

// The range to quantize `seen` with: within [seen.lo, seen.hi] by the method,
// then widened by the headroom (a fixed fraction, or with auto_headroom each
// end by its estimated_ends() gap). Percentile and MSE need seen.values
// (Range::keep_values); minmax does not.
ClipRange choose_range(const Range& seen, const CalibOptions& o);

// Mean squared error of quantizing `values` with act_quant(lo, hi) and back,
// as the runtime does (round to nearest, saturate to [-128, 127]).
double quantization_mse(const std::vector<float>& values, double lo, double hi);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIBRATE_CALIB_METHOD_H_
