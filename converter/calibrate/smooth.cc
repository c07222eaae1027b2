#include "converter/calibrate/smooth.h"

#include <algorithm>
#include <cmath>

#include "converter/model/block_float.h"
#include "converter/base/error.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

double spread(std::vector<double> v) {
  if (v.empty()) return 1.0;
  std::sort(v.begin(), v.end());
  const double median = v[v.size() / 2];
  return median > 0.0 ? v.back() / median : 1.0;
}

}  // namespace

std::vector<SmoothedPair> smooth_layer(FloatLayer* L, const LayerData& calib, double alpha) {
  if (!(alpha >= 0.0 && alpha <= 1.0)) fail("--smooth-alpha must be in [0, 1], got ", alpha);
  if (L->kind->smooth_pairs == nullptr) {
    fail("layer '", L->name, "' (kind ", L->kind->name, ") has no LayerNorm feeding a projection: --smooth-alpha "
         "applies to pre-norm encoder_block and decoder_block layers");
  }
  const std::vector<SmoothPair> pairs = L->kind->smooth_pairs(L);
  if (calib.n < 1) fail("layer '", L->name, "': --smooth-alpha needs calibration samples (--calib)");
  // Per-channel max|X_j| of each LayerNorm's output over the calibration
  // samples (valid rows only, as calibration records them).
  RangeMap ranges;
  for (const SmoothPair& p : pairs) ranges[p.point].keep_columns = true;
  std::vector<double> out;
  for (int i = 0; i < calib.n; ++i) forward(*L, calib.sample(*L, i), &out, nullptr, &ranges);
  std::vector<SmoothedPair> done;
  for (const SmoothPair& p : pairs) {
    const std::vector<double>& xmax = ranges[p.point].column_absmax;
    const int dim = p.norm->dim;
    if (xmax.size() != static_cast<size_t>(dim)) {
      fail("layer '", L->name, "': --smooth-alpha: the calibration data gave no values of ", p.what);
    }
    SmoothedPair r;
    r.layer = L->name;
    r.what = p.what;
    r.s_min = r.s_max = 0.0;
    std::vector<double> after(static_cast<size_t>(dim));
    for (int j = 0; j < dim; ++j) {
      double wmax = 0.0;
      for (const FloatLinear* l : p.next) {
        for (int o = 0; o < l->out; ++o) wmax = std::max(wmax, std::fabs(l->w[static_cast<size_t>(o) * l->in + j]));
      }
      double s = std::pow(xmax[j], alpha) / std::pow(wmax, 1.0 - alpha);
      // A channel that is always 0 (or meets only zero weights) keeps its scale.
      if (!(s > 0.0) || !std::isfinite(s)) s = 1.0;
      p.norm->gain[j] /= s;
      p.norm->bias[j] /= s;
      for (FloatLinear* l : p.next) {
        for (int o = 0; o < l->out; ++o) l->w[static_cast<size_t>(o) * l->in + j] *= s;
      }
      after[j] = xmax[j] / s;
      r.s_min = j == 0 ? s : std::min(r.s_min, s);
      r.s_max = std::max(r.s_max, s);
    }
    for (FloatLinear* l : p.next) l->stripes.clear();  // the float reference's cache of the old weights
    r.spread_before = spread(xmax);
    r.spread_after = spread(after);
    done.push_back(r);
  }
  return done;
}

std::vector<SmoothedPair> smooth_model(ModelSpec* spec, const std::vector<LayerData>& calib, double alpha,
                                       const std::vector<std::string>& layers) {
  if (calib.size() != spec->layers.size()) fail("--smooth-alpha needs calibration data (--calib FILE.npz)");
  for (const std::string& name : layers) {
    const bool known = std::any_of(spec->layers.begin(), spec->layers.end(),
                                   [&](const FloatLayer& L) { return L.name == name; });
    if (!known) fail("--smooth-layers: the spec has no layer '", name, "'");
  }
  std::vector<SmoothedPair> done;
  for (size_t i = 0; i < spec->layers.size(); ++i) {
    FloatLayer& L = spec->layers[i];
    const bool named = std::find(layers.begin(), layers.end(), L.name) != layers.end();
    if (!layers.empty() && !named) continue;
    if (layers.empty() && L.kind->smooth_pairs == nullptr) continue;  // no LayerNorm -> projection inside
    try {
      for (SmoothedPair& p : smooth_layer(&L, calib[i], alpha)) done.push_back(std::move(p));
    } catch (const ConvertError& e) {
      if (named) throw;
      fail(e.what(), " (--smooth-layers names the layers to smooth)");
    }
  }
  return done;
}

}  // namespace convert
}  // namespace edgeattn
