// The integer softmax of requant.h (steps 1-5) on the Cortex-M DSP extension
// and on Helium, the same integers as qs8_softmax_exp_row__ref and
// qs8_softmax_row__ref for every row.
//
// DSP (M4, M33, M55 without MVE code):
//  - steps 1-4 one score at a time in 32-bit registers: the exponent
//    d' M >> r needs 32 bits, and the Horner steps of exp2 are one SMLABB
//    (h u + 2^14) and one ADD with ASR #15 each; no 16-bit pair form is
//    shorter (two products, two shifts and a repack per pair).
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
//  - steps 1-4 in 4 lanes of 32 bits, predicated (VCTP32), so rows of any
//    length need no scalar tail. exp2's Horner steps are one VQRDMLASH each:
//    with u' = u 2^16 (u the Q15 fraction), h + rdmulh(h, u') =
//    c + floor((2 h u 2^16 + 2^31) / 2^32) = c + mulhrs16(h, u) (no
//    saturation: every value fits int16). e = VRSHL of w by -n, the
//    reference's (w + 2^(n-1)) >> n; z >= 0xFFFF lanes are set to 0 by VPSEL
//    (the reference's z clamp only decides that, so it is not applied).
//  - step 5 in 8 lanes of 16 bits for b >= 17: (e m + 2^(b-1)) >> b =
//    (floor(e m / 2^16) + 2^(b-17)) >> (b - 16), VMULH.U16 and one rounding
//    VRSHL (cap not binding, as above); else 4 lanes of 32 bits, e m < 2^31,
//    VRSHL by -b and the cap.
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

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
uint32_t qs8_softmax_exp_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  int32_t row_max = scores[0];
  for (int j = 1; j < n; ++j) row_max = scores[j] > row_max ? scores[j] : row_max;
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  const uint32_t p = x.pre_shift, limit = x.limit, m = x.multiplier, r = x.post_shift;
  const int32_t round = 1 << 14;
  uint32_t sum = 0;
  for (int j = 0; j < n; ++j) {
    uint32_t d = (static_cast<uint32_t>(row_max) - static_cast<uint32_t>(scores[j])) >> p;
    d = d < limit ? d : limit;
    const uint32_t z = (d * m) >> r;
    int32_t v = 0;
    if (z < kExpZeroQ12) {
      const int32_t u = static_cast<int32_t>(z & 0xFFF) << 3;  // Q15 fraction, fits int16
      int32_t h = kExp2Coeff[2] + (__smlabb(kExp2Coeff[3], u, round) >> 15);
      h = kExp2Coeff[1] + (__smlabb(h, u, round) >> 15);
      h = kExp2Coeff[0] + (__smlabb(h, u, round) >> 15);
      const int32_t w = kProbMax + (__smlabb(h, u, round) >> 15);
      const uint32_t k = z >> 12;
      v = (w + ((1 << k) >> 1)) >> k;
    }
    e[j] = static_cast<uint16_t>(v);
    sum += static_cast<uint32_t>(v);
  }
  return sum;
}

void qs8_softmax_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer(qs8_softmax_exp_row__dsp(n, scores, mult, shift, probs));
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
uint32_t qs8_softmax_exp_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  int32_t row_max = INT32_MIN;
  for (int j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    row_max = vmaxvq_p_s32(row_max, vldrwq_z_s32(scores + j, p), p);
  }
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  const uint32x4_t vmax = vdupq_n_u32(static_cast<uint32_t>(row_max));
  const uint32x4_t limit = vdupq_n_u32(x.limit);
  const int32_t neg_p = -static_cast<int32_t>(x.pre_shift), neg_r = -static_cast<int32_t>(x.post_shift);
  const int32x4_t a3 = vdupq_n_s32(kExp2Coeff[2]);
  uint32_t sum = 0;
  for (int j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    uint32x4_t d = vsubq_u32(vmax, vldrwq_z_u32(reinterpret_cast<const uint32_t*>(scores + j), p));
    d = vminq_u32(vshlq_r_u32(d, neg_p), limit);
    const uint32x4_t z = vshlq_r_u32(vmulq_n_u32(d, x.multiplier), neg_r);
    const mve_pred16_t dead = vcmpcsq_n_u32(z, kExpZeroQ12);
    const int32x4_t u = vreinterpretq_s32_u32(vshrq_n_u32(vshlq_n_u32(z, 20), 1));  // (z & 0xFFF) << 19
    int32x4_t h = vqrdmlahq_n_s32(a3, u, kExp2Coeff[3]);
    h = vqrdmlashq_n_s32(h, u, kExp2Coeff[1]);
    h = vqrdmlashq_n_s32(h, u, kExp2Coeff[0]);
    h = vqrdmlashq_n_s32(h, u, kProbMax);  // w
    const int32x4_t neg_k = vnegq_s32(vreinterpretq_s32_u32(vshrq_n_u32(z, 12)));
    const uint32x4_t v = vreinterpretq_u32_s32(vpselq_s32(vdupq_n_s32(0), vrshlq_s32(h, neg_k), dead));
    vstrhq_p_u32(e + j, v, p);
    sum = vaddvaq_p_u32(sum, v, p);
  }
  return sum;
}

void qs8_softmax_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer(qs8_softmax_exp_row__helium(n, scores, mult, shift, probs));
  if (norm.shift >= 17) {
    const uint16x8_t m = vdupq_n_u16(static_cast<uint16_t>(norm.multiplier));
    const int32_t neg = 16 - norm.shift;
    for (int j = 0; j < n; j += 8) {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
      vstrhq_p_u16(probs + j, vrshlq_n_u16(vmulhq_u16(vldrhq_z_u16(probs + j, p), m), neg), p);
    }
    return;
  }
  const uint32x4_t cap = vdupq_n_u32(static_cast<uint32_t>(kProbMax));
  for (int j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    const uint32x4_t v = vrshlq_n_u32(vmulq_n_u32(vldrhq_z_u32(probs + j, p), norm.multiplier), -norm.shift);
    vstrhq_p_u32(probs + j, vminq_u32(v, cap), p);
  }
}
#endif

}  // namespace kernels
}  // namespace edgeattn
#endif
