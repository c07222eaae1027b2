// The calibration stage over a whole model: every layer's float64 pass over
// its calibration samples and the ranges chosen from it (calibrate.h).
#ifndef EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_MODEL_H_
#define EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_MODEL_H_

#include <string>
#include <vector>

#include "converter/base/progress.h"
#include "converter/calibrate/calibrate.h"
#include "converter/model/dataset.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

struct ModelCalibration {
  std::vector<LayerCalibration> layers;  // [i]: layer i's seen and chosen ranges
  // [i]: the calibration pass's float64 outputs of layer i (only with
  // keep_outputs), so the verification need not run the float layers again.
  std::vector<FloatOutputs> float_outputs;
};

// calib[i] belongs to spec.layers[i]; `calib_path` names the file in errors.
// Layers are calibrated on up to as many threads as the machine has: the
// result is the same whatever the thread count.
ModelCalibration calibrate_model(const ModelSpec& spec, const std::vector<LayerData>& calib,
                                 const std::string& calib_path, const CalibOptions& options,
                                 const ProgressFn& progress, bool keep_outputs);

// A chained layer's (the spec's "input") input points get its source's chosen
// "output" range (calibrate_model does this last): the two int8
// quantizations are then the same numbers, and the source's output bytes can
// be passed on as they are.
void link_chained_inputs(const ModelSpec& spec, ModelCalibration* found);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIBRATE_CALIBRATE_MODEL_H_
