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

// Per-channel max|X_j| of each pair's LayerNorm output over the first
// `samples` calibration samples (valid rows only, as calibration records them).
std::vector<std::vector<double>> column_maxima(const FloatLayer& L, const std::vector<SmoothPair>& pairs,
                                               const LayerData& calib, int samples, const char* why) {
  RangeMap ranges;
  for (const SmoothPair& p : pairs) ranges[p.point].keep_columns = true;
  std::vector<double> out;
  for (int i = 0; i < std::min(calib.n, samples); ++i) forward(L, calib.sample(L, i), &out, nullptr, &ranges);
  std::vector<std::vector<double>> maxima;
  for (const SmoothPair& p : pairs) {
    maxima.push_back(ranges[p.point].column_absmax);
    if (maxima.back().size() != static_cast<size_t>(p.norm->dim)) {
      fail("layer '", L.name, "': ", why, ": the calibration data gave no values of ", p.what);
    }
  }
  return maxima;
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
  const std::vector<std::vector<double>> maxima = column_maxima(*L, pairs, calib, calib.n, "--smooth-alpha");
  std::vector<SmoothedPair> done;
  for (size_t pi = 0; pi < pairs.size(); ++pi) {
    const SmoothPair& p = pairs[pi];
    const std::vector<double>& xmax = maxima[pi];
    const int dim = p.norm->dim;
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

std::vector<SmoothedPair> layernorm_channel_spreads(ModelSpec* spec, const std::vector<LayerData>& calib,
                                                    int samples) {
  std::vector<SmoothedPair> spreads;
  if (calib.size() != spec->layers.size()) return spreads;
  for (size_t i = 0; i < spec->layers.size(); ++i) {
    FloatLayer& L = spec->layers[i];
    if (L.kind->smooth_pairs == nullptr || calib[i].n < 1) continue;
    std::vector<SmoothPair> pairs;
    try {
      pairs = L.kind->smooth_pairs(&L);
    } catch (const ConvertError&) {
      continue;  // a post-norm block: its LayerNorm outputs are also the stream, no pair to fold
    }
    const std::vector<std::vector<double>> maxima = column_maxima(L, pairs, calib[i], samples, "channel spread");
    for (size_t pi = 0; pi < pairs.size(); ++pi) {
      SmoothedPair r;
      r.layer = L.name;
      r.what = pairs[pi].what;
      r.spread_before = r.spread_after = spread(maxima[pi]);
      spreads.push_back(r);
    }
  }
  return spreads;
}

}  // namespace convert
}  // namespace edgeattn
