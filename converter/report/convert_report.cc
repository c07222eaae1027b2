#include "converter/report/convert_report.h"

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

// The calibrated tensors of a layer in a fixed order, without the copies
// (self-attention's key/value are its query; a missing value is the key).
// A layer on the 16-bit residual stream (--residual int16) adds its int16
// stream's points and lists its int16 input and output as such.
std::vector<TensorRangeRow> range_rows(const FloatLayer& L, const LayerCalibration& c) {
  std::vector<TensorRangeRow> rows;
  for (const char* key : {"query", "key", "value", "q_proj", "k_proj", "v_proj", "w_q", "w_k", "w", "context",
                          "add1", "add2", "add3", "output"}) {
    const std::string k = key;
    const bool int16 = ((k == "query" || (k == "key" && L.learned_query())) && L.input16) ||
                       (L.output16 && (k == "output" || k.rfind("add", 0) == 0));
    if (k.rfind("add", 0) == 0 && !L.output16) continue;
    const auto seen = c.seen.find(key);
    const auto used = c.ranges.find(key);
    if (seen == c.seen.end() || used == c.ranges.end() || seen->second.count == 0) continue;
    if (c.copies.count(key) != 0) continue;
    TensorRangeRow t;
    t.tensor = key;
    t.seen_lo = seen->second.lo;
    t.seen_hi = seen->second.hi;
    const ActQuantParams q = int16 ? stream16_quant(used->second, key) : act_quant(used->second.lo, used->second.hi);
    t.scale = q.scale;
    t.zero_point = q.zero_point;
    t.int16 = int16;
    t.lo = int16 ? q.scale * -32768 : q.scale * (-128 - q.zero_point);
    t.hi = int16 ? q.scale * 32767 : q.scale * (127 - q.zero_point);
    rows.push_back(t);
  }
  // A block's internal tensors too (issue 37 item 5: norm outputs, the FFN's
  // hidden and activation, the attention's parts), each with its int8 range.
  const ea_layer_kind k = L.kind->runtime_kind;
  if (k == EA_LAYER_ENCODER_BLOCK || k == EA_LAYER_DECODER_BLOCK) {
    for (const auto& [key, seen] : c.seen) {
      bool listed = false;
      for (const TensorRangeRow& t : rows) listed = listed || t.tensor == key;
      const auto used = c.ranges.find(key);
      if (listed || seen.count == 0 || used == c.ranges.end() || c.copies.count(key) != 0) continue;
      TensorRangeRow t;
      t.tensor = key;
      t.seen_lo = seen.lo;
      t.seen_hi = seen.hi;
      const ActQuantParams q = act_quant(used->second.lo, used->second.hi);
      t.scale = q.scale;
      t.zero_point = q.zero_point;
      t.lo = q.scale * (-128 - q.zero_point);
      t.hi = q.scale * (127 - q.zero_point);
      rows.push_back(t);
    }
  }
  return rows;
}

}  // namespace

void add_conversion_results(const ConversionResults& c, ConvertReport* r) {
  r->file_bytes = c.model.size();
  const fb::Model& fm = *c.model.model().flatbuffer();
  r->data_bytes = fm.data() != nullptr ? fm.data()->size() : 0;
  r->arena_bytes = fm.arena_bytes();
  r->tensors = list_tensors(fm);
  r->weights_tensors = c.spec.weights_tensors;
  r->unused = c.spec.unused;
  for (const TensorEntry& t : r->tensors) r->weight_bytes += t.size;
  for (size_t i = 0; i < c.spec.layers.size(); ++i) {
    const FloatLayer& L = c.spec.layers[i];
    LayerResult lr;
    lr.name = L.name;
    lr.kind = L.kind->name;
    lr.has_weights = L.heads() > 0;
    lr.dtype = r->dtype;
    lr.arena_bytes = fm.layers()->Get(static_cast<uint32_t>(i))->arena_bytes();
    LayerInfo info = {};
    if (c.model.model().GetLayerInfo(static_cast<int>(i), &info) == Status::kOk) lr.coverage_bytes = info.coverage_bytes;
    if (i < c.accuracy.size() && c.accuracy[i].has_metrics) {
      lr.metrics = c.accuracy[i].metrics;
      lr.has_metrics = true;
      lr.samples = c.accuracy[i].samples;
      lr.has_chained = c.accuracy[i].has_chained;
      lr.chained = c.accuracy[i].chained;
    }
    if (i < c.calibration.size()) {
      lr.calib_samples = c.calib[i].n;
      lr.ranges = range_rows(L, c.calibration[i]);
    }
    if (i < c.heldout.size()) {
      lr.has_heldout = true;
      lr.heldout = c.heldout[i].metrics;
      lr.heldout_samples = c.heldout[i].samples;
      for (const RangeExcess& e : c.heldout[i].excess) r->warnings.push_back(e.message());
    }
    r->layers.push_back(lr);
  }
}

}  // namespace convert
}  // namespace edgeattn
