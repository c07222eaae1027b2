#include "converter/report/convert_report.h"

#include <set>

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

// Every calibrated tensor of a layer (a block's internal ones too: its
// LayerNorms, projections, softmax inputs, FFN, residual adds), without the
// copies (self-attention's key/value are its query; a missing value is the
// key): the layer's ends first, then the kind's calibration points in its
// order. With `used` (write_model's record), one row per quantization the
// file holds, at the parameters it holds: a point the writer took as int8
// and as int16 (a post-norm LayerNorm's output on the 16-bit residual
// stream) has two, an FFN's hidden tensor its range cut where the
// activation is flat, a point no table was quantized from none. Without
// it, every point once at its chosen range, the layer's input, output and
// adds int16 on the 16-bit residual stream.
std::vector<TensorRangeRow> range_rows(const FloatLayer& L, const LayerCalibration& c, const PointUses* used) {
  std::vector<std::string> order = {"query", "key", "value", "q_proj", "k_proj", "v_proj", "w_q", "w_k", "w",
                                    "context", "add1", "add2", "add3", "output"};
  if (L.kind->value_points != nullptr) {
    for (const std::string& k : L.kind->value_points(L)) order.push_back(k);
  }
  if (L.kind->minmax_points != nullptr) {
    for (const std::string& k : L.kind->minmax_points(L)) order.push_back(k);
  }
  for (const auto& kv : c.ranges) order.push_back(kv.first);
  std::vector<TensorRangeRow> rows;
  std::set<std::string> listed;
  for (const std::string& k : order) {
    if (!listed.insert(k).second) continue;
    const auto seen = c.seen.find(k);
    const auto chosen = c.ranges.find(k);
    if (seen == c.seen.end() || chosen == c.ranges.end() || seen->second.count == 0) continue;
    if (c.copies.count(k) != 0) continue;
    PointQuant u;
    if (used != nullptr) {
      const auto it = used->find(k);
      if (it == used->end()) continue;  // calibrated, but no table of the file is quantized from it
      u = it->second;
    } else {
      const bool stream = ((k == "query" || (k == "key" && L.learned_query())) && L.input16) ||
                          (L.output16 && (k == "output" || k.rfind("add", 0) == 0));
      if (stream) {
        u.int16 = true;
        u.q16 = stream16_quant(chosen->second, k);
      } else {
        u.int8 = true;
        u.q8 = act_quant(chosen->second.lo, chosen->second.hi);
      }
    }
    for (const bool int16 : {false, true}) {
      if (!(int16 ? u.int16 : u.int8)) continue;
      const ActQuantParams& q = int16 ? u.q16 : u.q8;
      TensorRangeRow t;
      t.tensor = k;
      t.seen_lo = seen->second.lo;
      t.seen_hi = seen->second.hi;
      t.scale = q.scale;
      t.zero_point = q.zero_point;
      t.int16 = int16;
      t.lo = int16 ? q.scale * -32768 : q.scale * (-128 - q.zero_point);
      t.hi = int16 ? q.scale * 32767 : q.scale * (127 - q.zero_point);
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
      lr.ranges = range_rows(L, c.calibration[i], c.used != nullptr && i < c.used->size() ? &(*c.used)[i] : nullptr);
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
