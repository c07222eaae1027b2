#include "converter/calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "converter/base/error.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

ActQuantParams act_quant(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  ActQuantParams q;
  double scale = (hi - lo) / 255.0;
  if (!(scale > 0.0)) scale = 1.0 / 255.0;  // constant-zero tensor: any scale represents it
  q.scale = static_cast<double>(static_cast<float>(scale));
  const double zp = std::round(-128.0 - lo / q.scale);
  q.zero_point = static_cast<int>(std::clamp(zp, -128.0, 127.0));
  return q;
}

ActQuantParams stream16_quant(const Range& range, const std::string& what) {
  if (range.count == 0 || !std::isfinite(range.lo) || !std::isfinite(range.hi)) {
    fail(what, ": calibration saw no finite values (empty calibration set?)");
  }
  double scale = std::max(std::fabs(range.lo), std::fabs(range.hi)) / 32767.0;
  if (!(scale > 0.0)) scale = 1.0 / 32767.0;  // constant-zero tensor: any scale represents it
  ActQuantParams q;
  q.scale = static_cast<double>(static_cast<float>(scale));
  return q;
}

ActQuantParams act_quant(const Range& range, const std::string& what) {
  if (range.count == 0 || !std::isfinite(range.lo) || !std::isfinite(range.hi)) {
    fail(what, ": calibration saw no finite values (empty calibration set?)");
  }
  return act_quant(range.lo, range.hi);
}

LayerCalibration calibrate(const FloatLayer& layer, const LayerData& data, const CalibOptions& options,
                           FloatOutputs* outputs) {
  RangeMap seen;
  // Each sample's tensors go into `one` first, then into `seen`: the auto
  // headroom needs every sample's own min and max (Range::sample_lo/hi), and
  // `one` keeps its vectors' memory from sample to sample.
  RangeMap one;
  // Every tensor the methods apply to (the kind's value points) keeps its
  // values from the first sample on; entries a layer does not record are
  // dropped below.
  if (options.method != CalibMethod::kMinMax) {
    for (const std::string& key : layer.kind->value_points(layer)) {
      seen[key].keep_values = true;
      one[key].keep_values = true;
    }
  }
  const std::vector<std::string> minmax_points = layer.kind->minmax_points(layer);
  const std::vector<std::string> exact_points =
      layer.kind->exact_points != nullptr ? layer.kind->exact_points(layer) : std::vector<std::string>{};
  std::vector<double> out;
  if (outputs != nullptr) *outputs = FloatOutputs();
  size_t out_n = 0, w_n = 0;
  if (outputs != nullptr && data.n > 0) {
    // Every sample has the same sizes: the pass writes its outputs and
    // weights straight into their place in the concatenation.
    const SampleInput first = data.sample(layer, 0);
    out_n = output_size(layer, first);
    w_n = weights_size(layer, first);
    resize_large(&outputs->output, out_n * static_cast<size_t>(data.n));
    resize_large(&outputs->weights, w_n * static_cast<size_t>(data.n));
  }
  for (int i = 0; i < data.n; ++i) {
    const size_t si = static_cast<size_t>(i);
    for (auto& [key, r] : one) {
      r.lo = std::numeric_limits<double>::infinity();
      r.hi = -std::numeric_limits<double>::infinity();
      r.count = 0;
      r.values.clear();
    }
    if (outputs != nullptr) {
      forward(layer, data.sample(layer, i), outputs->output.data() + si * out_n, outputs->weights.data() + si * w_n,
              &one);
    } else {
      forward(layer, data.sample(layer, i), &out, nullptr, &one);
    }
    for (const auto& [key, r] : one) {
      Range& s = seen[key];
      if (r.count == 0) continue;
      s.lo = std::min(s.lo, r.lo);
      s.hi = std::max(s.hi, r.hi);
      s.count += r.count;
      if (s.keep_values) s.values.insert(s.values.end(), r.values.begin(), r.values.end());
      s.sample_lo.push_back(r.lo);
      s.sample_hi.push_back(r.hi);
    }
    if (i == 0) {
      // Kept values: room for about n samples like the first (padding makes
      // samples differ; a vector still grows past it), instead of doubling
      // and copying from empty.
      for (auto& [key, r] : seen) {
        if (r.keep_values) reserve_large(&r.values, r.values.size() * static_cast<size_t>(data.n));
      }
    }
  }
  for (auto it = seen.begin(); it != seen.end();) {
    it = it->second.keep_values && it->second.count == 0 ? seen.erase(it) : std::next(it);
  }
  LayerCalibration c;
  for (auto& [key, r] : seen) {
    Range chosen;
    chosen.count = r.count;
    if (r.count == 0) {
      chosen.lo = r.lo;
      chosen.hi = r.hi;
    } else if (std::find(exact_points.begin(), exact_points.end(), key) != exact_points.end()) {
      // the tensor's whole range, known exactly (an embedding's table): no headroom
      chosen.lo = r.lo;
      chosen.hi = r.hi;
    } else if (std::find(minmax_points.begin(), minmax_points.end(), key) != minmax_points.end()) {
      // min/max + headroom whatever the method (additive's pre_tanh: its table clips at +-6)
      CalibOptions minmax = options;
      minmax.method = CalibMethod::kMinMax;
      const ClipRange clip = choose_range(r, minmax);
      chosen.lo = clip.lo;
      chosen.hi = clip.hi;
    } else {
      const ClipRange clip = choose_range(r, options);
      chosen.lo = clip.lo;
      chosen.hi = clip.hi;
    }
    c.ranges[key] = chosen;
    r.values = std::vector<float>();  // only the choice needed them
    r.keep_values = false;
  }
  c.seen = std::move(seen);
  if (layer.self_attention()) {
    c.copies["key"] = "query";
    c.copies["value"] = "query";
  } else if (c.seen.count("value") == 0 && c.seen.count("key") != 0) {
    c.copies["value"] = "key";
  }
  for (RangeMap* m : {&c.seen, &c.ranges}) {
    for (const auto& [to, from] : c.copies) (*m)[to] = (*m)[from];
  }
  return c;
}

}  // namespace convert
}  // namespace edgeattn
