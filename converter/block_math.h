// The non-attention parts of transformer blocks on the converter's side:
// LayerNorm, the feed-forward network and residual adds in float64 (PyTorch
// semantics), their int8 constants (requant.h contracts 4-6) and their
// FlatBuffer tables. Used by the layernorm, ffn and block kinds.
#ifndef EDGEATTN_CONVERTER_BLOCK_MATH_H_
#define EDGEATTN_CONVERTER_BLOCK_MATH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/calibrate.h"
#include "converter/float_reference.h"
#include "converter/quantize.h"
#include "converter/writer.h"

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

// ----------------------------------------------------------------- int8 ----

// Contract 4: gain int16 at s_g = max|gain| / 32767, bias at s_g 2^-f,
// E = round(2^16 dim^2 eps / s_in^2), one multiplier s_g 2^-f / s_out.
struct QuantNorm {
  std::vector<int16_t> gain;
  std::vector<int32_t> bias;
  int64_t eps_term = 1;
  Requant requant;
  ActQuantParams input, output;
};
QuantNorm quantize_layernorm(const FloatNorm& n, const ActQuantParams& in, const ActQuantParams& out,
                             const std::string& what);

// Contract 6: table[i] = the output quantization of act(s_in (i - 128 - zp_in)).
std::vector<int8_t> activation_table(Activation act, const ActQuantParams& in, const ActQuantParams& out);

// The activation's input quantization with its low end cut to where the
// table's output stops changing: every input below it gives the code of 0
// (ReLU: at 0; GELU, SiLU: where |act| <= out's step / 4, left of its
// minimum), so the cut loses nothing and the remaining range gets a finer
// step. `in` unchanged when its low end is already above that point.
ActQuantParams activation_input_quant(Activation act, const ActQuantParams& in, const ActQuantParams& out);

// Contract 5b, the residual a added in the epilogue of the projection that
// computes the other term: A = round(s_a / s_y 2^n), the largest n <= 16
// with A below 2^20 (the projection's requant then carries 2^n:
// quantize_linear's out_shift).
struct QuantAdd {
  ActQuantParams a, output;
  int32_t a_multiplier = 0, shift = 0;
};
QuantAdd quantize_add(const ActQuantParams& a, const ActQuantParams& out, const std::string& what);

// What the int8 runtime computes for these steps, for the converter's own
// checks (the same integers as requant.h, on host vectors).
void layernorm_s8(const QuantNorm& q, int dim, int rows, const int8_t* x, int8_t* y);

// ---------------------------------------------------------- FlatBuffers ----
flatbuffers::Offset<fb::LayerNorm> write_layernorm_s8(ModelWriter& w, const FloatNorm& f, const QuantNorm& q);
flatbuffers::Offset<fb::LayerNorm> write_layernorm_f32(ModelWriter& w, const FloatNorm& f);
flatbuffers::Offset<fb::ResidualAdd> write_add_s8(ModelWriter& w, const QuantAdd& q);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_BLOCK_MATH_H_
