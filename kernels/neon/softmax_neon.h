// The integer softmax of requant.h on NEON (Armv7-A and AArch64), shared by
// the row kernel (attention.cc) and the tiled kernel (attention_tile.cc).
//  - exponent (steps 1-2): 32-bit lanes; the variable shifts are vshl by
//    negative counts (logical for unsigned lanes), vqmovn_u32 the clamp to
//    0xFFFF.
//  - exp2 (step 3): 16-bit lanes; vqrdmulh is mulhrs16 (u >= 0, so it never
//    saturates), vrshl by -n the rounding shift (w + 2^(n-1)) >> n.
//  - normalizer (step 5): 32-bit lanes; e m < 2^31, so vmulq_u32 is exact,
//    and vrshl by -b rounds half up like the reference.
#ifndef EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_
#define EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_

#include <arm_neon.h>

#include <cstdint>

#include "edgeattn/kernels/requant.h"
#include "neon_common.h"

namespace edgeattn {
namespace kernels {
namespace neon {

struct ExpParams4 {
  int32x4_t neg_pre, neg_post;
  uint32x4_t limit, mult;
};

static inline ExpParams4 exp_params4(const SoftmaxExpParams& x) {
  return ExpParams4{vdupq_n_s32(-static_cast<int32_t>(x.pre_shift)), vdupq_n_s32(-static_cast<int32_t>(x.post_shift)),
                    vdupq_n_u32(x.limit), vdupq_n_u32(x.multiplier)};
}

// z of 4 scores (as uint16).
static inline uint16x4_t exponent_x4(uint32x4_t vmax, const int32_t* s, const ExpParams4& x) {
  const uint32x4_t d = vsubq_u32(vmax, vreinterpretq_u32_s32(vld1q_s32(s)));
  const uint32x4_t dp = vminq_u32(vshlq_u32(d, x.neg_pre), x.limit);
  return vqmovn_u32(vshlq_u32(vmulq_u32(dp, x.mult), x.neg_post));
}

// e of 8 exponents.
static inline uint16x8_t exp2_neg_q15_x8(uint16x8_t z) {
  const uint16x8_t live = vcltq_u16(z, vdupq_n_u16(static_cast<uint16_t>(kExpZeroQ12)));
  const int16x8_t n = vreinterpretq_s16_u16(vshrq_n_u16(z, 12));
  const int16x8_t u = vreinterpretq_s16_u16(vshlq_n_u16(vandq_u16(z, vdupq_n_u16(0xFFF)), 3));
  int16x8_t h = vdupq_n_s16(kExp2Coeff[3]);
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[2]), vqrdmulhq_s16(h, u));
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[1]), vqrdmulhq_s16(h, u));
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[0]), vqrdmulhq_s16(h, u));
  const int16x8_t w = vaddq_s16(vdupq_n_s16(kProbMax), vqrdmulhq_s16(h, u));
  return vandq_u16(vrshlq_u16(vreinterpretq_u16_s16(w), vnegq_s16(n)), live);
}

// Largest of s[0, n) (n >= 1).
static inline int32_t softmax_row_max(int n, const int32_t* s) {
  const int n4 = n & ~3;
  int32_t row_max = s[0];
  if (n4 > 0) {
    int32x4_t m0 = vld1q_s32(s), m1 = m0;
    int j = 4;
    for (; j + 8 <= n4; j += 8) {
      m0 = vmaxq_s32(m0, vld1q_s32(s + j));
      m1 = vmaxq_s32(m1, vld1q_s32(s + j + 4));
    }
    if (j < n4) m0 = vmaxq_s32(m0, vld1q_s32(s + j));
    row_max = hmax_s32(vmaxq_s32(m0, m1));
  }
  for (int j = n4; j < n; ++j) row_max = s[j] > row_max ? s[j] : row_max;
  return row_max;
}

// Steps 1-4 over s[0, n): e[j] = e_j; returns sum_j e_j.
static inline uint32_t softmax_exp_row(int n, const int32_t* s, int32_t row_max, const SoftmaxExpParams& params,
                                       uint16_t* e) {
  const ExpParams4 x = exp_params4(params);
  const uint32x4_t vmax = vdupq_n_u32(static_cast<uint32_t>(row_max));
  uint32x4_t vsum = vdupq_n_u32(0);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const uint16x8_t ev = exp2_neg_q15_x8(vcombine_u16(exponent_x4(vmax, s + j, x), exponent_x4(vmax, s + j + 4, x)));
    vst1q_u16(e + j, ev);
    vsum = vpadalq_u16(vsum, ev);
  }
  uint32_t sum = hsum_u32(vsum);
  for (; j < n; ++j) {
    e[j] = static_cast<uint16_t>(exp2_neg_q15(softmax_exponent_q12(row_max, s[j], params)));
    sum += e[j];
  }
  return sum;
}

struct Norm4 {
  ProbNormalizer norm;
  uint32x4_t mult, cap;
  int32x4_t neg_shift;
};

static inline Norm4 make_norm4(uint32_t sum) {
  const ProbNormalizer norm = prob_normalizer(sum);
  return Norm4{norm, vdupq_n_u32(norm.multiplier), vdupq_n_u32(static_cast<uint32_t>(kProbMax)),
               vdupq_n_s32(-norm.shift)};
}

// p of 8 e values at e[0, 8).
static inline uint16x8_t normalize_x8(const uint16_t* e, const Norm4& q) {
  const uint16x8_t ev = vld1q_u16(e);
  const uint32x4_t lo = vrshlq_u32(vmulq_u32(vmovl_u16(vget_low_u16(ev)), q.mult), q.neg_shift);
  const uint32x4_t hi = vrshlq_u32(vmulq_u32(vmovl_u16(vget_high_u16(ev)), q.mult), q.neg_shift);
  return vcombine_u16(vmovn_u32(vminq_u32(lo, q.cap)), vmovn_u32(vminq_u32(hi, q.cap)));
}

}  // namespace neon
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_
