// The integer softmax of requant.h (steps 1-4) on Helium, the same
// integers as qs8_softmax_exp_row__ref for every row.
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
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

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

}  // namespace kernels
}  // namespace edgeattn
#endif
