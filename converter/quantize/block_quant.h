// The int8 constants of LayerNorm, the FFN's activation table and residual
// adds (requant.h contracts 4-6), from the float blocks (model/block_float.h)
// and calibrated ranges.
#ifndef EDGEATTN_CONVERTER_QUANTIZE_BLOCK_QUANT_H_
#define EDGEATTN_CONVERTER_QUANTIZE_BLOCK_QUANT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/model/block_float.h"
#include "converter/quantize/quantize.h"

namespace edgeattn {
namespace convert {

// Contract 4: gain int16 at s_g = max|gain| / 32767, bias at s_g 2^-f,
// E = round(2^16 dim^2 eps / s_in^2), one multiplier s_g 2^-f / s_out.
struct QuantNorm {
  std::vector<int16_t> gain;
  std::vector<int32_t> bias;
  int64_t eps_term = 1;
  Requant requant;
  ActQuantParams input, output;
  // The 16-bit residual stream (contract 4b): int16 input (E =
  // round(4^p dim^2 eps / s_in^2)); an int8 output (has_output8) and/or an
  // int16 one at output16 (zero point 0) with requant16.
  bool input16 = false, has_output8 = true, has_output16 = false;
  ActQuantParams output16;
  Requant requant16;
};
QuantNorm quantize_layernorm(const FloatNorm& n, const ActQuantParams& in, const ActQuantParams& out,
                             const std::string& what);
// Contract 4b: int16 input `in`; out8 / out16 null for no such output.
QuantNorm quantize_layernorm16(const FloatNorm& n, const ActQuantParams& in, const ActQuantParams* out8,
                               const ActQuantParams* out16, const std::string& what);

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
  bool stream16 = false;  // contract 5c (quantize_add16)
};
QuantAdd quantize_add(const ActQuantParams& a, const ActQuantParams& out, const std::string& what);
// Contract 5c (the 16-bit residual stream, a and out int16): the largest
// n <= 13 with A <= 2^13.
QuantAdd quantize_add16(const ActQuantParams& a, const ActQuantParams& out, const std::string& what);

// What the int8 runtime computes for these steps, for the converter's own
// checks (the same integers as requant.h, on host vectors).
void layernorm_s8(const QuantNorm& q, int dim, int rows, const int8_t* x, int8_t* y);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_QUANTIZE_BLOCK_QUANT_H_
