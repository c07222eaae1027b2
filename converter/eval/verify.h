// The evaluate stage of a conversion: the converted model through the runtime
// against the float64 reference, layer by layer, on the calibration inputs.
#ifndef EDGEATTN_CONVERTER_EVAL_VERIFY_H_
#define EDGEATTN_CONVERTER_EVAL_VERIFY_H_

#include <vector>

#include "converter/base/progress.h"
#include "converter/calibrate/calibrate.h"
#include "converter/eval/metrics.h"
#include "converter/eval/runner.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

struct LayerAccuracy {
  bool has_metrics = false;  // false: no calibration inputs to compare on
  Metrics metrics;
  int samples = 0;
  // A chained layer (the spec's "input"): fed the runtime's own output of
  // the layers before it instead of float64 inputs, against the float64
  // chain; the error of the chain up to and including this layer.
  bool has_chained = false;
  Metrics chained;
};

// [i] for spec.layers[i]; calib empty: nothing compared. float_outputs[i],
// when there, is layer i's float64 output on calib[i] from the calibration
// pass (used instead of running the float layer again). Chained layers are
// also run on their source's runtime output (LayerAccuracy::chained): the
// dequantized bytes, which the hand-over's single quantization turns back
// into the same bytes.
std::vector<LayerAccuracy> verify_model(const LoadedModel& model, const ModelSpec& spec,
                                        const std::vector<LayerData>& calib,
                                        std::vector<FloatOutputs> float_outputs, const ProgressFn& progress);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_VERIFY_H_
