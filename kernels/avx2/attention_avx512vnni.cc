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
//
// Q.K (R query rows against 16 keys at a time, lanes = keys): VPDPBUSD
// multiplies unsigned by signed bytes; the keys are the unsigned operand,
// k' = k ^ 0x80 = k + 128, and the query's 4 bytes, broadcast, the signed one:
//   sum_i (q_i - zq)(k_i - zk) = sum_i (q_i - zq) k'_i - (128 + zk) B,
//   sum_i (q_i - zq) k'_i = P - zq T,  P = sum_i q_i k'_i,  T = sum_i k'_i,
// with B = sum_i (q_i - zq) one constant per query row and T one more
// VPDPBUSD against bytes of 1, shared by the R rows. Key bytes past the head
// dim are loaded as 0 (masked loads) and stay 0 (the 0x80 flip is masked
// too), so they add nothing whatever the query bytes there. Everything wraps
// in 32 bits like the reference, whose sum fits int32. The 16 key rows are
// transposed to 4-byte columns in registers (load_keys_t); keys past n alias
// the last key and their lanes are not stored.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "avx2_kernels.h"
#include "avx512_common.h"
#include "edgeattn/kernels/requant.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* used as a
// don't-care operand of the set/mask intrinsics): a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace edgeattn {
namespace kernels {
namespace {

using avx512::lanes16;
using avx512::load_keys_t;

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

// Query bytes [i, i + 4) as one word; bytes past dim read as 0 (never read).
inline int32_t q_word(const int8_t* q, int i, int dim) {
  int32_t w = 0;
  if (__builtin_expect(dim - i >= 4, 1)) {
    std::memcpy(&w, q + i, 4);
  } else {
    for (int b = 0; b < dim - i; ++b) w |= static_cast<int32_t>(static_cast<uint8_t>(q[i + b])) << (8 * b);
  }
  return w;
}

template <int R>
void qk_rows_zmm(int n, int dim, const int8_t* const* q, int32_t q_zp, const int8_t* k,
                 int k_stride, int32_t k_zp, int32_t* const* scores) {
  __m512i c[R];  // -(128 + zk) B per row
  for (int r = 0; r < R; ++r) {
    uint32_t b = 0;
    for (int i = 0; i < dim; ++i) b += static_cast<uint32_t>(static_cast<int32_t>(q[r][i]) - q_zp);
    c[r] = _mm512_set1_epi32(static_cast<int32_t>(0u - (128u + static_cast<uint32_t>(k_zp)) * b));
  }
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i zq = _mm512_set1_epi32(q_zp);
  for (int j = 0; j < n; j += 16) {
    const int nk = n - j < 16 ? n - j : 16;
    const int8_t* kj = k + static_cast<ptrdiff_t>(j) * k_stride;
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = c[r];
    __m512i t = _mm512_setzero_si512();
    for (int off = 0; off < dim; off += 32) {
      const int m = dim - off < 32 ? dim - off : 32;
      __m512i g[8];
      if (nk == 16) {  // a constant last row: plain strided addresses
        load_keys_t(kj, k_stride, 15, off, m, g);
      } else {
        load_keys_t(kj, k_stride, nk - 1, off, m, g);
      }
      for (int w = 0; w < 8; ++w) {
        if (4 * w >= m) break;
        t = _mm512_dpbusd_epi32(t, g[w], ones);
        for (int r = 0; r < R; ++r) {
          acc[r] = _mm512_dpbusd_epi32(acc[r], g[w], _mm512_set1_epi32(q_word(q[r], off + 4 * w, dim)));
        }
      }
    }
    const __m512i zt = _mm512_mullo_epi32(t, zq);
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_epi32(scores[r] + j, lanes16(nk), _mm512_sub_epi32(acc[r], zt));
  }
}

}  // namespace

void qs8_qk_row__avx512vnni(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                            int k_stride, int32_t k_zp, int32_t* scores) {
  qk_rows_zmm<1>(n, dim, &q, q_zp, k, k_stride, k_zp, &scores);
}

void qs8_qk_rows2_zmm__avx512vnni(int n, int dim, const int8_t* q0, const int8_t* q1,
                                  int32_t q_zp, const int8_t* k, int k_stride, int32_t k_zp,
                                  int32_t* scores0, int32_t* scores1) {
  const int8_t* q[2] = {q0, q1};
  int32_t* s[2] = {scores0, scores1};
  qk_rows_zmm<2>(n, dim, q, q_zp, k, k_stride, k_zp, s);
}

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
  const Qs8AttentionSteps steps = {qs8_qk_rows2_zmm__avx512vnni, qs8_softmax_row__avx512vnni};
  qs8_attention_with__avx2(steps, a);
}

}  // namespace kernels
}  // namespace edgeattn
