// Helpers shared by the AVX-512 VNNI files (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni). Include only from those files.
#ifndef EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_
#define EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace avx512 {

// requantize_s8() of requant.h on 16 lanes, each with its own multiplier and
// shift: the exact 64-bit products of the even and odd lanes (VPMULDQ), the
// rounding add and the arithmetic shift in 64 bits (VPSRAVQ); clamping to
// [-512, 512] there is the same as saturating to int32 and then clamping.
struct Rq16 {
  __m512i mult, mult_odd;     // M, and the odd lanes' M in the even dwords
  __m512i n_even, n_odd;      // 31 - shift of the even / odd lanes, as int64
  __m512i rnd_even, rnd_odd;  // 2^(n - 1)
  __m512i k;                  // n - 32 per lane (used when `high`)
  bool high;                  // every lane has n >= 32
};

inline Rq16 make_rq16(__m512i mult, __m512i shift) {
  Rq16 q;
  q.mult = mult;
  q.mult_odd = _mm512_srli_epi64(mult, 32);
  const __m512i n = _mm512_sub_epi32(_mm512_set1_epi32(31), shift);
  q.n_even = _mm512_and_si512(n, _mm512_set1_epi64(0xFFFFFFFF));
  q.n_odd = _mm512_srli_epi64(n, 32);
  const __m512i one = _mm512_set1_epi64(1);
  q.rnd_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.n_even, one));
  q.rnd_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.n_odd, one));
  q.k = _mm512_sub_epi32(n, _mm512_set1_epi32(32));
  q.high = _mm512_cmplt_epi32_mask(n, _mm512_set1_epi32(32)) == 0;
  return q;
}

// sat8(clamp(requantize(acc), -512, 512) + zp) for 16 lanes.
//
// With n >= 32 on every lane (a multiplier below 1/2: the projections and
// P.V of real models), (P + 2^(n-1)) >> n for P = acc M is
// ((P + 2^(n-1)) >> 32) >> (n - 32) by nested floors, and the first shift is
// the high dword of the 64-bit sum: already in the odd lanes' dword slots,
// one 64-bit shift away for the even lanes. |P| < 2^62, so that dword is
// below 2^30 in magnitude and adding zp cannot overflow; the clamp to +-512
// changes nothing the int8 saturation would not, so it is left out.
// Otherwise the shifts and clamps run on 64-bit lanes.
inline __m128i requantize_s8_x16(__m512i acc, const Rq16& q, __m512i zp) {
  const __m512i pe = _mm512_mul_epi32(acc, q.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q.mult_odd);
  if (q.high) {
    const __m512i he = _mm512_srli_epi64(_mm512_add_epi64(pe, q.rnd_even), 32);
    const __m512i y = _mm512_mask_blend_epi32(0xAAAA, he, _mm512_add_epi64(po, q.rnd_odd));
    return _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_srav_epi32(y, q.k), zp));
  }
  const __m512i hi = _mm512_set1_epi64(512);
  const __m512i lo = _mm512_set1_epi64(-512);
  __m512i re = _mm512_srav_epi64(_mm512_add_epi64(pe, q.rnd_even), q.n_even);
  __m512i ro = _mm512_srav_epi64(_mm512_add_epi64(po, q.rnd_odd), q.n_odd);
  re = _mm512_max_epi64(_mm512_min_epi64(re, hi), lo);
  ro = _mm512_max_epi64(_mm512_min_epi64(ro, hi), lo);
  const __m512i y = _mm512_mask_blend_epi32(0xAAAA, re, _mm512_slli_epi64(ro, 32));
  return _mm512_cvtsepi32_epi8(_mm512_add_epi32(y, zp));
}

// clamp(requantize(acc), -lim, lim) as int32 for 16 lanes (0 < lim < 2^31,
// so the same as saturating to int32 first): the steps of requantize_s8_x16
// with the int32 result kept, for the residual epilogue (contract 5b). A
// function of its own, so requantize_s8_x16's callers compile as before.
inline __m512i requantize_clamp_x16(__m512i acc, const Rq16& q, int32_t lim) {
  const __m512i pe = _mm512_mul_epi32(acc, q.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q.mult_odd);
  if (q.high) {  // |result| < 2^30, see above
    const __m512i he = _mm512_srli_epi64(_mm512_add_epi64(pe, q.rnd_even), 32);
    const __m512i y = _mm512_srav_epi32(_mm512_mask_blend_epi32(0xAAAA, he, _mm512_add_epi64(po, q.rnd_odd)), q.k);
    return _mm512_max_epi32(_mm512_min_epi32(y, _mm512_set1_epi32(lim)), _mm512_set1_epi32(-lim));
  }
  const __m512i hi = _mm512_set1_epi64(lim);
  const __m512i lo = _mm512_set1_epi64(-lim);
  __m512i re = _mm512_srav_epi64(_mm512_add_epi64(pe, q.rnd_even), q.n_even);
  __m512i ro = _mm512_srav_epi64(_mm512_add_epi64(po, q.rnd_odd), q.n_odd);
  re = _mm512_max_epi64(_mm512_min_epi64(re, hi), lo);
  ro = _mm512_max_epi64(_mm512_min_epi64(ro, hi), lo);
  return _mm512_mask_blend_epi32(0xAAAA, re, _mm512_slli_epi64(ro, 32));
}

// Four bytes from p, broadcast to every 32-bit lane.
inline __m512i bcast_word(const void* p) {
  int32_t word;
  std::memcpy(&word, p, 4);
  return _mm512_set1_epi32(word);
}

// Step 5 of the softmax (requant.h) on 16 lanes of e:
// p = min(32767, (e m + 2^(b-1)) >> b); e m < 2^31, so one VPMULLD is exact.
struct ProbNorm16 {
  __m512i mult, rnd, cap;
  __m128i shift;
};

inline ProbNorm16 make_prob_norm16(ProbNormalizer norm) {
  return ProbNorm16{_mm512_set1_epi32(static_cast<int32_t>(norm.multiplier)),
                    _mm512_set1_epi32(static_cast<int32_t>(1u << (norm.shift - 1))), _mm512_set1_epi32(kProbMax),
                    _mm_cvtsi32_si128(norm.shift)};
}

inline __m512i normalize_probs_x16(__m512i e, const ProbNorm16& q) {
  return _mm512_min_epu32(_mm512_srl_epi32(_mm512_add_epi32(_mm512_mullo_epi32(e, q.mult), q.rnd), q.shift), q.cap);
}

// Lanes 0..m-1 (m in [0, 16]).
inline __mmask16 lanes16(int m) { return static_cast<__mmask16>((1u << m) - 1u); }

// g[w] lane i = bytes [off + 4w, off + 4w + 4) of key row i as k + 128, for
// the m (1..32) bytes from off (0 past them). Rows are paired into zmm as
// [key p | key p + 4] (p < 4) and [key 8 + p | key 12 + p], so that after the
// 32-bit and 64-bit unpacks (a 4x4 transpose in each 128-bit lane) the lane
// shuffle [A.0, A.2, B.0, B.2] / [A.1, A.3, B.1, B.3] puts keys 0..15 in order.
// Key row i is at k + min(i, last) * stride (rows past the last key alias it).
__attribute__((always_inline)) inline void load_keys_t(const int8_t* k, ptrdiff_t stride, int last, int off, int m, __m512i* g) {
  const __mmask32 mk = static_cast<__mmask32>(m >= 32 ? 0xFFFFFFFFu : (1u << m) - 1u);
  const __mmask64 mk2 = static_cast<__mmask64>(mk) | (static_cast<__mmask64>(mk) << 32);
  const __m512i flip = _mm512_maskz_mov_epi8(mk2, _mm512_set1_epi8(static_cast<char>(0x80)));
  auto pair = [&](int lo, int hi) {
    const __m256i a = _mm256_maskz_loadu_epi8(mk, k + (lo < last ? lo : last) * stride + off);
    const __m256i b = _mm256_maskz_loadu_epi8(mk, k + (hi < last ? hi : last) * stride + off);
    return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1), flip);
  };
  __m512i z[8];
  for (int p = 0; p < 4; ++p) {
    z[p] = pair(p, p + 4);
    z[4 + p] = pair(8 + p, 12 + p);
  }
  for (int h = 0; h < 2; ++h) {
    const __m512i* y = z + 4 * h;
    const __m512i a0 = _mm512_unpacklo_epi32(y[0], y[1]), a1 = _mm512_unpackhi_epi32(y[0], y[1]);
    const __m512i a2 = _mm512_unpacklo_epi32(y[2], y[3]), a3 = _mm512_unpackhi_epi32(y[2], y[3]);
    z[4 * h + 0] = _mm512_unpacklo_epi64(a0, a2);  // dwords 0 / 4 of the 4 key pairs
    z[4 * h + 1] = _mm512_unpackhi_epi64(a0, a2);  // 1 / 5
    z[4 * h + 2] = _mm512_unpacklo_epi64(a1, a3);  // 2 / 6
    z[4 * h + 3] = _mm512_unpackhi_epi64(a1, a3);  // 3 / 7
  }
  for (int d = 0; d < 4; ++d) {
    g[d] = _mm512_shuffle_i64x2(z[d], z[4 + d], 0x88);
    g[d + 4] = _mm512_shuffle_i64x2(z[d], z[4 + d], 0xDD);
  }
}

}  // namespace avx512
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_AVX512_COMMON_H_
