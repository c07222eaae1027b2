// Activation calibration: min/max of every tensor over the calibration set
// (float64 forward), turned into asymmetric per-tensor int8 parameters.
#ifndef EDGEATTN_CONVERTER_CALIBRATE_H_
#define EDGEATTN_CONVERTER_CALIBRATE_H_

#include <string>

#include "converter/dataset.h"
#include "converter/float_reference.h"

namespace edgeattn {
namespace convert {

// real = scale * (q - zero_point); scale is rounded to float (what the file stores).
struct ActQuantParams {
  double scale = 0.0;
  int zero_point = 0;
};

// Range extended to include 0; scale = (max - min) / 255,
// zero_point = round(-128 - min / scale) clamped to [-128, 127].
// Throws naming `what` if the range saw no finite value.
ActQuantParams act_quant(const Range& range, const std::string& what);
ActQuantParams act_quant(double lo, double hi);

// Runs the float64 layer over every calibration sample and records the ranges
// of its inputs, projections, context and output (see float_reference.h).
// With `outputs`, also keeps that pass's outputs and attention weights,
// concatenated over the samples exactly as reference_forward() (metrics.h)
// returns them, so the verification need not run the float layer again.
struct FloatOutputs {
  std::vector<double> output, weights;
};
RangeMap calibrate(const FloatLayer& layer, const LayerData& data, FloatOutputs* outputs = nullptr);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIBRATE_H_
