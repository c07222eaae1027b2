// qs8_add16 (requant.h's add16 contract) on zmm (AVX-512 F/BW/VL),
// bit-identical to kernels/ref/elementwise.cc. Listed under the AVX512-VNNI
// path, whose check includes BW and VL; it uses no VNNI instruction.
#include <immintrin.h>

#include "isa/x86/avx512_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx512;  // NOLINT(build/namespaces)

// 16 values per step in int32 lanes, the sum split as in
// qs8-add16-avx2.cc (r = 2^8 rh + rl: H = B rh, L = A (x - zp_x) + B rl +
// 2^(n-1); n >= 8: (H + (L >> 8)) >> (n - 8); n < 8: clamp(H, +-2^23)
// 2^(8-n) + (L >> n)), which gives the contract's 64-bit integers, then
// VPMOVSDW (saturate to int16); the tail masked.
void qs8_add16__avx512bw(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  const __m512i zp_x = _mm512_set1_epi32(p.zp_x), a = _mm512_set1_epi32(p.a), b = _mm512_set1_epi32(p.b);
  const __m512i rnd = _mm512_set1_epi32(int32_t{1} << (p.shift - 1)), low8 = _mm512_set1_epi32(0xFF);
  const __m512i hmax = _mm512_set1_epi32(int32_t{1} << 23), hmin = _mm512_set1_epi32(-(int32_t{1} << 23));
  const bool wide = p.shift >= 8;
  const __m128i n_hi = _mm_cvtsi32_si128(wide ? p.shift - 8 : 0), n_lo = _mm_cvtsi32_si128(p.shift);
  const __m128i up = _mm_cvtsi32_si128(wide ? 0 : 8 - p.shift);
  auto add16 = [&](__m128i xv, __m256i rv) {
    const __m512i dx = _mm512_sub_epi32(_mm512_cvtepi8_epi32(xv), zp_x);
    const __m512i r32 = _mm512_cvtepi16_epi32(rv);
    const __m512i h = _mm512_mullo_epi32(_mm512_srai_epi32(r32, 8), b);
    const __m512i l = _mm512_add_epi32(_mm512_add_epi32(_mm512_mullo_epi32(dx, a),
                                                        _mm512_mullo_epi32(_mm512_and_si512(r32, low8), b)), rnd);
    const __m512i v = wide ? _mm512_sra_epi32(_mm512_add_epi32(h, _mm512_srai_epi32(l, 8)), n_hi)
                           : _mm512_add_epi32(_mm512_sll_epi32(_mm512_max_epi32(_mm512_min_epi32(h, hmax), hmin), up),
                                              _mm512_sra_epi32(l, n_lo));
    return _mm512_cvtsepi32_epi16(v);
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i xv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    const __m256i rv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), add16(xv, rv));
  }
  if (i < n) {
    const __mmask16 m = lanes16(static_cast<int>(n - i));
    _mm256_mask_storeu_epi16(y + i, m, add16(_mm_maskz_loadu_epi8(m, x + i), _mm256_maskz_loadu_epi16(m, r + i)));
  }
}

}  // namespace kernels
}  // namespace edgeattn
