#include "converter/calibrate.h"

#include <algorithm>
#include <cmath>

#include "converter/error.h"

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

ActQuantParams act_quant(const Range& range, const std::string& what) {
  if (range.count == 0 || !std::isfinite(range.lo) || !std::isfinite(range.hi)) {
    fail(what, ": calibration saw no finite values (empty calibration set?)");
  }
  return act_quant(range.lo, range.hi);
}

RangeMap calibrate(const FloatLayer& layer, const LayerData& data, FloatOutputs* outputs) {
  RangeMap ranges;
  std::vector<double> out, w;
  if (outputs != nullptr) *outputs = FloatOutputs();
  for (int i = 0; i < data.n; ++i) {
    forward(layer, data.sample(layer, i), &out, outputs != nullptr ? &w : nullptr, &ranges);
    if (outputs != nullptr && i == 0) {  // every sample has the same sizes: no regrowth copies
      outputs->output.reserve(out.size() * static_cast<size_t>(data.n));
      outputs->weights.reserve(w.size() * static_cast<size_t>(data.n));
    }
    if (outputs != nullptr) {
      outputs->output.insert(outputs->output.end(), out.begin(), out.end());
      outputs->weights.insert(outputs->weights.end(), w.begin(), w.end());
    }
  }
  if (layer.self_attention()) {
    ranges["key"] = ranges["query"];
    ranges["value"] = ranges["query"];
  }
  if (ranges.count("value") == 0 && ranges.count("key") != 0) ranges["value"] = ranges["key"];
  return ranges;
}

}  // namespace convert
}  // namespace edgeattn
