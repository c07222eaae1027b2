// f32_linear with AVX2 + FMA.
#include <immintrin.h>

#include <cstddef>

#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

// Float: four output channels per pass, 8-wide FMA partial sums,
// scalar tail. Summation order differs from the reference; see tests/kernels/f32_linear_test.cc.
void f32_linear__avx2(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  const int k8 = in_features & ~7;
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    float* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    int n = 0;
    for (; n + 4 <= out_features; n += 4) {
      const float* w0 = w + static_cast<ptrdiff_t>(n) * w_stride;
      const float* w1 = w0 + w_stride;
      const float* w2 = w1 + w_stride;
      const float* w3 = w2 + w_stride;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int k = 0; k < k8; k += 8) {
        const __m256 xv = _mm256_loadu_ps(xr + k);
        a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + k), a0);
        a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + k), a1);
        a2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w2 + k), a2);
        a3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w3 + k), a3);
      }
      alignas(16) float r[4];
      _mm_store_ps(r, hsum4_f32(a0, a1, a2, a3));
      for (int k = k8; k < in_features; ++k) {
        r[0] += w0[k] * xr[k];
        r[1] += w1[k] * xr[k];
        r[2] += w2[k] * xr[k];
        r[3] += w3[k] * xr[k];
      }
      for (int i = 0; i < 4; ++i) yr[n + i] = (bias != nullptr ? bias[n + i] : 0.0f) + r[i];
    }
    for (; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      __m256 a = _mm256_setzero_ps();
      for (int k = 0; k < k8; k += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(xr + k), _mm256_loadu_ps(wr + k), a);
      float r = hsum_f32(a);
      for (int k = k8; k < in_features; ++k) r += wr[k] * xr[k];
      yr[n] = (bias != nullptr ? bias[n] : 0.0f) + r;
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
