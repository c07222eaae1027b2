// Turns resolved float layers (+ calibration data for int8) into .eatn bytes.
#ifndef EDGEATTN_CONVERTER_CONVERT_H_
#define EDGEATTN_CONVERTER_CONVERT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "converter/calibrate.h"
#include "converter/dataset.h"
#include "converter/spec.h"

namespace edgeattn {
namespace convert {

enum class OutputType { kInt8, kF32 };

// Called with (layer index, "what is being done") before each layer's work.
using ProgressFn = std::function<void(size_t layer, const std::string& what)>;

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

#endif  // EDGEATTN_CONVERTER_CONVERT_H_
