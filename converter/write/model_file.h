// The quantize and write stages: resolved float layers (+ their calibrated
// ranges for int8) into .eatn bytes. Each layer's kind module quantizes its
// weights (quantize/) and writes its options table (writer.h).
#ifndef EDGEATTN_CONVERTER_WRITE_MODEL_FILE_H_
#define EDGEATTN_CONVERTER_WRITE_MODEL_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/base/progress.h"
#include "converter/calibrate/calibrate.h"
#include "converter/kinds/kind.h"
#include "converter/model/dataset.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

enum class OutputType { kInt8, kF32 };

// kInt8: calibration[i] holds layer i's chosen ranges (calibrate_model);
// kF32: `calibration` is ignored. `calib_path` names the calibration file in
// errors; `source` goes into Producer. With `used` (kInt8), (*used)[i]
// receives the points layer i's tables were quantized from, and how.
std::vector<uint8_t> write_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerCalibration>& calibration, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress = nullptr,
                                 std::vector<PointUses>* used = nullptr);

// calibrate_model() then write_model(), for tests and tools that want the
// bytes in one call.
// calib[i] belongs to spec.layers[i] (required for kInt8, ignored for kF32).
// `calib_path` names the calibration file in errors; `source` goes into Producer.
// With `reference` (kInt8), (*reference)[i] receives the calibration pass's
// float64 outputs of layer i (see calibrate()). `options` chooses the
// activation ranges; with `calibration` (kInt8), (*calibration)[i] receives
// layer i's observed and chosen ranges.
std::vector<uint8_t> build_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerData>& calib, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress = nullptr,
                                 std::vector<FloatOutputs>* reference = nullptr,
                                 const CalibOptions& options = CalibOptions(),
                                 std::vector<LayerCalibration>* calibration = nullptr);


}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_WRITE_MODEL_FILE_H_
