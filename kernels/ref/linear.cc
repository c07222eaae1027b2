// Reference linear (fully connected) kernels: one dot product per output
// channel. Float weights are row-major [out][in]; int8 weights are in the
// packed K4N16 layout of packed_weights.h, read here by index.
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void f32_linear__ref(int rows, int out_features, int in_features, const float* x, int x_stride,
                     const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n = 0; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      float acc = bias != nullptr ? bias[n] : 0.0f;
      for (int k = 0; k < in_features; ++k) acc += wr[k] * xr[k];
      y[static_cast<ptrdiff_t>(m) * y_stride + n] = acc;
    }
  }
}

// The int32 accumulator is exact: |w| <= 127, |x| <= 128, so in_features up
// to 2^17 cannot overflow. The input zero point lives in the folded bias.
void qs8_linear__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  const int kp = packed_k(in_features);
  for (int m = 0; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n = 0; n < out_features; ++n) {
      int32_t acc = bias[n];
      for (int k = 0; k < in_features; ++k) {
        acc += static_cast<int32_t>(w[packed_offset(n, k, kp)]) * xr[k];
      }
      const int c = per_channel ? n : 0;
      y[static_cast<ptrdiff_t>(m) * y_stride + n] = requantize_s8(acc, mult[c], shift[c], y_zp);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
