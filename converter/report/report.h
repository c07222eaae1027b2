// The conversion report (text on stdout, the same as JSON with --report-json)
// and the per-layer accuracy/latency tables shared with `eval`.
#ifndef EDGEATTN_CONVERTER_REPORT_REPORT_H_
#define EDGEATTN_CONVERTER_REPORT_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "converter/eval/heldout.h"
#include "converter/report/inspect.h"
#include "converter/eval/metrics.h"
#include "converter/calibrate/smooth.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

// One calibrated tensor: what calibration saw and the range the method chose.
struct TensorRangeRow {
  std::string tensor;  // RangeMap key
  double seen_lo = 0, seen_hi = 0, lo = 0, hi = 0;
  double scale = 0;
  int zero_point = 0;
  bool int16 = false;  // a tensor of the 16-bit residual stream (symmetric int16)
};

struct LayerResult {
  std::string name, kind, dtype;
  bool has_weights = true;  // attention weights to compare (not layernorm, ffn)
  // eval: the layer has attention weights but the reference file does not
  // (outputs compared only).
  bool weights_skipped = false;
  uint64_t arena_bytes = 0;
  uint64_t coverage_bytes = 0;  // additive coverage layers: the persistent coverage vector (in arena_bytes)
  int samples = 0;
  bool has_metrics = false;
  Metrics metrics;
  // convert, a chained layer: the chain's error up to this layer, the
  // runtime's own outputs passed on (verify.h LayerAccuracy::chained).
  bool has_chained = false;
  Metrics chained;
  // Latency (eval): microseconds for the whole sample set and per sample.
  // eval, a whole model (row "model", float outputs): output rows whose
  // largest value is where the reference's is, and with the reference's
  // labels ('<layer>.labels') the rows whose largest value is the label,
  // the model's (correct) and the reference's own (reference_correct).
  bool has_top1 = false;
  size_t top1_rows = 0, top1_agreeing = 0;
  std::string labels;  // the labels' key; empty: none
  size_t labelled_rows = 0, correct = 0, reference_correct = 0;
  bool has_latency = false;
  double set_median_us = 0, set_min_us = 0, sample_median_us = 0, sample_min_us = 0;
  int repeat = 0;
  // convert, int8: the calibrated ranges, and accuracy on held-out data.
  int calib_samples = 0;
  std::vector<TensorRangeRow> ranges;
  bool has_heldout = false;
  HeldoutMetrics heldout;  // mha: also the plain int8 scheme's figures (plain_int8.h)
  int heldout_samples = 0;
};

struct ConvertReport {
  std::string model, output, source, dtype, reference;  // reference: what metrics compare to
  std::string preset;  // a whole-model preset's account of the layers it made (spec.h), or ""
  uint64_t file_bytes = 0, weight_bytes = 0, data_bytes = 0, arena_bytes = 0;
  std::vector<TensorEntry> tensors;
  // The weights file's tensors: how many, and the ones no layer uses (those
  // next to a used tensor only with --allow-unused; spec.h).
  size_t weights_tensors = 0;
  std::vector<UnusedTensor> unused;
  std::vector<LayerResult> layers;
  std::string calib_method;  // int8: e.g. "mse", "percentile 99.99"
  std::string residual;      // int8 with blocks: the residual stream chosen and, for the default, why
  std::string heldout;       // where held-out data came from ("" = none)
  // --smooth-alpha (smooth.h): the alpha (< 0: off) and each fold.
  double smooth_alpha = -1.0;
  std::vector<SmoothedPair> smoothing;
  std::vector<std::string> warnings;  // unused tensors (--allow-unused), held-out inputs beyond a calibrated range
};

void print_report(const ConvertReport& r, std::ostream& os);
nlohmann::json report_json(const ConvertReport& r);

// Per-layer accuracy/latency table only (used by eval too).
void print_layer_table(const std::vector<LayerResult>& layers, std::ostream& os);
nlohmann::json layer_json(const LayerResult& l);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_REPORT_H_
