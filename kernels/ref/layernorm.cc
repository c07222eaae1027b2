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
