// Held-out evaluation: a converted int8 layer on inputs its calibration did
// not see, against the float64 reference, plus which tensors of those inputs
// left the range calibration saw (the int8 path saturates beyond it).
#ifndef EDGEATTN_CONVERTER_EVAL_HELDOUT_H_
#define EDGEATTN_CONVERTER_EVAL_HELDOUT_H_

#include <string>
#include <vector>

#include "converter/base/progress.h"
#include "converter/calibrate/calibrate.h"
#include "converter/model/dataset.h"
#include "converter/eval/metrics.h"
#include "converter/eval/runner.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

// The largest excursion of one tensor beyond its calibrated range.
struct RangeExcess {
  std::string layer, tensor;  // tensor: a RangeMap key ("q_proj", ...)
  int sample = 0;             // held-out sample with the largest excursion
  bool above = true;          // beyond the max (else below the min)
  double value = 0.0;         // that sample's max (or min)
  double seen_lo = 0.0, seen_hi = 0.0;  // calibration min/max, widened to include 0
  double used_lo = 0.0, used_hi = 0.0;  // the range calibration chose (method and headroom; the int8 range)
  double fraction = 0.0;      // excursion / max(|seen_lo|, |seen_hi|)
  bool int16 = false;         // a tensor of the 16-bit residual stream (symmetric int16 range)
  // e.g. "layer 'enc' 'q_proj output': held-out sample 3 max 5.41 exceeds the
  // calibrated range [-4.70, 4.90] by 10.4 % (values beyond it saturate)"
  std::string message() const;
};

// What a tensor key is, for people: "q_proj output", "query input", ...
std::string tensor_label(const std::string& key);

// Held-out figures of the int8 runtime, plus (mha layers) those of the plain
// int8 scheme with a float softmax on the same samples and calibrated ranges
// (plain_int8.h): the baseline of issue 10's stretch target.
struct HeldoutMetrics : Metrics {
  bool has_plain_int8 = false;
  Metrics plain_int8;  // plain scheme vs the float64 reference
};

struct HeldoutResult {
  HeldoutMetrics metrics;
  int samples = 0;                  // held-out samples compared
  std::vector<RangeExcess> excess;  // one per tensor that left its range
};

// Runs layer `index` of `model` and the float64 layer `L` on `data`, and for
// an mha layer the plain int8 scheme (plain_int8.h, static calibrated
// ranges whatever `policy` is) on the same samples.
// `policy`: the runtime's range mode (run_layer).
HeldoutResult evaluate_heldout(const LoadedModel& model, int index, const FloatLayer& L, const LayerData& data,
                               const LayerCalibration& calibration, ea_range_policy policy = EA_RANGE_STATIC);

// The held-out evaluation of every layer of a conversion: [i] for
// spec.layers[i]; heldout empty: none.
std::vector<HeldoutResult> evaluate_heldout_model(const LoadedModel& model, const ModelSpec& spec,
                                                  const std::vector<LayerData>& heldout,
                                                  const std::vector<LayerCalibration>& calibration,
                                                  ea_range_policy policy, const ProgressFn& progress);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_HELDOUT_H_
