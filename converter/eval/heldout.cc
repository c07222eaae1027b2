#include "converter/eval/heldout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "converter/eval/plain_int8.h"

namespace edgeattn {
namespace convert {

std::string tensor_label(const std::string& key) {
  const size_t dot = key.rfind('.');  // a block's part: "attn.query" -> "attn.query input"
  if (dot != std::string::npos) return key.substr(0, dot + 1) + tensor_label(key.substr(dot + 1));
  if (key == "query" || key == "key" || key == "value") return key + " input";
  if (key == "context") return "context (out_proj input)";
  if (key == "output") return "output";
  return key + " output";  // q_proj k_proj v_proj w_q w_k w
}

std::string RangeExcess::message() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "layer '%s' '%s': held-out sample %d %s %.4g %s the calibrated range [%.4g, %.4g] by %.1f %%",
                layer.c_str(), tensor_label(tensor).c_str(), sample, above ? "max" : "min", value,
                above ? "exceeds" : "is below", seen_lo, seen_hi, 100.0 * fraction);
  std::string s = buf;
  const char* type = int16 ? "int16" : "int8";
  if (used_lo == seen_lo && used_hi == seen_hi) return s + " (" + type + " saturates beyond it)";
  const bool saturates = above ? value > used_hi : value < used_lo;
  std::snprintf(buf, sizeof buf, saturates ? " (%s saturates at the range calibration chose, [%.4g, %.4g])"
                                           : " (within the %s range [%.4g, %.4g] the headroom gives: no saturation)",
                type, used_lo, used_hi);
  return s + buf;
}

HeldoutResult evaluate_heldout(const LoadedModel& model, int index, const FloatLayer& L, const LayerData& data,
                               const LayerCalibration& calibration, ea_range_policy policy) {
  HeldoutResult r;
  FloatOutputs ref;
  std::vector<double> out, w;
  std::map<std::string, RangeExcess> worst;
  for (int i = 0; i < data.n; ++i) {
    RangeMap sample;  // this sample's min/max of every tensor
    forward(L, data.sample(L, i), &out, &w, &sample);
    ref.output.insert(ref.output.end(), out.begin(), out.end());
    ref.weights.insert(ref.weights.end(), w.begin(), w.end());
    for (const auto& [key, got] : sample) {
      // pre_tanh is not checked: its table clips at +-6 where tanh is flat,
      // and w_q / w_k (its parts) are.
      const auto seen = calibration.seen.find(key);
      const auto used = calibration.ranges.find(key);
      if (key == "pre_tanh" || got.count == 0 || seen == calibration.seen.end() ||
          used == calibration.ranges.end()) {
        continue;
      }
      RangeExcess e;
      e.layer = L.name;
      e.tensor = key;
      e.sample = i;
      e.seen_lo = std::min(seen->second.lo, 0.0);
      e.seen_hi = std::max(seen->second.hi, 0.0);
      e.used_lo = std::min(used->second.lo, 0.0);
      e.used_hi = std::max(used->second.hi, 0.0);
      // The 16-bit residual stream's tensors (as the report lists them): a symmetric int16 range.
      e.int16 = ((key == "query" || (key == "key" && L.learned_query())) && L.input16) ||
                (L.output16 && (key == "output" || key.rfind("add", 0) == 0));
      if (e.int16) {
        const double m = std::max(-e.used_lo, e.used_hi);
        e.used_lo = -m;
        e.used_hi = m;
        const double sm = std::max(-e.seen_lo, e.seen_hi);  // the calibrated range as the symmetric grid covers it
        e.seen_lo = -sm;
        e.seen_hi = sm;
      }
      const double size = std::max(std::fabs(e.seen_lo), std::fabs(e.seen_hi));
      if (!(size > 0.0)) continue;
      // Up to one int8 step (int16: one int16 step) beyond costs no more than rounding does: not worth a warning.
      const double step = e.int16 ? e.used_hi / 32767.0 : act_quant(e.used_lo, e.used_hi).scale;
      const double over = got.hi - e.seen_hi > step ? (got.hi - e.seen_hi) / size : 0.0;
      const double under = e.seen_lo - got.lo > step ? (e.seen_lo - got.lo) / size : 0.0;
      e.above = over >= under;
      e.value = e.above ? got.hi : got.lo;
      e.fraction = std::max(over, under);
      if (e.fraction <= 0.0) continue;
      auto it = worst.find(key);
      if (it == worst.end() || e.fraction > it->second.fraction) worst[key] = e;
    }
  }
  for (auto& [key, e] : worst) r.excess.push_back(e);
  std::sort(r.excess.begin(), r.excess.end(),
            [](const RangeExcess& a, const RangeExcess& b) { return a.fraction > b.fraction; });
  const RunResult run = run_layer(model, index, data, 1, policy);
  static_cast<Metrics&>(r.metrics) = compare(L, data, run.output, ref.output, run.weights, ref.weights);
  if (plain_int8_supported(L)) {
    // The plain scheme on the same inputs: float64 work of about one float
    // reference pass.
    std::vector<double> plain_out, plain_w;
    PlainInt8Layer(L, calibration).run(data, &plain_out, &plain_w);
    r.metrics.plain_int8 = compare(L, data, plain_out, ref.output, plain_w, ref.weights);
    r.metrics.has_plain_int8 = true;
  }
  return r;
}

std::vector<HeldoutResult> evaluate_heldout_model(const LoadedModel& model, const ModelSpec& spec,
                                                  const std::vector<LayerData>& heldout,
                                                  const std::vector<LayerCalibration>& calibration,
                                                  ea_range_policy policy, const ProgressFn& progress) {
  std::vector<HeldoutResult> results;
  for (size_t i = 0; i < spec.layers.size() && i < heldout.size(); ++i) {
    if (progress) {
      progress(i, "runtime vs float64 reference on " + std::to_string(heldout[i].n) + " held-out sample" +
                      (heldout[i].n == 1 ? "" : "s"));
    }
    results.push_back(
        evaluate_heldout(model, static_cast<int>(i), spec.layers[i], heldout[i], calibration[i], policy));
    results.back().samples = heldout[i].n;
  }
  return results;
}

}  // namespace convert
}  // namespace edgeattn
