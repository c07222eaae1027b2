// Helpers shared by the AVX-512 kernel files (linear_avx512vnni.cc,
// attention_avx512vnni.cc). Everything has internal linkage (static inline),
// so no copy of it can be picked by the linker for another path.
#ifndef EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_
#define EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_

#include <immintrin.h>

#include <cstdint>

namespace edgeattn {
namespace kernels {
namespace avx512 {

// requantize() of requant.h on 16 lanes: the exact 64-bit products of the
// even and odd lanes (VPMULDQ), the rounding add and the arithmetic shift in
// 64 bits (VPSRAVQ). Clamping to [-512, 512] in 64 bits is the same as
// saturating to int32 and then clamping as requantize_s8() does.
struct Rq16 {
  __m512i mult;
  __m512i n_even, n_odd;      // 31 - shift of the even / odd lanes, as int64
  __m512i rnd_even, rnd_odd;  // 2^(n - 1)
};

static inline Rq16 make_rq16(__m512i mult, __m512i shift) {
  Rq16 q;
  q.mult = mult;
  const __m512i n = _mm512_sub_epi32(_mm512_set1_epi32(31), shift);
  q.n_even = _mm512_and_si512(n, _mm512_set1_epi64(0xFFFFFFFF));
  q.n_odd = _mm512_srli_epi64(n, 32);
  const __m512i one = _mm512_set1_epi64(1);
  q.rnd_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.n_even, one));
  q.rnd_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.n_odd, one));
  return q;
}

// sat8(clamp(requantize(acc), -512, 512) + zp) for 16 lanes.
static inline __m128i requantize_s8_x16(__m512i acc, const Rq16& q, __m512i zp) {
  const __m512i pe = _mm512_mul_epi32(acc, q.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), _mm512_srli_epi64(q.mult, 32));
  const __m512i hi = _mm512_set1_epi64(512);
  const __m512i lo = _mm512_set1_epi64(-512);
  __m512i re = _mm512_srav_epi64(_mm512_add_epi64(pe, q.rnd_even), q.n_even);
  __m512i ro = _mm512_srav_epi64(_mm512_add_epi64(po, q.rnd_odd), q.n_odd);
  re = _mm512_max_epi64(_mm512_min_epi64(re, hi), lo);
  ro = _mm512_max_epi64(_mm512_min_epi64(ro, hi), lo);
  const __m512i y = _mm512_mask_blend_epi32(0xAAAA, re, _mm512_slli_epi64(ro, 32));
  return _mm512_cvtsepi32_epi8(_mm512_add_epi32(y, zp));
}

}  // namespace avx512
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_
