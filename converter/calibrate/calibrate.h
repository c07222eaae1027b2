// Activation calibration: the values of every tensor over the calibration set
// (float64 forward), a range chosen from them (calib_method.h), turned into
// asymmetric per-tensor int8 parameters.
#ifndef EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_H_
#define EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_H_

#include <string>

#include "converter/calibrate/calib_method.h"
#include "converter/model/dataset.h"
#include "converter/model/float_reference.h"

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
// The 16-bit residual stream (issue 37): symmetric int16, zero point 0,
// scale = max(|lo|, |hi|) / 32767 (rounded to float).
ActQuantParams stream16_quant(const Range& range, const std::string& what);

// What calibration found for one layer. `seen`: min/max of each tensor over
// the calibration set; `ranges`: the ranges chosen from them by the method,
// which the quantization uses (pre_tanh: as seen; its table clips to +-6).
struct LayerCalibration {
  RangeMap seen, ranges;
  // Entries that copy another's range: self-attention's key and value are
  // its query; a layer without value input uses the key's.
  std::map<std::string, std::string> copies;
};

// Runs the float64 layer over every calibration sample and records the ranges
// of its inputs, projections, context and output (see float_reference.h).
// With `outputs`, also keeps that pass's outputs and attention weights,
// concatenated over the samples exactly as reference_forward() (metrics.h)
// returns them, so the verification need not run the float layer again.
struct FloatOutputs {
  std::vector<double> output, weights;
};
LayerCalibration calibrate(const FloatLayer& layer, const LayerData& data, const CalibOptions& options,
                           FloatOutputs* outputs = nullptr);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_H_
