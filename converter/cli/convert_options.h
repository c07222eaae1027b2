// `convert`'s command-line options turned into what each stage takes, and
// checked together before any input is read.
#ifndef EDGEATTN_CONVERTER_CLI_CONVERT_OPTIONS_H_
#define EDGEATTN_CONVERTER_CLI_CONVERT_OPTIONS_H_

#include <string>
#include <vector>

#include "converter/calibrate/calib_method.h"
#include "converter/calibrate/smooth.h"
#include "converter/cli/commands.h"
#include "converter/eval/heldout_data.h"
#include "converter/report/report.h"
#include "converter/write/model_file.h"

namespace edgeattn {
namespace convert {

// Every option combination and output path (writable?) is checked before the
// (possibly long) conversion starts; returns the output type.
OutputType check_convert_options(const ConvertOptions& o);

CalibOptions calib_options(const ConvertOptions& o);
HeldoutChoice heldout_choice(const ConvertOptions& o);

// The file's Producer.source: the weights file and how its int8 ranges were
// made (inspect shows it). calib: the calibration samples (after any split).
std::string producer_source(const ConvertOptions& o, const CalibOptions& c, const std::vector<LayerData>& calib,
                            bool residual16);

// The report's header: model name, paths, dtype, calibration, held-out data,
// smoothing, and the warnings so far.
ConvertReport report_header(const ConvertOptions& o, const ModelSpec& spec, const CalibOptions& c,
                            const std::string& heldout_what, const std::vector<SmoothedPair>& smoothing,
                            std::vector<std::string> warnings);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CLI_CONVERT_OPTIONS_H_
