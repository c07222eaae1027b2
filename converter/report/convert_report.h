// The report stage of a conversion: the figures of the earlier stages
// (spec, calibration, the written file, its evaluation) in a ConvertReport.
#ifndef EDGEATTN_CONVERTER_REPORT_CONVERT_REPORT_H_
#define EDGEATTN_CONVERTER_REPORT_CONVERT_REPORT_H_

#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/kinds/kind.h"
#include "converter/eval/heldout.h"
#include "converter/eval/runner.h"
#include "converter/eval/verify.h"
#include "converter/report/report.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

struct ConversionResults {
  const ModelSpec& spec;
  const LoadedModel& model;                       // the written bytes, verified by the runtime
  const std::vector<LayerData>& calib;            // calibration inputs ([i] for layer i; may be empty)
  const std::vector<LayerCalibration>& calibration;  // int8: each layer's ranges
  const std::vector<LayerAccuracy>& accuracy;     // verify_model
  const std::vector<HeldoutResult>& heldout;      // evaluate_heldout_model (may be empty)
  const std::vector<PointUses>* used = nullptr;  // int8: write_model's record of each layer's points
};

// Fills the file, tensor and per-layer parts of `r` (its header, model name,
// paths, dtype, calibration method, smoothing, comes from the caller) and
// appends the held-out range warnings to r->warnings.
void add_conversion_results(const ConversionResults& c, ConvertReport* r);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_CONVERT_REPORT_H_
