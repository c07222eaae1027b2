// The non-attention parts of transformer blocks in float64 (PyTorch
// semantics): LayerNorm, the feed-forward network and its activations. Their
// int8 constants are in quantize/block_quant.h, their FlatBuffer tables in
// write/block_tables.h. Used by the layernorm, ffn and block kinds and smooth.
#ifndef EDGEATTN_CONVERTER_MODEL_BLOCK_FLOAT_H_
#define EDGEATTN_CONVERTER_MODEL_BLOCK_FLOAT_H_

#include <string>
#include <vector>

#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

// nn.LayerNorm(dim, eps) with its affine gain (weight) and bias.
struct FloatNorm {
  int dim = 0;
  double eps = 1e-5;
  std::vector<double> gain, bias;
  std::string gain_name, bias_name;
};
// y may be x. Biased variance, as PyTorch.
void layernorm_forward(const FloatNorm& n, int rows, const double* x, double* y);

// The activations of feed-forward layers (schema Activation, kernels' F32Activation).
enum class Activation { kRelu = 0, kGeluErf = 1, kGeluTanh = 2, kSilu = 3 };
// Parses "relu", "gelu" (erf), "gelu_tanh" (also "gelu_new"), "silu" (also
// "swish"); false for anything else.
bool parse_activation(const std::string& name, Activation* act);
const char* activation_name(Activation act);
double activate(Activation act, double x);

// fc2(act(fc1(x))).
struct FloatFfn {
  int dim = 0, hidden = 0;
  Activation act = Activation::kGeluErf;
  FloatLinear fc1, fc2;
};
// y must not be x. With `hidden_pre` / `hidden_post` (may be null): fc1's
// output before / after the activation, [rows][hidden].
void ffn_forward(const FloatFfn& f, int rows, const double* x, double* y,
                 std::vector<double>* hidden_pre, std::vector<double>* hidden_post);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_MODEL_BLOCK_FLOAT_H_
