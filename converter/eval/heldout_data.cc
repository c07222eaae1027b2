#include "converter/eval/heldout_data.h"

#include <cstdio>

#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

HeldoutData take_heldout(const HeldoutChoice& c, const std::vector<FloatLayer>& layers,
                         std::vector<LayerData>* calib) {
  HeldoutData h;
  if (!c.path.empty()) {
    h.layers = load_model_data(c.path, "held-out data (--heldout)", layers, c.data_keys);
    h.what = c.path;
  } else if (c.split > 0.0) {
    for (size_t i = 0; i < calib->size(); ++i) {
      LayerData keep, held;
      split_heldout((*calib)[i], c.split, c.calib_path + ": layer '" + layers[i].name + "'", &keep, &held);
      (*calib)[i] = std::move(keep);
      h.layers.push_back(std::move(held));
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "the last %d of the %d samples of %s (--heldout-split %.10g)",
                  h.layers.empty() ? 0 : h.layers[0].n, h.layers.empty() ? 0 : h.layers[0].n + (*calib)[0].n,
                  base_name(c.calib_path).c_str(), c.split);
    h.what = buf;
  }
  if (c.scale != 1.0) {
    for (size_t i = 0; i < h.layers.size(); ++i) {
      LayerData& d = h.layers[i];
      const bool ids = layers[i].kind->input_range != nullptr;  // token ids are not scaled
      for (std::vector<double>* v : {ids ? nullptr : &d.query, &d.key, &d.value}) {
        if (v == nullptr) continue;
        for (double& x : *v) x *= c.scale;
      }
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, ", inputs scaled by %.10g (--heldout-scale)", c.scale);
    h.what += buf;
  }
  if (c.policy != EA_RANGE_STATIC) {
    h.what += std::string(", runtime range mode ") + range_mode_name(c.policy) + " (--range-mode)";
  }
  return h;
}

}  // namespace convert
}  // namespace edgeattn
