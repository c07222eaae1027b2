// qs16_narrow (requant.h contract 1 on int16 values) on zmm (AVX-512 F/BW/VL),
// bit-identical to kernels/ref/elementwise.cc. Listed under the AVX512-VNNI
// path, whose check includes BW and VL; it uses no VNNI instruction.
#include <immintrin.h>

#include "isa/x86/avx512_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx512;  // NOLINT(build/namespaces)

// 16 values per step: sign-extended to int32, requantize_s8_x16 (exact
// 64-bit products, shift, clamp, zero point, saturation); the tail masked.
void qs16_narrow__avx512bw(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y) {
  const Rq16 q = make_rq16(_mm512_set1_epi32(mult), _mm512_set1_epi32(shift));
  const __m512i zpv = _mm512_set1_epi32(zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i v = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), requantize_s8_x16(v, q, zpv));
  }
  if (i < n) {
    const __mmask16 m = lanes16(static_cast<int>(n - i));
    const __m512i v = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, x + i));
    _mm_mask_storeu_epi8(y + i, m, requantize_s8_x16(v, q, zpv));
  }
}

}  // namespace kernels
}  // namespace edgeattn
