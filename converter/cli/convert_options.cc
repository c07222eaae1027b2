#include "converter/cli/convert_options.h"

#include <cmath>
#include <cstdio>

#include "converter/base/error.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace convert {

OutputType check_convert_options(const ConvertOptions& o) {
  parse_data_keys(o.data_keys);
  if (!o.data_keys.empty() && o.calib.empty() && o.heldout.empty()) {
    fail("--data-key renames keys of the data files: it needs --calib or --heldout");
  }
  OutputType type;
  if (o.dtype == "int8") {
    type = OutputType::kInt8;
    if (o.calib.empty()) fail("--dtype int8 requires calibration data (--calib FILE.npz)");
  } else if (o.dtype == "f32") {
    type = OutputType::kF32;
  } else {
    fail("--dtype must be int8 or f32, got '", o.dtype, "'");
  }
  if (o.residual != "auto" && o.residual != "int8" && o.residual != "int16") {
    fail("--residual must be auto, int8 or int16, got '", o.residual, "'");
  }
  if (o.residual == "int16" && type != OutputType::kInt8) fail("--residual int16 needs --dtype int8");
  if (o.output.empty()) fail("missing output file (-o OUT.eatn)");
  check_writable(o.output);
  if (!o.report_json.empty()) check_writable(o.report_json);
  if (!o.emit_c.empty()) {
    check_writable(o.emit_c + ".h");
    check_writable(o.emit_c + ".c");
  }
  const bool want_heldout = !o.heldout.empty() || o.heldout_split > 0.0;
  if (!o.heldout.empty() && o.heldout_split > 0.0) fail("--heldout and --heldout-split exclude each other");
  if (want_heldout && type != OutputType::kInt8) fail("held-out evaluation (--heldout, --heldout-split) needs --dtype int8");
  if (o.heldout_split != 0.0 && !(o.heldout_split > 0.0 && o.heldout_split < 1.0)) {
    fail("--heldout-split must be in (0, 1), got ", o.heldout_split);
  }
  if (o.heldout_scale != 1.0) {
    if (!want_heldout) fail("--heldout-scale needs held-out data (--heldout or --heldout-split)");
    if (!(o.heldout_scale > 0.0 && std::isfinite(o.heldout_scale))) {
      fail("--heldout-scale must be a positive number, got ", o.heldout_scale);
    }
  }
  if (parse_range_mode(o.range_mode) != EA_RANGE_STATIC && !want_heldout) {
    fail("--range-mode needs held-out data (--heldout or --heldout-split)");
  }
  if (o.smooth_alpha >= 0.0 || !o.smooth_layers.empty()) {
    if (o.smooth_alpha < 0.0) fail("--smooth-layers needs --smooth-alpha A");
    if (o.calib.empty()) {
      fail("--smooth-alpha needs calibration data (--calib FILE.npz): the factors come from its per-channel maxima");
    }
  }
  calib_options(o);  // --calib-method, --calib-headroom
  return type;
}

CalibOptions calib_options(const ConvertOptions& o) {
  CalibOptions c;
  c.method = parse_calib_method(o.calib_method);
  c.percentile = o.calib_percentile;
  parse_calib_headroom(o.calib_headroom, &c);
  return c;
}

HeldoutChoice heldout_choice(const ConvertOptions& o) {
  HeldoutChoice h;
  h.path = o.heldout;
  h.split = o.heldout_split;
  h.scale = o.heldout_scale;
  h.policy = parse_range_mode(o.range_mode);
  h.calib_path = o.calib;
  h.data_keys = parse_data_keys(o.data_keys);
  return h;
}

std::string producer_source(const ConvertOptions& o, const CalibOptions& c, const std::vector<LayerData>& calib,
                            bool residual16) {
  std::string source = base_name(o.weights);
  if (o.dtype == "int8" && !calib.empty()) {
    source += "; int8 calibration: " + describe(c) + " on " + std::to_string(calib[0].n) + " samples of " +
              base_name(o.calib);
  }
  if (o.dtype == "int8" && residual16) source += "; residual stream int16";
  if (o.smooth_alpha >= 0.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "; SmoothQuant alpha %.10g", o.smooth_alpha);
    source += buf;
  }
  return source;
}

ConvertReport report_header(const ConvertOptions& o, const ModelSpec& spec, const CalibOptions& c,
                            const std::string& heldout_what, const std::vector<SmoothedPair>& smoothing,
                            std::vector<std::string> warnings) {
  ConvertReport r;
  r.model = spec.model.empty() ? base_name(o.spec) : spec.model;
  r.preset = spec.preset;
  r.output = o.output;
  r.source = o.weights;
  r.dtype = o.dtype;
  r.reference = "float64 reference on the calibration inputs";
  if (o.dtype == "int8") r.calib_method = describe(c);
  r.heldout = heldout_what;
  r.smooth_alpha = o.smooth_alpha;
  r.smoothing = smoothing;
  r.warnings = std::move(warnings);
  return r;
}

}  // namespace convert
}  // namespace edgeattn
