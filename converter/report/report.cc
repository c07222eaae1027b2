#include "converter/report/report.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>

#include "converter/eval/heldout.h"
#include "converter/eval/plain_int8.h"

namespace edgeattn {
namespace convert {
namespace {

template <typename T>
std::string shape_str(const std::vector<T>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

nlohmann::json worst_json(const Metrics& m) {
  return {{"index", m.worst_sample}, {"relative_l2", m.worst_rel_l2}, {"cosine", m.worst_cosine},
          {"max_abs_error", m.worst_max_abs}};
}

// Accuracy figures only (the held-out block of a layer).
nlohmann::json metrics_json(const Metrics& m, int samples) {
  if (m.indices) return {{"samples", samples}, {"agreement", m.agreement}, {"compared_rows", m.rows}};
  return {{"samples", samples}, {"max_abs_error", m.max_abs}, {"ref_max_abs", m.ref_max_abs},
          {"relative_l2", m.rel_l2}, {"cosine", m.cosine}, {"attn_weights_max_abs_diff", m.weights_max_abs},
          {"compared_rows", m.rows}, {"worst_sample", worst_json(m)}};
}

// A layer whose outputs are class indices (argmax): the rows whose indices
// equal the float model's, instead of error figures.
std::string agreement_line(const Metrics& m) {
  return "  agreement " + fmt("%.2f", 100.0 * m.agreement) + " % (" + std::to_string(m.agreeing_rows) + " of " +
         std::to_string(m.rows) + " rows' indices equal the float64 model's)";
}

void print_ranges(const std::vector<LayerResult>& layers, std::ostream& os) {
  for (const LayerResult& l : layers) {
    for (const TensorRangeRow& t : l.ranges) {
      os << "  " << std::left << std::setw(12) << l.name << " " << std::setw(26) << tensor_label(t.tensor)
         << " seen [" << fmt("%.4g", t.seen_lo) << ", " << fmt("%.4g", t.seen_hi) << "]  "
         << (t.int16 ? "int16" : "int8") << " range ["
         << fmt("%.4g", t.lo) << ", " << fmt("%.4g", t.hi) << "]  scale " << fmt("%.6g", t.scale)
         << " zero_point " << t.zero_point << "\n";
    }
  }
}

// The plain int8 scheme's line under an mha layer's held-out figures.
void print_plain_int8(const HeldoutMetrics& h, std::ostream& os) {
  const Metrics& p = h.plain_int8;
  os << "  " << std::setw(26) << "" << "plain int8, float softmax: relL2 " << fmt("%.3e", p.rel_l2) << "  cos "
     << fmt("%.6f", p.cosine) << "  max|err| " << fmt("%.3e", p.max_abs) << "  edgeattn/plain relL2 "
     << (p.rel_l2 > 0.0 ? fmt("%.3f", h.rel_l2 / p.rel_l2) : std::string("-")) << "\n";
}

nlohmann::json plain_int8_json(const HeldoutMetrics& h) {
  const Metrics& p = h.plain_int8;
  nlohmann::json j = {{"scheme", kPlainInt8Scheme},
                      {"max_abs_error", p.max_abs},
                      {"relative_l2", p.rel_l2},
                      {"cosine", p.cosine},
                      {"attn_weights_max_abs_diff", p.weights_max_abs},
                      {"worst_sample", worst_json(p)}};
  j["edgeattn_over_plain_relative_l2"] = p.rel_l2 > 0.0 ? nlohmann::json(h.rel_l2 / p.rel_l2) : nlohmann::json();
  return j;
}

}  // namespace

void print_layer_table(const std::vector<LayerResult>& layers, std::ostream& os) {
  for (const LayerResult& l : layers) {
    os << "  " << std::left << std::setw(12) << l.name << " " << std::setw(8) << l.kind << " "
       << std::setw(4) << l.dtype;
    if (l.has_metrics && l.metrics.indices) {
      os << agreement_line(l.metrics) << "  [" << l.samples << " samples]";
    } else if (l.has_metrics) {
      const Metrics& m = l.metrics;
      os << "  max|err| " << fmt("%.3e", m.max_abs) << " (ref max " << fmt("%.3g", m.ref_max_abs)
         << ")  relL2 " << fmt("%.3e", m.rel_l2) << "  cos " << fmt("%.6f", m.cosine);
      if (l.has_weights) os << "  attn max|diff| " << fmt("%.3e", m.weights_max_abs);
      if (l.weights_skipped) os << "  attn: not in reference";
      os << "  [" << l.samples
         << " samples, " << m.rows << " rows]";
      if (l.samples > 1) {
        os << "\n  " << std::setw(26) << "" << "worst sample " << m.worst_sample << ": relL2 "
           << fmt("%.3e", m.worst_rel_l2) << "  cos " << fmt("%.6f", m.worst_cosine) << "  max|err| "
           << fmt("%.3e", m.worst_max_abs);
      }
    }
    if (l.has_latency) {
      os << "\n  " << std::setw(26) << "" << "latency: set median " << fmt("%.1f", l.set_median_us)
         << " us, min " << fmt("%.1f", l.set_min_us) << " us; per sample median "
         << fmt("%.2f", l.sample_median_us) << " us, min " << fmt("%.2f", l.sample_min_us)
         << " us (" << l.repeat << " repeats)";
    }
    os << "\n";
  }
}

nlohmann::json layer_json(const LayerResult& l) {
  nlohmann::json j = {{"name", l.name}, {"kind", l.kind}, {"dtype", l.dtype},
                      {"arena_bytes", l.arena_bytes}, {"samples", l.samples}};
  if (l.coverage_bytes != 0) j["coverage_bytes"] = l.coverage_bytes;
  if (l.has_metrics && l.metrics.indices) {
    j["agreement"] = l.metrics.agreement;
    j["compared_rows"] = l.metrics.rows;
  } else if (l.has_metrics) {
    j["max_abs_error"] = l.metrics.max_abs;
    j["ref_max_abs"] = l.metrics.ref_max_abs;
    j["relative_l2"] = l.metrics.rel_l2;
    j["cosine"] = l.metrics.cosine;
    j["attn_weights_max_abs_diff"] =
        l.weights_skipped ? nlohmann::json() : nlohmann::json(l.metrics.weights_max_abs);
    j["compared_rows"] = l.metrics.rows;
    j["worst_sample"] = worst_json(l.metrics);
  }
  if (l.has_top1) {
    j["top1_rows"] = l.top1_rows;
    j["top1_agreeing_rows"] = l.top1_agreeing;
    j["top1_agreement"] = l.top1_rows ? static_cast<double>(l.top1_agreeing) / static_cast<double>(l.top1_rows) : 1.0;
  }
  if (!l.labels.empty()) {
    const double n = static_cast<double>(std::max<size_t>(l.labelled_rows, 1));
    j["labels"] = l.labels;
    j["labelled_rows"] = l.labelled_rows;
    j["correct"] = l.correct;
    j["reference_correct"] = l.reference_correct;
    j["accuracy"] = static_cast<double>(l.correct) / n;
    j["reference_accuracy"] = static_cast<double>(l.reference_correct) / n;
  }
  if (l.has_latency) {
    j["latency_us"] = {{"set_median", l.set_median_us}, {"set_min", l.set_min_us},
                       {"per_sample_median", l.sample_median_us}, {"per_sample_min", l.sample_min_us},
                       {"repeat", l.repeat}};
  }
  return j;
}

void print_report(const ConvertReport& r, std::ostream& os) {
  os << "edgeattn-convert: " << r.model << " -> " << r.output << " (" << r.dtype << ", from "
     << r.source << ")\n";
  if (!r.preset.empty()) os << "preset " << r.preset << "\n";
  os << "tensors:\n";
  for (const TensorEntry& t : r.tensors) {
    os << "  " << std::left << std::setw(12) << t.layer << " " << std::setw(44) << t.name << " "
       << std::setw(12) << shape_str(t.shape) << " " << std::setw(6) << t.dtype << std::right
       << std::setw(8) << t.size << " B\n";
  }
  os << std::left << "totals: file " << r.file_bytes << " B, weights " << r.weight_bytes
     << " B (data blob " << r.data_bytes << " B), model arena " << r.arena_bytes << " B\n";
  os << "layer arena:";
  for (const LayerResult& l : r.layers) {
    os << " " << l.name << " " << l.arena_bytes << " B";
    if (l.coverage_bytes != 0) os << " (coverage " << l.coverage_bytes << " B)";
    os << ";";
  }
  os << "\n";
  os << "weights file: " << r.weights_tensors << " tensor" << (r.weights_tensors == 1 ? "" : "s") << ", "
     << r.weights_tensors - r.unused.size() << " used by the layers, " << r.unused.size() << " unused"
     << (r.unused.empty() ? "" : ":") << "\n";
  for (const UnusedTensor& t : r.unused) {
    os << "  unused " << std::setw(44) << t.name << " " << shape_str(t.shape);
    if (!t.beside.empty()) os << "  next to '" << t.beside << "' of layer '" << t.layer << "' (--allow-unused)";
    if (!t.beyond.empty()) os << "  " << t.beyond << " (--allow-unused)";
    os << "\n";
  }
  if (r.smooth_alpha >= 0.0) {
    os << "smoothing (--smooth-alpha " << r.smooth_alpha << "): factors folded into LayerNorm gain/bias and the "
       << "next projections; channel spread = largest / median per-channel max|x| of the LayerNorm output\n";
    for (const SmoothedPair& p : r.smoothing) {
      os << "  " << std::setw(12) << p.layer << " " << std::setw(26) << p.what << std::right << " factors "
         << std::setprecision(4) << p.s_min << " .. " << p.s_max << ", channel spread " << p.spread_before
         << " -> " << p.spread_after << std::setprecision(6) << std::left << "\n";
    }
  }
  bool any = false;
  for (const LayerResult& l : r.layers) any = any || l.has_metrics;
  if (any) {
    os << "accuracy (runtime vs " << r.reference << "):\n";
    print_layer_table(r.layers, os);
  }
  bool chained = false;
  for (const LayerResult& l : r.layers) chained = chained || l.has_chained;
  if (chained) {
    os << "chained layers (the runtime's outputs passed on, against the float64 layers one after another):\n";
    for (const LayerResult& l : r.layers) {
      if (!l.has_chained) continue;
      LayerResult c = l;
      c.metrics = l.chained;
      c.has_latency = false;
      print_layer_table({c}, os);
    }
  }
  if (!r.residual.empty()) os << "residual stream: " << r.residual << "\n";
  if (!r.calib_method.empty()) {
    os << "calibration: " << r.calib_method << " (ranges of the float64 layer over the calibration samples)\n";
    print_ranges(r.layers, os);
  }
  if (!r.heldout.empty()) {
    os << "held-out accuracy (runtime vs float64 reference on " << r.heldout << "):\n";
    for (const LayerResult& l : r.layers) {
      if (!l.has_heldout) continue;
      LayerResult h = l;
      h.metrics = l.heldout;
      h.samples = l.heldout_samples;
      h.has_latency = false;
      print_layer_table({h}, os);
      if (l.heldout.has_plain_int8) print_plain_int8(l.heldout, os);
    }
  }
  for (const std::string& w : r.warnings) os << "warning: " << w << "\n";
}

nlohmann::json report_json(const ConvertReport& r) {
  nlohmann::json j;
  j["model"] = r.model;
  if (!r.preset.empty()) j["preset"] = r.preset;
  j["output"] = r.output;
  j["source"] = r.source;
  j["dtype"] = r.dtype;
  j["file_bytes"] = r.file_bytes;
  j["weight_bytes"] = r.weight_bytes;
  j["data_bytes"] = r.data_bytes;
  j["arena_bytes"] = r.arena_bytes;
  j["reference"] = r.reference;
  j["tensors"] = nlohmann::json::array();
  for (const TensorEntry& t : r.tensors) {
    j["tensors"].push_back({{"layer", t.layer}, {"role", t.role}, {"name", t.name}, {"shape", t.shape},
                            {"dtype", t.dtype}, {"bytes", t.size}, {"offset", t.offset}});
  }
  j["weights_tensors"] = r.weights_tensors;
  j["unused_tensors"] = nlohmann::json::array();
  for (const UnusedTensor& t : r.unused) {
    nlohmann::json u = {{"name", t.name}, {"shape", t.shape}};
    // Next to a used tensor (converted with --allow-unused), or null: in no converted layer's module.
    u["next_to"] = t.beside.empty() ? nlohmann::json() : nlohmann::json{{"tensor", t.beside}, {"layer", t.layer}};
    // A block of a "repeat" pattern beyond its count (converted with --allow-unused).
    if (!t.beyond.empty()) u["beyond_repeat"] = t.beyond;
    j["unused_tensors"].push_back(u);
  }
  j["layers"] = nlohmann::json::array();
  for (const LayerResult& l : r.layers) {
    nlohmann::json lj = layer_json(l);
    if (!l.ranges.empty()) {
      lj["calibration_samples"] = l.calib_samples;
      lj["ranges"] = nlohmann::json::array();
      for (const TensorRangeRow& t : l.ranges) {
        lj["ranges"].push_back({{"tensor", t.tensor}, {"seen", {t.seen_lo, t.seen_hi}}, {"range", {t.lo, t.hi}},
                                {"scale", t.scale}, {"zero_point", t.zero_point}});
        if (t.int16) lj["ranges"].back()["dtype"] = "int16";  // the residual stream (int8 otherwise)
      }
    }
    if (l.has_chained) lj["chained"] = metrics_json(l.chained, l.samples);
    if (l.has_heldout) {
      lj["heldout"] = metrics_json(l.heldout, l.heldout_samples);
      if (l.heldout.has_plain_int8) lj["heldout"]["plain_int8"] = plain_int8_json(l.heldout);
    }
    j["layers"].push_back(lj);
  }
  if (!r.calib_method.empty()) j["calibration_method"] = r.calib_method;
  if (!r.residual.empty()) j["residual_stream"] = r.residual;
  if (!r.heldout.empty()) j["heldout"] = r.heldout;
  if (r.smooth_alpha >= 0.0) {
    j["smoothing"] = {{"alpha", r.smooth_alpha}, {"folds", nlohmann::json::array()}};
    for (const SmoothedPair& p : r.smoothing) {
      j["smoothing"]["folds"].push_back({{"layer", p.layer}, {"pair", p.what}, {"factor_min", p.s_min},
                                         {"factor_max", p.s_max}, {"channel_spread_before", p.spread_before},
                                         {"channel_spread_after", p.spread_after}});
    }
  }
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace convert
}  // namespace edgeattn
