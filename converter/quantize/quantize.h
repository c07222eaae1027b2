// Weight quantization and the integer constants of each layer (see
// schema/edgeattn.fbs and kernels/requant.h for what the runtime computes).
#ifndef EDGEATTN_CONVERTER_QUANTIZE_QUANTIZE_H_
#define EDGEATTN_CONVERTER_QUANTIZE_QUANTIZE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

constexpr double kLog2e = 1.4426950408889634;

inline int padded_row(int n) { return (n + 15) / 16 * 16; }

struct Requant {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// quantize_multiplier() or a ConvertError naming `what`.
Requant requant(double real, const std::string& what);

// Symmetric per-output-channel int8 Linear with the folded int32 bias.
struct QuantLinear {
  int in = 0, out = 0, row_stride = 0;
  std::vector<int8_t> w;        // [out][row_stride], zero padded
  std::vector<float> w_scale;   // [out]
  std::vector<int32_t> bias;    // [out]
  std::vector<Requant> requant; // [out]: s_in * s_w[n] / s_out
  ActQuantParams input, output;
};

// `what` names the layer/tensor in errors. out_shift > 0: a block's out_proj
// or fc2 with a residual add in its epilogue (requant.h contract 5b), output
// at the add's output, requant s_in s_w[n] 2^out_shift / s_out.
QuantLinear quantize_linear(const FloatLinear& l, const ActQuantParams& input,
                            const ActQuantParams& output, const std::string& what, int32_t out_shift = 0);

// Symmetric per-tensor int8 vector: scale = max|x| / 127 (1 if all zero).
struct QuantVector {
  std::vector<int8_t> q;
  double scale = 1.0;
};
QuantVector quantize_symmetric(const std::vector<double>& x);

// The additive layer's pre-tanh index and table (see quantize.cc).
struct TanhTable {
  ActQuantParams index;  // scale s_t, zero point zp_t of the table index
  std::vector<int8_t> table;  // 256 entries: round(127 tanh(s_t (i - zp_t))), index i + 128
};
TanhTable tanh_table(const Range& pre_tanh, const std::string& what);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_QUANTIZE_QUANTIZE_H_
