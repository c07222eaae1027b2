// SmoothQuant (Xiao et al., arXiv 2211.10438) in the converter
// (edgeattn-convert convert --smooth-alpha A): where a LayerNorm's output
// feeds only projections (pre-norm blocks: norm1 -> q/k/v, norm2 -> fc1, the
// decoder's norm2 -> cross q_proj and norm3 -> fc1), per-channel factors
//   s_j = max|X_j|^A / max|W_j|^(1 - A)
// (X_j: the LayerNorm's output channel j over the calibration data, W_j:
// input column j of those projections) divide the LayerNorm's gain and bias
// and multiply the projections' column j. The float function is the same;
// the int8 LayerNorm output then has flatter channels (a finer per-tensor
// step) and the per-output-channel weights take the difference. Nothing
// changes at run time or in the format.
#ifndef EDGEATTN_CONVERTER_CALIBRATE_SMOOTH_H_
#define EDGEATTN_CONVERTER_CALIBRATE_SMOOTH_H_

#include <string>
#include <vector>

#include "converter/model/dataset.h"
#include "converter/spec/spec.h"

namespace edgeattn {
namespace convert {

// What one fold did, for the report.
struct SmoothedPair {
  std::string layer, what;   // "norm1 -> q/k/v_proj"
  double s_min = 1.0, s_max = 1.0;
  // The LayerNorm output's largest channel max|X_j| over its median channel's,
  // before and after: how much flatter the int8 tensor's channels became.
  double spread_before = 1.0, spread_after = 1.0;
};

// Folds the factors into layer L (its kind's smooth_pairs: an error naming the
// layer for a post-norm block, or a kind without LayerNorm), from the
// per-channel maxima over `calib`. alpha in [0, 1].
std::vector<SmoothedPair> smooth_layer(FloatLayer* L, const LayerData& calib, double alpha);

// --smooth-alpha over a model: the layers named in `layers`, or (empty) every
// layer whose kind has LayerNorms (the block kinds; a post-norm one is an
// error naming it). calib[i] belongs to spec->layers[i].
std::vector<SmoothedPair> smooth_model(ModelSpec* spec, const std::vector<LayerData>& calib, double alpha,
                                       const std::vector<std::string>& layers);

// Outlier channels without --smooth-alpha: the channel spread of every
// LayerNorm output that feeds only projections (the pre-norm blocks; post-norm
// blocks and other kinds have none) over the first `samples` calibration
// samples of each layer; nothing is folded (s_min = s_max = 1, spread_after =
// spread_before). calib[i] belongs to spec->layers[i].
std::vector<SmoothedPair> layernorm_channel_spreads(ModelSpec* spec, const std::vector<LayerData>& calib,
                                                    int samples);

// The spread from which the converter suggests --smooth-alpha: every bundled
// and peer model reads 1.2-1.9, models/outlier_block 12.8, where A = 0.5 cuts
// the error (docs/quantization.md, "SmoothQuant").
constexpr double kOutlierChannelSpread = 4.0;

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CALIBRATE_SMOOTH_H_
