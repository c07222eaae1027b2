// int8 attention row primitives on zmm (AVX-512 F/BW/VL + VNNI) and the
// avx512vnni attention kernel built from them. Compiled with -mavx512f
// -mavx512bw -mavx512vl -mavx512vnni (no DQ: nothing here needs it); reached
// only after cpu_supports(KernelPath::kAvx512Vnni).
//
// Softmax (qs8_softmax_row of requant.h, 16 scores per vector):
//  - d = max - s is in [0, 2^32): exact as uint32 (wrapping subtract), and
//    min_epu32 with INT32_MAX is the clamp of softmax_exponent_q16.
//  - z = requantize(d) for d >= 0: d * M (both < 2^31) is the exact 64-bit
//    VPMULUDQ product of the even / odd lanes; + 2^(n-1) < 2^63; logical shift
//    (nothing is negative), then the clamp to INT32_MAX with min_epu64.
//  - exp2 polynomial and the Q30 -> Q15 rounding: the avx2 tricks of
//    attention.cc on 16 lanes (see exp2_neg_q15_x16), the cutoff as a mask.
//  - normalizer: the avx2 32-bit split of e * m (see normalize_x16).
//  - tails (n % 16) use masked loads and stores, no scalar loop.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "avx2_kernels.h"
#include "edgeattn/kernels/requant.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* used as a
// don't-care operand of the set/mask intrinsics): a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace edgeattn {
namespace kernels {
namespace {

// Lanes 0..m-1 (m in [0, 16]).
inline __mmask16 lanes16(int m) { return static_cast<__mmask16>((1u << m) - 1u); }

inline __m512i load16_s32(const int32_t* p) { return _mm512_loadu_si512(p); }

// requantize() of requant.h with one multiplier and shift, for d >= 0.
struct ExpRq {
  __m512i mult;  // M in the low dword of each 64-bit lane (VPMULUDQ reads only that)
  __m512i rnd;   // 2^(n-1), int64
  __m128i n;     // 31 - shift, the shift count
};

inline ExpRq make_exp_rq(int32_t mult, int32_t shift) {
  const int n = 31 - shift;
  return ExpRq{_mm512_set1_epi64(mult), _mm512_set1_epi64(int64_t{1} << (n - 1)), _mm_cvtsi32_si128(n)};
}

// z = softmax_exponent_q16(max, s) for 16 lanes.
inline __m512i softmax_exponent_x16(__m512i vmax, __m512i s, const ExpRq& q) {
  const __m512i d = _mm512_min_epu32(_mm512_sub_epi32(vmax, s), _mm512_set1_epi32(INT32_MAX));
  const __m512i lim = _mm512_set1_epi64(INT32_MAX);
  const __m512i pe = _mm512_mul_epu32(d, q.mult);
  const __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(d, 32), q.mult);
  const __m512i ze = _mm512_min_epu64(_mm512_srl_epi64(_mm512_add_epi64(pe, q.rnd), q.n), lim);
  const __m512i zo = _mm512_min_epu64(_mm512_srl_epi64(_mm512_add_epi64(po, q.rnd), q.n), lim);
  return _mm512_mask_blend_epi32(0xAAAA, ze, _mm512_slli_epi64(zo, 32));
}

// e = exp2_neg_q15(z) for N vectors of 16 lanes (0 <= z <= INT32_MAX), in
// place. A Horner step floor(h * u / 2^31) with u = f * 2^15 is
// floor(h * f / 2^16) = hh * f + floor(hl * f / 2^16) for h = hh * 2^16 + hl
// (hh = h >> 16 arithmetic, hl = h & 0xFFFF): one VPMULLD (|hh * f| < 2^31)
// and one VPMULHUW on the low 16-bit halves (the high halves are 0 * 0).
// The last step (v + 2^(s-1)) >> s is ((v >> (s-1)) + 1) >> 1 (nested floors,
// v > 0), one variable shift fewer. The N chains are interleaved step by step.
template <int N>
inline void exp2_neg_q15_x16(__m512i* z) {
  const __m512i low16 = _mm512_set1_epi32(0xFFFF);
  __mmask16 live[N];
  __m512i n[N], f[N], h[N];
  for (int i = 0; i < N; ++i) {
    live[i] = _mm512_cmplt_epu32_mask(z[i], _mm512_set1_epi32(kExpCutoffQ16));
    // s - 1 = n + 14, n = min(z >> 16, 15) (dead lanes only need a valid count)
    n[i] = _mm512_add_epi32(_mm512_min_epu32(_mm512_srli_epi32(z[i], 16), _mm512_set1_epi32(15)),
                            _mm512_set1_epi32(14));
    f[i] = _mm512_and_si512(z[i], low16);
    h[i] = _mm512_set1_epi32(kExp2Coeff[4]);
  }
  auto step = [&](int32_t c) {
    for (int i = 0; i < N; ++i) {
      const __m512i hi = _mm512_mullo_epi32(_mm512_srai_epi32(h[i], 16), f[i]);
      const __m512i lo = _mm512_mulhi_epu16(_mm512_and_si512(h[i], low16), f[i]);
      h[i] = _mm512_add_epi32(_mm512_add_epi32(_mm512_set1_epi32(c), hi), lo);
    }
  };
  step(kExp2Coeff[3]);
  step(kExp2Coeff[2]);
  step(kExp2Coeff[1]);
  step(kExp2Coeff[0]);
  step(1 << 30);  // h = 2^-u in Q30
  for (int i = 0; i < N; ++i) {
    const __m512i t = _mm512_add_epi32(_mm512_srlv_epi32(h[i], n[i]), _mm512_set1_epi32(1));
    z[i] = _mm512_maskz_srli_epi32(live[i], t, 1);
  }
}

// p = normalize_prob_q15(e) for 16 lanes. With m = mh 2^16 + ml,
// e m + 2^(s-1) = (e mh + 2^(s-17)) 2^16 + e ml, and nested floors give
// p = (e mh + 2^(s-17) + floor(e ml / 2^16)) >> (s - 16). Bounds: e <= 2^15,
// mh <= 2^15, s in [31, 46], so the sum stays below 2^31; floor(e ml / 2^16)
// is one VPMULHUW on the low 16-bit halves (the high halves are 0).
struct Norm16 {
  __m512i mh, ml, rnd;
  __m128i sh;
};

inline Norm16 make_norm16(ProbNormalizer norm) {
  return Norm16{_mm512_set1_epi32(static_cast<int32_t>(norm.multiplier >> 16)),
                _mm512_set1_epi32(static_cast<int32_t>(norm.multiplier & 0xFFFFu)),
                _mm512_set1_epi32(1 << (norm.shift - 17)), _mm_cvtsi32_si128(norm.shift - 16)};
}

inline __m256i normalize_x16(__m512i e, const Norm16& q) {
  const __m512i hi = _mm512_add_epi32(_mm512_mullo_epi32(e, q.mh), q.rnd);
  const __m512i p = _mm512_srl_epi32(_mm512_add_epi32(hi, _mm512_mulhi_epu16(e, q.ml)), q.sh);
  return _mm512_cvtepi32_epi16(p);  // p <= 32768
}

}  // namespace

void qs8_softmax_row__avx512vnni(int n, int32_t* scores, int32_t mult, int32_t shift,
                                 uint16_t* probs) {
  if (n <= 0) return;
  const int n16 = n & ~15;
  const __mmask16 tail = lanes16(n - n16);
  const __m512i lowest = _mm512_set1_epi32(INT32_MIN);
  __m512i m0 = lowest, m1 = lowest;
  int j = 0;
  for (; j + 32 <= n16; j += 32) {
    m0 = _mm512_max_epi32(m0, load16_s32(scores + j));
    m1 = _mm512_max_epi32(m1, load16_s32(scores + j + 16));
  }
  if (j < n16) m0 = _mm512_max_epi32(m0, load16_s32(scores + j));
  if (tail != 0) m1 = _mm512_max_epi32(m1, _mm512_mask_loadu_epi32(lowest, tail, scores + n16));
  const __m512i vmax = _mm512_set1_epi32(_mm512_reduce_max_epi32(_mm512_max_epi32(m0, m1)));

  const ExpRq rq = make_exp_rq(mult, shift);
  __m512i vsum = _mm512_setzero_si512();
  j = 0;
  for (; j + 64 <= n16; j += 64) {
    __m512i z[4];
    for (int i = 0; i < 4; ++i) z[i] = softmax_exponent_x16(vmax, load16_s32(scores + j + 16 * i), rq);
    exp2_neg_q15_x16<4>(z);
    for (int i = 0; i < 4; ++i) {
      _mm512_storeu_si512(scores + j + 16 * i, z[i]);
      vsum = _mm512_add_epi32(vsum, z[i]);
    }
  }
  for (; j < n16; j += 16) {
    __m512i z = softmax_exponent_x16(vmax, load16_s32(scores + j), rq);
    exp2_neg_q15_x16<1>(&z);
    _mm512_storeu_si512(scores + j, z);
    vsum = _mm512_add_epi32(vsum, z);
  }
  if (tail != 0) {  // lanes past n: loaded as 0, excluded from the sum, not stored
    __m512i z = softmax_exponent_x16(vmax, _mm512_maskz_loadu_epi32(tail, scores + n16), rq);
    exp2_neg_q15_x16<1>(&z);
    _mm512_mask_storeu_epi32(scores + n16, tail, z);
    vsum = _mm512_mask_add_epi32(vsum, tail, vsum, z);
  }
  // Wrapping adds like the reference's uint32 sum (which stays below 2^31).
  const uint32_t sum = static_cast<uint32_t>(_mm512_reduce_add_epi32(vsum));

  const Norm16 norm = make_norm16(prob_normalizer(sum));
  for (j = 0; j < n16; j += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + j), normalize_x16(load16_s32(scores + j), norm));
  }
  if (tail != 0) {
    const __m256i p = normalize_x16(_mm512_maskz_loadu_epi32(tail, scores + n16), norm);
    _mm256_mask_storeu_epi16(probs + n16, tail, p);
  }
}

void qs8_attention__avx512vnni(const QS8AttentionArgs& a) {
  const Qs8AttentionSteps steps = {qs8_qk_rows2__avx512vnni, qs8_softmax_row__avx512vnni};
  qs8_attention_with__avx2(steps, a);
}

}  // namespace kernels
}  // namespace edgeattn
