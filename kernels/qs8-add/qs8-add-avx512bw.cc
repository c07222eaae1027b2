// qs8_add (requant.h's add contract) on zmm (AVX-512 F/BW/VL),
// bit-identical to kernels/ref/elementwise.cc. Listed under the AVX512-VNNI
// path, whose check includes BW and VL; it uses no VNNI instruction.
#include <immintrin.h>

#include "isa/x86/avx512_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx512;  // NOLINT(build/namespaces)

// 16 values per step in int32 lanes: every term of the contract's sum fits
// int32, so VPMULLD, VPSRAD and VPMOVSDB (saturate to int8) are its
// integers; the tail masked.
void qs8_add__avx512bw(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y) {
  const __m512i zp_x = _mm512_set1_epi32(p.zp_x), a = _mm512_set1_epi32(p.a);
  const __m512i zp_r = _mm512_set1_epi32(p.zp_r), b = _mm512_set1_epi32(p.b);
  const __m512i c = _mm512_set1_epi32((int32_t{1} << (p.shift - 1)) + p.zp_y * (int32_t{1} << p.shift));
  const __m128i shift = _mm_cvtsi32_si128(p.shift);
  auto add16 = [&](__m128i xv, __m128i rv) {
    const __m512i dx = _mm512_sub_epi32(_mm512_cvtepi8_epi32(xv), zp_x);
    const __m512i dr = _mm512_sub_epi32(_mm512_cvtepi8_epi32(rv), zp_r);
    const __m512i v = _mm512_add_epi32(_mm512_add_epi32(_mm512_mullo_epi32(dx, a), _mm512_mullo_epi32(dr, b)), c);
    return _mm512_cvtsepi32_epi8(_mm512_sra_epi32(v, shift));
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i xv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    const __m128i rv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), add16(xv, rv));
  }
  if (i < n) {
    const __mmask16 m = lanes16(static_cast<int>(n - i));
    _mm_mask_storeu_epi8(y + i, m, add16(_mm_maskz_loadu_epi8(m, x + i), _mm_maskz_loadu_epi8(m, r + i)));
  }
}

}  // namespace kernels
}  // namespace edgeattn
