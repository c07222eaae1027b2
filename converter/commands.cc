#include "converter/commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "converter/convert.h"
#include "converter/emit_c.h"
#include "converter/error.h"
#include "converter/heldout.h"
#include "converter/inspect.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/kinds/kind.h"
#include "converter/metrics.h"
#include "converter/report.h"
#include "converter/runner.h"
#include "converter/smooth.h"
#include "converter/svg.h"
#include "converter/tokens.h"

namespace edgeattn {
namespace convert {
namespace {

void write_text(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char* layer_dtype(const Model& m, int i) {
  LayerInfo info;
  m.GetLayerInfo(i, &info);
  return info.dtype == EA_S8 ? "int8" : "f32";
}

// True when stdout and stderr are the same file (one terminal, or `>log 2>&1`).
bool stdout_is_stderr() {
  struct stat a, b;
  return ::fstat(STDOUT_FILENO, &a) == 0 && ::fstat(STDERR_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// One status line on a terminal's stderr, rewritten in place and erased when
// done (or on failure, before main() prints the error).
class Progress {
 public:
  Progress(bool enabled, size_t layers) : enabled_(enabled), layers_(layers) {}
  ~Progress() { clear(); }
  void operator()(const std::string& stage, size_t layer, const std::string& name, const std::string& what) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << stage << ": layer " << layer + 1 << " of " << layers_ << " '" << name << "': " << what
              << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_;
  size_t layers_;
  bool shown_ = false;
};

// The calibrated tensors of a layer in a fixed order, without the copies
// (self-attention's key/value are its query; a missing value is the key).
std::vector<TensorRangeRow> range_rows(const LayerCalibration& c) {
  std::vector<TensorRangeRow> rows;
  for (const char* key : {"query", "key", "value", "q_proj", "k_proj", "v_proj", "w_q", "w_k", "w", "context",
                          "output"}) {
    const auto seen = c.seen.find(key);
    const auto used = c.ranges.find(key);
    if (seen == c.seen.end() || used == c.ranges.end() || seen->second.count == 0) continue;
    if (c.copies.count(key) != 0) continue;
    TensorRangeRow t;
    t.tensor = key;
    t.seen_lo = seen->second.lo;
    t.seen_hi = seen->second.hi;
    const ActQuantParams q = act_quant(used->second.lo, used->second.hi);
    t.scale = q.scale;
    t.zero_point = q.zero_point;
    t.lo = q.scale * (-128 - q.zero_point);
    t.hi = q.scale * (127 - q.zero_point);
    rows.push_back(t);
  }
  return rows;
}

}  // namespace

void run_convert(const ConvertOptions& o, std::ostream& out) {
  OutputType type;
  if (o.dtype == "int8") {
    type = OutputType::kInt8;
    if (o.calib.empty()) fail("--dtype int8 requires calibration data (--calib FILE.npz)");
  } else if (o.dtype == "f32") {
    type = OutputType::kF32;
  } else {
    fail("--dtype must be int8 or f32, got '", o.dtype, "'");
  }
  if (o.output.empty()) fail("missing output file (-o OUT.eatn)");
  // Every output is checked before the (possibly long) conversion starts.
  check_writable(o.output);
  if (!o.report_json.empty()) check_writable(o.report_json);
  if (!o.emit_c.empty()) {
    check_writable(o.emit_c + ".h");
    check_writable(o.emit_c + ".c");
  }
  // The weights file's arrays are needed only to resolve the spec (the
  // layers keep their own copies): freed before the calibration data is read.
  ModelSpec spec = [&] {
    const ArrayMap weights = load_weights(o.weights);
    const std::vector<uint8_t> spec_bytes = read_file(o.spec);
    return load_spec(o.spec, std::string(spec_bytes.begin(), spec_bytes.end()), weights, o.weights,
                     LengthOverrides{o.max_q_len, o.max_kv_len});
  }();
  spec.tile_scratch = !o.no_tile_scratch;
  // Every tensor of the weights file is used or listed; one next to a used
  // tensor stops here (before calibration) unless --allow-unused.
  const std::vector<std::string> unused_warnings = check_unused(spec, o.weights, o.allow_unused);
  CalibOptions calib_options;
  calib_options.method = parse_calib_method(o.calib_method);
  calib_options.percentile = o.calib_percentile;
  parse_calib_headroom(o.calib_headroom, &calib_options);
  const bool want_heldout = !o.heldout.empty() || o.heldout_split > 0.0;
  if (!o.heldout.empty() && o.heldout_split > 0.0) fail("--heldout and --heldout-split exclude each other");
  if (want_heldout && type != OutputType::kInt8) fail("held-out evaluation (--heldout, --heldout-split) needs --dtype int8");
  if (o.heldout_split != 0.0 && !(o.heldout_split > 0.0 && o.heldout_split < 1.0)) {
    fail("--heldout-split must be in (0, 1), got ", o.heldout_split);
  }
  Progress progress(!o.quiet && ::isatty(STDERR_FILENO) == 1, spec.layers.size());
  std::vector<LayerData> calib, heldout;
  if (!o.calib.empty()) {
    ArrayMap npz = load_data_npz(o.calib, "calibration data (--calib)");
    for (const FloatLayer& L : spec.layers) calib.push_back(take_layer_data(&npz, o.calib, L, false));
  }
  std::string heldout_what;
  if (!o.heldout.empty()) {
    ArrayMap npz = load_data_npz(o.heldout, "held-out data (--heldout)");
    for (const FloatLayer& L : spec.layers) heldout.push_back(take_layer_data(&npz, o.heldout, L, false));
    heldout_what = o.heldout;
  } else if (o.heldout_split > 0.0) {
    for (size_t i = 0; i < calib.size(); ++i) {
      LayerData keep, held;
      split_heldout(calib[i], o.heldout_split, o.calib + ": layer '" + spec.layers[i].name + "'", &keep, &held);
      calib[i] = std::move(keep);
      heldout.push_back(std::move(held));
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "the last %d of the %d samples of %s (--heldout-split %.10g)",
                  heldout.empty() ? 0 : heldout[0].n, heldout.empty() ? 0 : heldout[0].n + calib[0].n,
                  base_name(o.calib).c_str(), o.heldout_split);
    heldout_what = buf;
  }
  if (o.heldout_scale != 1.0) {
    if (!want_heldout) fail("--heldout-scale needs held-out data (--heldout or --heldout-split)");
    if (!(o.heldout_scale > 0.0 && std::isfinite(o.heldout_scale))) {
      fail("--heldout-scale must be a positive number, got ", o.heldout_scale);
    }
    for (LayerData& d : heldout) {
      for (std::vector<double>* v : {&d.query, &d.key, &d.value}) {
        for (double& x : *v) x *= o.heldout_scale;
      }
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, ", inputs scaled by %.10g (--heldout-scale)", o.heldout_scale);
    heldout_what += buf;
  }
  const ea_range_policy range_policy = parse_range_mode(o.range_mode);
  if (range_policy != EA_RANGE_STATIC) {
    if (!want_heldout) fail("--range-mode needs held-out data (--heldout or --heldout-split)");
    heldout_what += std::string(", runtime range mode ") + range_mode_name(range_policy) + " (--range-mode)";
  }
  std::vector<SmoothedPair> smoothing;
  if (o.smooth_alpha >= 0.0 || !o.smooth_layers.empty()) {
    if (o.smooth_alpha < 0.0) fail("--smooth-layers needs --smooth-alpha A");
    if (calib.empty()) fail("--smooth-alpha needs calibration data (--calib FILE.npz): the factors come from its per-channel maxima");
    smoothing = smooth_model(&spec, calib, o.smooth_alpha, o.smooth_layers);
  }
  // The file records how its int8 ranges were made (inspect shows it).
  std::string source = base_name(o.weights);
  if (type == OutputType::kInt8 && !calib.empty()) {
    source += "; int8 calibration: " + describe(calib_options) + " on " + std::to_string(calib[0].n) +
              " samples of " + base_name(o.calib);
  }
  if (o.smooth_alpha >= 0.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "; SmoothQuant alpha %.10g", o.smooth_alpha);
    source += buf;
  }
  std::vector<FloatOutputs> float_outputs;
  std::vector<LayerCalibration> calibration;
  const std::vector<uint8_t> bytes =
      build_model(spec, type, calib, o.calib, source, [&](size_t i, const std::string& what) {
        progress("convert", i, spec.layers[i].name, what);
      }, &float_outputs, calib_options, &calibration);
  const LoadedModel lm(bytes, o.output);

  ConvertReport r;
  r.model = spec.model.empty() ? base_name(o.spec) : spec.model;
  r.output = o.output;
  r.source = o.weights;
  r.dtype = o.dtype;
  r.reference = "float64 reference on the calibration inputs";
  if (type == OutputType::kInt8) r.calib_method = describe(calib_options);
  r.heldout = heldout_what;
  r.smooth_alpha = o.smooth_alpha;
  r.smoothing = smoothing;
  r.file_bytes = bytes.size();
  const fb::Model& fm = *lm.model().flatbuffer();
  r.data_bytes = fm.data() != nullptr ? fm.data()->size() : 0;
  r.arena_bytes = fm.arena_bytes();
  r.tensors = list_tensors(fm);
  r.weights_tensors = spec.weights_tensors;
  r.unused = spec.unused;
  r.warnings = unused_warnings;
  for (const TensorEntry& t : r.tensors) r.weight_bytes += t.size;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    LayerResult lr;
    lr.name = L.name;
    lr.kind = L.kind->name;
    lr.has_weights = L.heads() > 0;
    lr.dtype = o.dtype;
    lr.arena_bytes = fm.layers()->Get(static_cast<uint32_t>(i))->arena_bytes();
    {
      LayerInfo info = {};
      if (lm.model().GetLayerInfo(static_cast<int>(i), &info) == Status::kOk) lr.coverage_bytes = info.coverage_bytes;
    }
    if (!calib.empty()) {
      progress("verify", i, L.name,
               "runtime vs float64 reference on " + std::to_string(calib[i].n) + " sample" +
                   (calib[i].n == 1 ? "" : "s"));
      const RunResult run = run_layer(lm, static_cast<int>(i), calib[i], 1);
      // int8: the calibration pass already ran the float64 layer on these inputs.
      FloatOutputs ref;
      if (i < float_outputs.size()) {
        ref = std::move(float_outputs[i]);
      } else {
        reference_forward(L, calib[i], &ref.output, &ref.weights);
      }
      lr.metrics = compare(L, calib[i], run.output, ref.output, run.weights, ref.weights);
      lr.has_metrics = true;
      lr.samples = calib[i].n;
    }
    if (i < calibration.size()) {
      lr.calib_samples = calib[i].n;
      lr.ranges = range_rows(calibration[i]);
    }
    if (i < heldout.size()) {
      progress("held-out", i, L.name,
               "runtime vs float64 reference on " + std::to_string(heldout[i].n) + " held-out sample" +
                   (heldout[i].n == 1 ? "" : "s"));
      const HeldoutResult h =
          evaluate_heldout(lm, static_cast<int>(i), L, heldout[i], calibration[i], range_policy);
      lr.has_heldout = true;
      lr.heldout = h.metrics;
      lr.heldout_samples = heldout[i].n;
      for (const RangeExcess& e : h.excess) r.warnings.push_back(e.message());
    }
    r.layers.push_back(lr);
  }
  std::string json_text;
  if (!o.report_json.empty()) json_text = report_json(r).dump(2) + "\n";
  EmittedC emitted;
  if (!o.emit_c.empty()) emitted = emit_c(bytes, lm.model(), o.emit_c, base_name(o.output), o.workers);
  write_file_atomic(o.output, bytes.data(), bytes.size());
  if (!o.emit_c.empty()) {
    try {
      write_emitted_c(emitted, o.emit_c);
    } catch (...) {
      std::remove(o.output.c_str());
      throw;
    }
  }
  if (!o.report_json.empty()) {
    try {
      write_text(o.report_json, json_text);
    } catch (...) {
      std::remove(o.output.c_str());  // a failed conversion leaves no model behind
      throw;
    }
  }
  progress.clear();
  // The report lists the warnings; stderr repeats them only where it is not
  // the report's own file, so each is printed once.
  if (&out != &std::cout || !stdout_is_stderr()) {
    for (const std::string& w : r.warnings) std::cerr << "edgeattn-convert: warning: " << w << "\n";
  }
  print_report(r, out);
}

void run_inspect(const std::string& path, std::ostream& out) {
  const std::vector<uint8_t> bytes = read_file(path);
  const LoadedModel lm(bytes, path);
  print_inspect(lm, path, out);
}

void run_eval(const EvalOptions& o, std::ostream& out) {
  const std::vector<uint8_t> bytes = read_file(o.model);
  const LoadedModel lm(bytes, o.model);
  const Model& model = lm.model();
  const ArrayMap ref = load_data_npz(o.reference, "reference data (--reference)");
  const ea_range_policy range_policy = parse_range_mode(o.range_mode);
  std::vector<LayerResult> results;
  bool svg_done = false;
  if (!o.svg_layer.empty() && model.FindLayer(o.svg_layer.c_str()) < 0) {
    fail(o.model, ": no layer named '", o.svg_layer, "' (--svg-layer)");
  }
  // --tokens: the vocabulary, and the ids from --token-ids or the reference.
  if (!o.token_ids.empty() && o.tokens.empty()) fail("--token-ids needs --tokens VOCAB.txt (the labels of the ids)");
  if (!o.tokens.empty() && o.svg.empty()) fail("--tokens labels the heatmap's axes: it needs --svg FILE");
  const std::vector<std::string> vocab = o.tokens.empty() ? std::vector<std::string>() : read_vocabulary(o.tokens);
  const std::string ids_path = o.token_ids.empty() ? o.reference : o.token_ids;
  const ArrayMap token_ids = o.token_ids.empty() ? ArrayMap() : load_data_npz(o.token_ids, "token ids (--token-ids)");
  const ArrayMap& ids = o.token_ids.empty() ? ref : token_ids;
  out << "edgeattn-convert eval: " << o.model << " on " << o.reference << " (" << o.repeat << " repeats)\n";
  for (int i = 0; i < model.num_layers(); ++i) {
    const FloatLayer shell = layer_shell(model, i);
    LayerResult lr;
    lr.name = shell.name;
    lr.kind = shell.kind->name;
    lr.has_weights = shell.heads() > 0;
    lr.dtype = layer_dtype(model, i);
    LayerInfo info;
    model.GetLayerInfo(i, &info);
    lr.arena_bytes = info.arena_bytes;
    lr.coverage_bytes = info.coverage_bytes;
    if (ref.count(shell.name + ".output") == 0) {
      out << "  " << shell.name << ": no reference data in " << o.reference << ", skipped\n";
      continue;
    }
    const LayerData d = load_layer_data(ref, o.reference, shell, true);
    const RunResult run = run_layer(lm, i, d, o.repeat, range_policy);
    lr.metrics = compare(shell, d, run.output, d.ref_output, run.weights, d.ref_weights);
    lr.has_metrics = true;
    lr.samples = d.n;
    lr.has_latency = true;
    lr.repeat = static_cast<int>(run.set_us.size());
    lr.set_median_us = median(run.set_us);
    lr.set_min_us = *std::min_element(run.set_us.begin(), run.set_us.end());
    lr.sample_median_us = lr.set_median_us / std::max(d.n, 1);
    lr.sample_min_us = lr.set_min_us / std::max(d.n, 1);
    results.push_back(lr);

    // The heatmap: the named layer, or the first with attention weights.
    const bool want_svg = !o.svg.empty() && !svg_done &&
                          (o.svg_layer.empty() ? shell.heads() > 0 : o.svg_layer == shell.name);
    if (want_svg) {
      if (shell.heads() == 0) {
        fail(o.model, ": layer '", shell.name, "' (", lr.kind, ") has no attention weights to draw (--svg-layer)");
      }
      if (o.svg_sample < 0 || o.svg_sample >= d.n) {
        fail(o.reference, ": --svg-sample ", o.svg_sample, " is outside 0..", d.n - 1);
      }
      if (o.svg_head < 0 || o.svg_head >= shell.heads()) {
        fail(o.model, ": layer '", shell.name, "': --svg-head ", o.svg_head, " is outside 0..", shell.heads() - 1);
      }
      const int lq = shell.learned_query() ? 1 : d.lq;
      const size_t base = (static_cast<size_t>(o.svg_sample) * shell.heads() + o.svg_head) * lq * d.lk;
      Heatmap hm;
      hm.rows = lq;
      hm.cols = d.lk;
      hm.weights.assign(run.weights.begin() + static_cast<long>(base),
                        run.weights.begin() + static_cast<long>(base + static_cast<size_t>(lq) * d.lk));
      // Masked cells and padded rows as the runtime sees them (padded rows:
      // self-attention with key padding, the rows eval does not compare).
      const int valid = d.valid[static_cast<size_t>(o.svg_sample)];
      for (int r = 0; r < lq; ++r) {
        hm.padded_rows.push_back(shell.self_attention() && shell.mask == MaskKind::kKeyPadding && valid >= 0 &&
                                 r >= valid);
        const int limit = row_limit(shell, r, lq, d.lk, valid);
        for (int c = 0; c < d.lk; ++c) hm.masked.push_back(c >= limit);
      }
      if (!vocab.empty()) {
        if (!shell.learned_query()) {  // a learned query has no token
          hm.row_labels = token_labels(ids, ids_path, shell.name + ".query_ids", d.n, lq, o.svg_sample, vocab,
                                       o.tokens);
        }
        hm.col_labels = token_labels(ids, ids_path, shell.name + ".key_ids", d.n, d.lk, o.svg_sample, vocab,
                                     o.tokens);
        if (hm.col_labels.empty() && shell.self_attention()) hm.col_labels = hm.row_labels;
        if (hm.row_labels.empty() && hm.col_labels.empty()) {
          fail(ids_path, ": no token ids for layer '", shell.name, "' (--tokens): give ",
               shell.learned_query() ? "" : "'" + shell.name + ".query_ids' [N, Lq] and/or ", "'",
               shell.name, ".key_ids' [N, Lk], integer ids into ", o.tokens);
        }
      }
      const bool pooling = shell.learned_query();
      hm.row_axis = pooling ? "learned query" : hm.row_labels.empty() ? "query position" : "query token";
      hm.col_axis = hm.col_labels.empty() ? "key position" : "key token";
      std::ostringstream title, what, sample;
      title << shell.name;
      if (shell.heads() > 1) title << ", head " << o.svg_head;
      title << ", sample " << o.svg_sample << " (" << lr.dtype << ")";
      hm.title = title.str();
      const char* mask = shell.mask == MaskKind::kCausal       ? ", causal mask"
                         : shell.mask == MaskKind::kKeyPadding ? ", key padding mask"
                                                               : "";
      what << base_name(o.model) << ": layer " << shell.name << " (" << lr.kind;
      if (shell.heads() > 1) what << ", " << shell.heads() << " heads";
      what << mask << "), attention weights computed by the runtime.";
      sample << "Sample " << o.svg_sample << " of " << base_name(o.reference) << ": ";
      if (valid >= 0) {
        sample << valid << " of " << d.lk << " keys valid.";
      } else {
        sample << "all " << d.lk << " keys valid.";
      }
      hm.caption = {what.str(), sample.str()};
      if (!vocab.empty()) {
        hm.caption.push_back("Tokens: " + base_name(o.tokens) + ", ids from " + base_name(ids_path) + ".");
      }
      hm.caption.push_back("Colour: square-root ramp, so small weights stay visible; a cell's tooltip has its value.");
      const auto* prod = model.flatbuffer()->producer();
      hm.desc = "model " + o.model + "; producer: " + (prod && prod->source() ? prod->source()->str() : "") +
                "; reference " + o.reference + (vocab.empty() ? "" : "; tokens " + o.tokens + ", ids " + ids_path);
      write_text(o.svg, heatmap_svg(hm));
      svg_done = true;
    }
  }
  // Nothing compared is a failure, not an empty success: the reference file
  // holds no '<layer>.output' for any layer of the model.
  if (results.empty()) {
    std::string layers, keys;
    for (int i = 0; i < model.num_layers(); ++i) layers += (i ? ", " : "") + layer_shell(model, i).name;
    for (const auto& kv : ref) {
      if (kv.first.size() > 7 && kv.first.compare(kv.first.size() - 7, 7, ".output") == 0) {
        keys += (keys.empty() ? "" : ", ") + kv.first;
      }
    }
    fail(o.reference, ": no layer of ", o.model, " was compared: no '<layer>.output' for its layers (", layers,
         "); the file has ", keys.empty() ? std::string("no '*.output' key") : keys,
         " (is it the reference file of another model?)");
  }
  print_layer_table(results, out);
  // Quality gates (--max-rel-l2, --min-cosine): every failing layer in one line.
  const bool gated = o.max_rel_l2 >= 0.0 || o.min_cosine > -2.0;
  std::string worse;
  if (gated) {
    for (const LayerResult& l : results) {
      char buf[256];
      if (o.max_rel_l2 >= 0.0 && !(l.metrics.rel_l2 <= o.max_rel_l2)) {
        std::snprintf(buf, sizeof buf, "%slayer '%s': relative L2 %.4g > --max-rel-l2 %.10g",
                      worse.empty() ? "" : "; ", l.name.c_str(), l.metrics.rel_l2, o.max_rel_l2);
        worse += buf;
      }
      if (o.min_cosine > -2.0 && !(l.metrics.cosine >= o.min_cosine)) {
        std::snprintf(buf, sizeof buf, "%slayer '%s': cosine %.6f < --min-cosine %.10g",
                      worse.empty() ? "" : "; ", l.name.c_str(), l.metrics.cosine, o.min_cosine);
        worse += buf;
      }
    }
  }
  if (!o.svg.empty()) {
    if (!svg_done) fail(o.reference, ": no data for the --svg layer");
    out << "wrote " << o.svg << "\n";
  }
  if (!o.json.empty()) {
    nlohmann::json j = {{"model", o.model}, {"reference", o.reference}, {"layers", nlohmann::json::array()}};
    for (const LayerResult& l : results) j["layers"].push_back(layer_json(l));
    write_text(o.json, j.dump(2) + "\n");
  }
  if (!worse.empty()) fail(o.model, ": below the accuracy gate: ", worse);
  if (gated) {
    out << "accuracy gate passed (" << results.size() << (results.size() == 1 ? " layer" : " layers");
    if (o.max_rel_l2 >= 0.0) out << ", relative L2 <= " << o.max_rel_l2;
    if (o.min_cosine > -2.0) out << ", cosine >= " << o.min_cosine;
    out << ")\n";
  }
}

}  // namespace convert
}  // namespace edgeattn
