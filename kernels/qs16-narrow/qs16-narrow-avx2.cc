// qs16_narrow (requant.h contract 1 on int16 values) with AVX2,
// bit-identical to kernels/ref/elementwise.cc.
#include <immintrin.h>

#include <cstring>

#include "isa/x86/avx2_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

// 16 values: sign-extended to two int32 vectors, requantize_x8's exact
// 64-bit products and shift, add_zp_sat8's clamp, zero point and saturation.
static inline __m128i narrow16(__m256i v, const Rq8& q, __m128i zp16) {
  const __m128i lo = add_zp_sat8(requantize_x8(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v)), q), zp16);
  const __m128i hi = add_zp_sat8(requantize_x8(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1)), q), zp16);
  return _mm_unpacklo_epi64(lo, hi);
}

void qs16_narrow__avx2(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y) {
  const Rq8 q = rq8_uniform(mult, shift);
  const __m128i zp16 = _mm_set1_epi16(static_cast<int16_t>(zp));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), narrow16(v, q, zp16));
  }
  if (i < n) {
    alignas(32) int16_t xb[16] = {};
    alignas(16) int8_t yb[16];
    std::memcpy(xb, x + i, (n - i) * sizeof(int16_t));
    _mm_store_si128(reinterpret_cast<__m128i*>(yb),
                    narrow16(_mm256_load_si256(reinterpret_cast<const __m256i*>(xb)), q, zp16));
    std::memcpy(y + i, yb, n - i);
  }
}

}  // namespace kernels
}  // namespace edgeattn
