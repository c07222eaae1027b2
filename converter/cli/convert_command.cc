// `edgeattn-convert convert`: the stages in order, spec -> float model ->
// calibrate -> quantize and write -> evaluate -> report, then the files.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "converter/calibrate/calibrate_model.h"
#include "converter/calibrate/smooth.h"
#include "converter/cli/commands.h"
#include "converter/cli/convert_options.h"
#include "converter/cli/progress.h"
#include "converter/eval/heldout.h"
#include "converter/eval/heldout_data.h"
#include "converter/eval/verify.h"
#include "converter/io/file.h"
#include "converter/report/convert_report.h"
#include "converter/spec/spec.h"
#include "converter/write/emit_c.h"
#include "converter/write/model_file.h"

namespace edgeattn {
namespace convert {
namespace {

// True when stdout and stderr are the same file (one terminal, or `>log 2>&1`).
bool stdout_is_stderr() {
  struct stat a, b;
  return ::fstat(STDOUT_FILENO, &a) == 0 && ::fstat(STDERR_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

std::vector<std::string> layer_names(const ModelSpec& spec) {
  std::vector<std::string> names;
  for (const FloatLayer& L : spec.layers) names.push_back(L.name);
  return names;
}

// The model, then --emit-c's files and --report-json, each written
// atomically; a failure after the model is written removes it, so a failed
// conversion leaves no model behind.
void write_outputs(const ConvertOptions& o, const std::vector<uint8_t>& bytes, const LoadedModel& model,
                   const ConvertReport& r) {
  const std::string json_text = o.report_json.empty() ? "" : report_json(r).dump(2) + "\n";
  EmittedC emitted;
  if (!o.emit_c.empty()) emitted = emit_c(bytes, model.model(), o.emit_c, base_name(o.output), o.workers);
  write_file_atomic(o.output, bytes.data(), bytes.size());
  try {
    if (!o.emit_c.empty()) write_emitted_c(emitted, o.emit_c);
    if (!o.report_json.empty()) write_file_atomic(o.report_json, json_text.data(), json_text.size());
  } catch (...) {
    std::remove(o.output.c_str());
    throw;
  }
}

// A LayerNorm output whose largest channel dwarfs the median one (a
// pretrained transformer's outlier channels) sets one coarse int8 step for
// all its channels: say so, and what helps. Two calibration samples per
// block measure it (the spread is a ratio of channel maxima, which two
// samples' rows already show), so the hint costs little conversion time.
void add_outlier_channel_hints(ModelSpec* spec, const std::vector<LayerData>& calib, ConvertReport* r) {
  for (const SmoothedPair& p : layernorm_channel_spreads(spec, calib, 2)) {
    if (!(p.spread_before >= kOutlierChannelSpread)) continue;
    std::ostringstream w;
    w << "layer '" << p.layer << "' " << p.what << ": the LayerNorm output's largest channel is "
      << std::setprecision(3) << p.spread_before
      << "x its median channel (outlier channels), so they set the int8 step of every channel; "
         "--smooth-alpha 0.5 moves them into the projections' weights, and where held-out values pass its range, "
         "the layer's \"calib_headroom\" (e.g. 25) widens it (docs/quantization.md, \"SmoothQuant\")";
    r->warnings.push_back(w.str());
  }
}

}  // namespace

void run_convert(const ConvertOptions& o, std::ostream& out) {
  const OutputType type = check_convert_options(o);
  ModelSpec spec = read_model_spec(o.spec, o.weights, LengthOverrides{o.max_q_len, o.max_kv_len});
  spec.tile_scratch = !o.no_tile_scratch;
  bool residual16 = false;
  std::string residual_why;
  if (type == OutputType::kInt8 && o.residual == "int16") {
    use_residual16(&spec);
    residual16 = true;
  } else if (type == OutputType::kInt8 && o.residual == "auto") {
    residual16 = use_residual16_inside(&spec, &residual_why);
  } else if (type != OutputType::kInt8) {
    for (FloatLayer& L : spec.layers) L.output16 = false;  // a float file's rows are float (an mha's "output")
  }
  // A weights tensor next to a used one and used by no layer stops here unless --allow-unused.
  const std::vector<std::string> unused_warnings = check_unused(spec, o.weights, o.allow_unused);
  Progress progress(!o.quiet && ::isatty(STDERR_FILENO) == 1, layer_names(spec));
  std::vector<LayerData> calib;
  if (!o.calib.empty()) calib = load_model_data(o.calib, "calibration data (--calib)", spec.layers, parse_data_keys(o.data_keys));
  const HeldoutData heldout = take_heldout(heldout_choice(o), spec.layers, &calib);
  std::vector<SmoothedPair> smoothing;
  if (o.smooth_alpha >= 0.0) smoothing = smooth_model(&spec, calib, o.smooth_alpha, o.smooth_layers);
  const CalibOptions calib_opts = calib_options(o);
  ModelCalibration calibration;
  if (type == OutputType::kInt8) {
    calibration = calibrate_model(spec, calib, o.calib, calib_opts, progress.stage("convert"), true);
  }
  std::vector<PointUses> used;  // the calibrated points each layer's tables were quantized from
  const std::vector<uint8_t> bytes = write_model(spec, type, calibration.layers, o.calib,
                                                 producer_source(o, calib_opts, calib, residual16), progress.stage("convert"),
                                                 &used);
  const LoadedModel model(bytes, o.output);
  const std::vector<LayerAccuracy> accuracy =
      verify_model(model, spec, calib, std::move(calibration.float_outputs), progress.stage("verify"));
  const std::vector<HeldoutResult> heldout_results = evaluate_heldout_model(
      model, spec, heldout.layers, calibration.layers, parse_range_mode(o.range_mode), progress.stage("held-out"));
  ConvertReport r = report_header(o, spec, calib_opts, heldout.what, smoothing, unused_warnings);
  if (residual16) {
    r.residual = o.residual == "auto" ? "int16 (the default: it stays inside the model)" : "int16 (--residual int16)";
  } else if (o.residual == "auto" && !residual_why.empty() && residual_why != "no encoder or decoder blocks") {
    r.residual = "int8 (the default keeps int8 here: " + residual_why + ")";
  } else if (o.residual == "int8") {
    r.residual = "int8 (--residual int8)";
  }
  add_conversion_results({spec, model, calib, calibration.layers, accuracy, heldout_results, &used}, &r);
  if (type == OutputType::kInt8 && o.smooth_alpha < 0.0) add_outlier_channel_hints(&spec, calib, &r);
  write_outputs(o, bytes, model, r);
  progress.clear();
  // The report lists the warnings; stderr repeats them only where it is not
  // the report's own file, so each is printed once.
  if (&out != &std::cout || !stdout_is_stderr()) {
    for (const std::string& w : r.warnings) std::cerr << "edgeattn-convert: warning: " << w << "\n";
  }
  print_report(r, out);
}

}  // namespace convert
}  // namespace edgeattn
