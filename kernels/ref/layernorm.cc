// Reference LayerNorm: the integers of requant.h's contract 4 (one exact
// integer square root per row, then one 64-bit multiply and shift per
// element), and the float form PyTorch's nn.LayerNorm computes.
#include <cmath>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void qs8_layernorm__ref(const QS8LayerNormArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int8_t* y = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    int32_t sum = 0, sum_sq = 0;
    for (int i = 0; i < a.dim; ++i) {
      sum += x[i];
      sum_sq += x[i] * x[i];
    }
    const LayerNormRowScale rs = layernorm_row_scale(a.dim, sum, sum_sq, a.eps_term);
    for (int i = 0; i < a.dim; ++i) {
      const int32_t centered = a.dim * x[i] - sum;
      const int32_t acc = layernorm_normalized_q(centered, rs) * a.gain[i] + a.bias[i];
      y[i] = requantize_s8(acc, a.mult, a.shift, a.y_zp);
    }
  }
}

// Contract 4b: int16 rows, int8 and/or int16 output. Each row's sums and
// scale are formed before any output of the row is written (y16 may be x).
void qs16_layernorm__ref(const QS16LayerNormArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    const int16_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int32_t sum = 0;
    int64_t sum_sq = 0;
    for (int i = 0; i < a.dim; ++i) {
      sum += x[i];
      sum_sq += static_cast<int32_t>(x[i]) * x[i];
    }
    const LayerNormRowScale rs = layernorm16_row_scale(a.dim, sum, sum_sq, a.eps_term);
    int8_t* y8 = a.y8 != nullptr ? a.y8 + static_cast<ptrdiff_t>(r) * a.y8_stride : nullptr;
    int16_t* y16 = a.y16 != nullptr ? a.y16 + static_cast<ptrdiff_t>(r) * a.y16_stride : nullptr;
    for (int i = 0; i < a.dim; ++i) {
      const int32_t centered = a.dim * x[i] - sum;
      const int32_t acc = layernorm_normalized_q(centered, rs) * a.gain[i] + a.bias[i];
      if (y8 != nullptr) y8[i] = requantize_s8(acc, a.mult, a.shift, a.y_zp);
      if (y16 != nullptr) y16[i] = requantize_s16(acc, a.mult16, a.shift16);
    }
  }
}

#if !(defined(EA_INT8_ONLY) && EA_INT8_ONLY)
void f32_layernorm__ref(int rows, int dim, const float* x, int x_stride, float eps,
                        const float* gain, const float* bias, float* y, int y_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    float* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    float mean = 0.0f;
    for (int i = 0; i < dim; ++i) mean += xr[i];
    mean /= static_cast<float>(dim);
    float var = 0.0f;
    for (int i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= static_cast<float>(dim);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int i = 0; i < dim; ++i) yr[i] = (xr[i] - mean) * inv * gain[i] + bias[i];
  }
}
#endif

}  // namespace kernels
}  // namespace edgeattn
