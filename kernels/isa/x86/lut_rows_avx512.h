// The row walk of the AVX-512 activation tables (qs8_lut__avx512bw and
// qs8_lut__avx512vbmi): a 64-byte lookup applied to every row, the last
// n % 64 bytes by masked loads and stores. A template on the caller's lookup
// lambda, so each file's copy is its own (built with that file's ISA flags).
#ifndef EDGEATTN_KERNELS_AVX2_LUT_ROWS_AVX512_H_
#define EDGEATTN_KERNELS_AVX2_LUT_ROWS_AVX512_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace edgeattn {
namespace kernels {
namespace avx512 {

template <typename Lut64>
__attribute__((always_inline)) inline void lut_rows(int rows, int n, const int8_t* x, int x_stride, int8_t* y,
                                                    int y_stride, Lut64 lut64) {
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
    for (; i + 64 <= n; i += 64) _mm512_storeu_si512(yr + i, lut64(_mm512_loadu_si512(xr + i)));
    if (i < n) {
      const __mmask64 k = (__mmask64{1} << (n - i)) - 1;  // n - i < 64
      _mm512_mask_storeu_epi8(yr + i, k, lut64(_mm512_maskz_loadu_epi8(k, xr + i)));
    }
  }
}

}  // namespace avx512
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_LUT_ROWS_AVX512_H_
