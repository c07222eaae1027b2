// f32_linear on NEON (Armv7-A and AArch64).
#include <arm_neon.h>

#include <cstddef>

#include "isa/neon/neon_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

// Float: four output channels per pass, four partial sums per channel (FMA on
// AArch64, multiply-add on Armv7), scalar tail. Summation order differs from
// the reference; see tests/kernels/f32_linear_test.cc for the tolerance.
void f32_linear__neon(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  const int k4 = in_features & ~3;
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    float* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    int n = 0;
    for (; n + 4 <= out_features; n += 4) {
      const float* w0 = w + static_cast<ptrdiff_t>(n) * w_stride;
      const float* w1 = w0 + w_stride;
      const float* w2 = w1 + w_stride;
      const float* w3 = w2 + w_stride;
      float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
      for (int k = 0; k < k4; k += 4) {
        const float32x4_t xv = vld1q_f32(xr + k);
        a0 = fma_f32(a0, xv, vld1q_f32(w0 + k));
        a1 = fma_f32(a1, xv, vld1q_f32(w1 + k));
        a2 = fma_f32(a2, xv, vld1q_f32(w2 + k));
        a3 = fma_f32(a3, xv, vld1q_f32(w3 + k));
      }
      float r[4];
      vst1q_f32(r, hsum4_f32(a0, a1, a2, a3));
      for (int k = k4; k < in_features; ++k) {
        r[0] += w0[k] * xr[k];
        r[1] += w1[k] * xr[k];
        r[2] += w2[k] * xr[k];
        r[3] += w3[k] * xr[k];
      }
      for (int i = 0; i < 4; ++i) yr[n + i] = (bias != nullptr ? bias[n + i] : 0.0f) + r[i];
    }
    for (; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      float32x4_t a = vdupq_n_f32(0.0f);
      for (int k = 0; k < k4; k += 4) a = fma_f32(a, vld1q_f32(xr + k), vld1q_f32(wr + k));
      float r = hsum_f32(a);
      for (int k = k4; k < in_features; ++k) r += wr[k] * xr[k];
      yr[n] = (bias != nullptr ? bias[n] : 0.0f) + r;
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
