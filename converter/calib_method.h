// Calibration methods: how the int8 range of an activation tensor is chosen
// from the values the calibration set produced (--calib-method).
#ifndef EDGEATTN_CONVERTER_CALIB_METHOD_H_
#define EDGEATTN_CONVERTER_CALIB_METHOD_H_

#include <string>
#include <vector>

#include "converter/float_reference.h"

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
};

const char* calib_method_name(CalibMethod m);
// "minmax", "percentile" or "mse"; throws ConvertError otherwise.
CalibMethod parse_calib_method(const std::string& name);
// e.g. "minmax", "percentile 99.99", "mse, headroom 25 %".
std::string describe(const CalibOptions& o);

struct ClipRange {
  double lo = 0.0, hi = 0.0;
};

// The range to quantize `seen` with: within [seen.lo, seen.hi] by the method,
// then widened by the headroom. Percentile and MSE need seen.values
// (Range::keep_values); minmax does not.
ClipRange choose_range(const Range& seen, const CalibOptions& o);

// Mean squared error of quantizing `values` with act_quant(lo, hi) and back,
// as the runtime does (round to nearest, saturate to [-128, 127]).
double quantization_mse(const std::vector<float>& values, double lo, double hi);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIB_METHOD_H_
