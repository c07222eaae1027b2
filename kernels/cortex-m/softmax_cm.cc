// The integer softmax of requant.h (steps 1-5) on the Cortex-M DSP extension
// and on Helium, the same integers as qs8_softmax_exp_row__ref and
// qs8_softmax_row__ref for every row.
//
// DSP (M4, M7, M33; on Helium builds the cmsis-dsp table keeps the
// reference softmax, cortexm_kernels.h):
//  - steps 1-4 one score at a time in 32-bit registers (exp_row_dsp below):
//    the exponent d' M >> r needs 32 bits, and each Horner step of exp2 is
//    one SMLABB and one shift; no 16-bit pair form is shorter (two
//    products, two shifts and a repack per pair).
//  - step 5 on pairs of probabilities (one word): when the row sum has
//    b >= 17 bits, with m' = m 2^(32-b) (< 2^31, as m < 2^16),
//    SMLAWB(m', e, 2^15) = floor((e m' + 2^31) / 2^16), and its top half is
//    floor((e m' + 2^31) / 2^32) = floor((e m + 2^(b-1)) / 2^b), the
//    reference's p (nested floors). SMLAWB / SMLAWT take e from the bottom /
//    top half of the word and PKHTB packs the two top halves: five
//    instructions per two probabilities with the load and the store. p <=
//    16384 there (e <= 32767, m <= 2^(b+15) / sum, sum >= 2^(b-1)), so the
//    32767 cap cannot bind. Rows with b <= 16 (one key of weight) take the
//    reference's normalize_prob_q15.
//
// Helium (M55):
//  - steps 1-2 in 32-bit lanes; 8 scores per step (VLD2: even and odd keys),
//    the saturating narrows VQMOVNB / VQMOVNT (the clamp at 0xFFFF) put z
//    back in key order in 16-bit lanes. Step 3 there: each Horner step is one
//    VQRDMLASH.S16, c + rdmulh(h, u) = c + ((2 h u + 2^15) >> 16) =
//    c + mulhrs16(h, u) (no saturation: every value fits int16); e = VRSHL
//    of w by -n, the reference's (w + 2^(n-1)) >> n, and VPSEL sets the
//    z = 0xFFFF lanes to 0. The last 1-7 scores take the same step from a
//    copy padded with the row maximum, stored and summed under VCTP16.
//  - step 5 in 8 lanes of 16 bits: for b >= 17 (e m + 2^(b-1)) >> b =
//    (floor(e m / 2^16) + 2^(b-17)) >> (b - 16), VMULH.U16 and one rounding
//    VRSHL (cap not binding, as above); b is 15 or 16 otherwise, and one
//    VRMULH.U16 of e 2^(16-b) by m, then the cap (normalize_x8).
#include "cortex-m/cortexm_kernels.h"

#if (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#include <cstring>

#include "edgeattn/kernels/requant.h"
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif

namespace edgeattn {
namespace kernels {

// requant.h's prob_normalizer with 32-bit divisions: m = floor((2^(b+15) -
// 1) / sum). For b <= 16 the numerator fits 32 bits. Else, scaled by
// 2^(32-b) (the same quotient), m = floor((2^47 - 2^(32-b)) / s) with
// s = sum 2^(32-b) in [2^31, 2^32): an estimate from one UDIV by the top 16
// bits of s (within a few units of m), then corrected until the remainder
// lies in [0, s), with 64-bit products (UMULL) and no 64-bit division
// (libgcc's took about 120 instructions per row).
ProbNormalizer prob_normalizer_cm(uint32_t sum) {
  const int b = bit_length_u32(sum);
  if (b <= 16) return ProbNormalizer{((1u << (b + 15)) - 1) / sum, b};
  const uint32_t s = sum << (32 - b);
  const int64_t num = (int64_t{1} << 47) - (int64_t{1} << (32 - b));
  uint32_t m = (1u << 31) / ((s >> 16) + 1);
  int64_t r = num - static_cast<int64_t>(uint64_t{m} * s);
  while (r < 0) --m, r += s;
  while (r >= static_cast<int64_t>(s)) ++m, r -= s;
  return ProbNormalizer{m, b};
}

#if EA_CM_DSP_ONLY
namespace {
// Largest of s[0, n), n >= 1: two scores per load (LDM), so the loop's own
// instructions are shared by two.
int32_t row_max_dsp(int n, const int32_t* s) {
  int32_t m = s[0];
  const int32_t* end = s + (n & ~1);
  for (; s != end; s += 2) {
    const int32_t a = s[0], b = s[1];
    m = a > m ? a : m;
    m = b > m ? b : m;
  }
  if (n & 1) m = *s > m ? *s : m;
  return m;
}

// Steps 1-4 from the row maximum, 23 instructions per live score (25 with
// p > 0) and 9 per dead one:
// - A key is live (e > 0) exactly when its pre-shifted difference is below
//   the layer's limit D, i.e. when s >= lo = row_max - D 2^p + 1 (at least
//   INT32_MIN: then every key is live), one compare.
// - p = 0: z = (d M) >> r with d M = row_max M - s M (mod 2^32), one MLS,
//   exact as d M < 2^32 for live keys (D is the smallest d reaching 0xFFFF).
// - The Horner steps on u = z & 0xFFF (Q12) instead of 8u (Q15):
//   (h 8u + 2^14) >> 15 = (h u + 2^11) >> 12, and c + that is
//   (h u + 2^11 + c 2^12) >> 12, one SMLABB and one shift per step.
// - The last step and e = (w + 2^(k-1)) >> k, k = z >> 12, in one: nested
//   floors, e = (h u + last_round(k)) >> (12 + k) with last_round(k) =
//   2^11 + (32767 + floor(2^k / 2)) 2^12 (< 2^28: no overflow).
// The loop is written out: GCC -Os kept the output pointer, the loop end
// and a constant in memory (27 instructions per live score). Its 14
// registers leave no room for the Horner constants: two LDRD per score
// bring them from kExpTable, whose last 16 words are last_round(k).
constexpr int32_t horner_round(int c) { return (1 << 11) + c * (1 << 12); }
constexpr int32_t last_round(int k) { return (1 << 11) + (kProbMax + ((1 << k) >> 1)) * (1 << 12); }
constexpr int32_t kExpTable[20] = {
    kExp2Coeff[3],  horner_round(kExp2Coeff[2]), horner_round(kExp2Coeff[1]), horner_round(kExp2Coeff[0]),
    last_round(0),  last_round(1),  last_round(2),  last_round(3),  last_round(4),  last_round(5),
    last_round(6),  last_round(7),  last_round(8),  last_round(9),  last_round(10), last_round(11),
    last_round(12), last_round(13), last_round(14), last_round(15)};

// The step from z (in x) on: e (in h) stored, added to sum; the loop end.
#define EA_EXP_HORNER_STORE_LOOP                    \
  "ubfx %[u], %[x], #0, #12\n\t"                    \
  "lsr %[x], %[x], #12\n\t"                         \
  "ldrd %[c1], %[c2], [%[tab], #-16]\n\t"           \
  "smlabb %[h], %[c1], %[u], %[c2]\n\t"             \
  "asr %[h], %[h], #12\n\t"                         \
  "ldrd %[c1], %[c2], [%[tab], #-8]\n\t"            \
  "smlabb %[h], %[h], %[u], %[c1]\n\t"              \
  "asr %[h], %[h], #12\n\t"                         \
  "smlabb %[h], %[h], %[u], %[c2]\n\t"              \
  "asr %[h], %[h], #12\n\t"                         \
  "ldr %[c1], [%[tab], %[x], lsl #2]\n\t"           \
  "smlabb %[h], %[h], %[u], %[c1]\n\t"              \
  "add %[x], %[x], #12\n\t"                         \
  "asr %[h], %[h], %[x]\n\t"                        \
  "2:\n\t"                                          \
  "strh %[h], [%[e]], #2\n\t"                       \
  "add %[sum], %[sum], %[h]\n\t"                    \
  "cmp %[s], %[end]\n\t"                            \
  "bne 1b\n\t"                                      \
  "b 4f\n\t"                                        \
  "3:\n\t"                                          \
  "movs %[h], #0\n\t"                               \
  "b 2b\n\t"                                        \
  "4:"

// n >= 1. kPre (p > 0, so r = 16): z = ((d >> p) M) >> 16; else
// z = (row_max M - s M) >> r.
template <bool kPre>
uint32_t exp_row_dsp(int n, const int32_t* s, int32_t row_max, const SoftmaxExpParams& x, uint16_t* e) {
  const int64_t lo64 = int64_t{row_max} + 1 - static_cast<int64_t>(uint64_t{x.limit} << x.pre_shift);
  const int32_t lo = lo64 < INT32_MIN ? INT32_MIN : static_cast<int32_t>(lo64);
  const uint32_t m = x.multiplier, shift = kPre ? x.pre_shift : x.post_shift;
  // kPre: the row maximum; else row_max M (mod 2^32).
  const uint32_t top = kPre ? static_cast<uint32_t>(row_max) : static_cast<uint32_t>(row_max) * m;
  const int32_t* end = s + n;
  const int32_t* tab = kExpTable + 4;
  uint32_t sum = 0, z, u, h, c1, c2;
  // volatile: the stores to e are effects the outputs do not show.
  if (kPre) {
    __asm__ volatile(
        "1:\n\t"
        "ldr %[x], [%[s]], #4\n\t"
        "cmp %[x], %[lo]\n\t"
        "blt 3f\n\t"
        "sub %[x], %[top], %[x]\n\t"
        "lsr %[x], %[x], %[shift]\n\t"
        "mul %[x], %[x], %[m]\n\t"
        "lsr %[x], %[x], #16\n\t" EA_EXP_HORNER_STORE_LOOP
        : [s] "+r"(s), [e] "+r"(e), [sum] "+r"(sum), [x] "=&r"(z), [u] "=&r"(u), [h] "=&r"(h), [c1] "=&r"(c1),
          [c2] "=&r"(c2)
        : [end] "r"(end), [lo] "r"(lo), [top] "r"(top), [m] "r"(m), [shift] "r"(shift), [tab] "r"(tab)
        : "cc", "memory");
  } else {
    __asm__ volatile(
        "1:\n\t"
        "ldr %[x], [%[s]], #4\n\t"
        "cmp %[x], %[lo]\n\t"
        "blt 3f\n\t"
        "mls %[x], %[x], %[m], %[top]\n\t"
        "lsr %[x], %[x], %[shift]\n\t" EA_EXP_HORNER_STORE_LOOP
        : [s] "+r"(s), [e] "+r"(e), [sum] "+r"(sum), [x] "=&r"(z), [u] "=&r"(u), [h] "=&r"(h), [c1] "=&r"(c1),
          [c2] "=&r"(c2)
        : [end] "r"(end), [lo] "r"(lo), [top] "r"(top), [m] "r"(m), [shift] "r"(shift), [tab] "r"(tab)
        : "cc", "memory");
  }
  return sum;
}
#undef EA_EXP_HORNER_STORE_LOOP
}  // namespace

uint32_t qs8_softmax_exp_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  const int32_t row_max = row_max_dsp(n, scores);
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  return x.pre_shift > 0 ? exp_row_dsp<true>(n, scores, row_max, x, e) : exp_row_dsp<false>(n, scores, row_max, x, e);
}

void qs8_softmax_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer_cm(qs8_softmax_exp_row__dsp(n, scores, mult, shift, probs));
  int j = 0;
  if (norm.shift >= 17) {
    const int32_t m = static_cast<int32_t>(norm.multiplier << (32 - norm.shift));
    for (; j + 2 <= n; j += 2) {
      int32_t pair;
      std::memcpy(&pair, probs + j, 4);
      int32_t lo, hi;
      __asm__("smlawb %0, %1, %2, %3" : "=r"(lo) : "r"(m), "r"(pair), "r"(1 << 15));
      __asm__("smlawt %0, %1, %2, %3" : "=r"(hi) : "r"(m), "r"(pair), "r"(1 << 15));
      __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(pair) : "r"(hi), "r"(lo));
      std::memcpy(probs + j, &pair, 4);
    }
  }
  for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm);
}
#endif

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
namespace {
// Steps 1-2 on 4 scores in 32-bit lanes: z below 0xFFFF, or at least 0xFFFF
// where e = 0. A forced-inline function (GCC -Os calls a lambda, with its
// captures in memory).
__attribute__((always_inline)) inline uint32x4_t exponent_x4(uint32x4_t s, uint32x4_t vmax, int32_t neg_p,
                                                             uint32x4_t limit, uint32_t mul, int32_t neg_r) {
  return vshlq_r_u32(vmulq_n_u32(vminq_u32(vshlq_r_u32(vsubq_u32(vmax, s), neg_p), limit), mul), neg_r);
}

// The 16-bit Horner steps of exp2 on 8 exponents z (saturated to 0xFFFF):
// e = 2^(-z / 4096) in Q15, 0 where z = 0xFFFF.
inline int16x8_t exp2_neg_q15_x8(uint16x8_t z) {
  const int16x8_t u = vreinterpretq_s16_u16(vshrq_n_u16(vshlq_n_u16(z, 4), 1));  // (z & 0xFFF) << 3
  int16x8_t h = vqrdmlahq_n_s16(vdupq_n_s16(kExp2Coeff[2]), u, kExp2Coeff[3]);
  h = vqrdmlashq_n_s16(h, u, kExp2Coeff[1]);
  h = vqrdmlashq_n_s16(h, u, kExp2Coeff[0]);
  h = vqrdmlashq_n_s16(h, u, kProbMax);  // w
  const int16x8_t neg_k = vnegq_s16(vreinterpretq_s16_u16(vshrq_n_u16(z, 12)));
  // The vector-vector compare: GCC 12.2 stops with an internal compiler
  // error on vcmpeqq_n_u16 in this function.
  const mve_pred16_t dead = vcmpeqq_u16(z, vdupq_n_u16(static_cast<uint16_t>(kExpZeroQ12)));
  return vpselq_s16(vdupq_n_s16(0), vrshlq_s16(h, neg_k), dead);
}
}  // namespace

uint32_t qs8_softmax_exp_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  int32_t row_max = INT32_MIN;
  int j = 0;
  for (; j + 4 <= n; j += 4) row_max = vmaxvq_s32(row_max, vld1q_s32(scores + j));
  if (j < n) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    row_max = vmaxvq_p_s32(row_max, vldrwq_z_s32(scores + j, p), p);
  }
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  const uint32x4_t vmax = vdupq_n_u32(static_cast<uint32_t>(row_max));
  const uint32x4_t limit = vdupq_n_u32(x.limit);
  const int32_t neg_p = -static_cast<int32_t>(x.pre_shift), neg_r = -static_cast<int32_t>(x.post_shift);
  const uint32_t mul = x.multiplier;
  uint32_t sum = 0;
  // 8 scores per step: VLD2 splits them into even and odd keys, and the
  // saturating narrows put them back in order in 16-bit lanes. The last 1-7
  // scores go through the same step from a copy padded with the maximum
  // (VLD2 has no predicated form), their e stored and summed under VCTP16.
  alignas(8) int32_t tail[8];
  for (j = 0; j < n; j += 8) {
    const int32_t* src = scores + j;
    const int left = n - j;
    if (left < 8) {  // predicated loads: nothing past the row is read
      const mve_pred16_t p0 = vctp32q(static_cast<uint32_t>(left));
      const mve_pred16_t p1 = vctp32q(static_cast<uint32_t>(left > 4 ? left - 4 : 0));
      const int32x4_t pad = vdupq_n_s32(row_max);
      vst1q_s32(tail, vpselq_s32(vldrwq_z_s32(src, p0), pad, p0));
      vst1q_s32(tail + 4, vpselq_s32(vldrwq_z_s32(src + 4, p1), pad, p1));
      src = tail;
    }
    const uint32x4x2_t s = vld2q_u32(reinterpret_cast<const uint32_t*>(src));
    const uint32x4_t z_even = exponent_x4(s.val[0], vmax, neg_p, limit, mul, neg_r);
    const uint32x4_t z_odd = exponent_x4(s.val[1], vmax, neg_p, limit, mul, neg_r);
    const uint16x8_t z = vqmovntq_u32(vqmovnbq_u32(vdupq_n_u16(0), z_even), z_odd);
    const uint16x8_t v = vreinterpretq_u16_s16(exp2_neg_q15_x8(z));
    if (left >= 8) {
      vst1q_u16(e + j, v);
      sum = vaddvaq_u16(sum, v);
    } else {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(left));
      vstrhq_p_u16(e + j, v, p);
      sum = vaddvaq_p_u16(sum, v, p);
    }
  }
  return sum;
}

namespace {
// Step 5 on 8 values of e (b = norm.shift). b >= 17: the
// high halves (VMULH) and one rounding shift by b - 16. Else b is 15 or 16
// (the sum is at least 32767, the row maximum's e): VRMULH.U16 of e 2^(16-b)
// (at most 2 e < 2^16) and m is (e m 2^(16-b) + 2^15) >> 16 =
// (e m + 2^(b-1)) >> b, then the 32767 cap.
__attribute__((always_inline)) inline uint16x8_t normalize_x8(uint16x8_t e, uint16x8_t m, int32_t b) {
  if (b >= 17) return vrshlq_n_u16(vmulhq_u16(e, m), 16 - b);
  return vminq_u16(vrmulhq_u16(vshlq_r_u16(e, 16 - b), m), vdupq_n_u16(static_cast<uint16_t>(kProbMax)));
}
}  // namespace

void qs8_softmax_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer_cm(qs8_softmax_exp_row__helium(n, scores, mult, shift, probs));
  const uint16x8_t m = vdupq_n_u16(static_cast<uint16_t>(norm.multiplier));
  int j = 0;
  for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8(vld1q_u16(probs + j), m, norm.shift));
  if (j < n) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
    vstrhq_p_u16(probs + j, normalize_x8(vldrhq_z_u16(probs + j, p), m, norm.shift), p);
  }
}
#endif

}  // namespace kernels
}  // namespace edgeattn
#endif
