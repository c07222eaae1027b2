// qs8_add16 (requant.h's add16 contract) on Helium, bit-identical to
// kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstdint>

namespace edgeattn {
namespace kernels {

// 4 values per step, tail-predicated, in int32 lanes, the 37-bit sum split
// as in qs8-add16-avx2.cc (r = 2^8 rh + rl: H = B rh, L = A (x - zp_x) +
// B rl + 2^(n-1), with A zp_x folded into L's constant; n >= 8:
// (H + (L >> 8)) >> (n - 8); n < 8: clamp(H, +-2^23) 2^(8-n) + (L >> n)),
// which gives the contract's 64-bit integers; VQMOVNB.S32 (sat16) and
// VSTRH.32. y may be r: a step loads its lanes before it stores them.
void qs8_add16__helium(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  const int32x4_t c = vdupq_n_s32((int32_t{1} << (p.shift - 1)) - p.a * p.zp_x);
  const int32x4_t low8 = vdupq_n_s32(0xFF);
  const bool wide = p.shift >= 8;
  const int32_t hmax = int32_t{1} << 23;
  for (size_t i = 0; i < n; i += 4) {
    const mve_pred16_t q = vctp32q(static_cast<uint32_t>(n - i));
    const int32x4_t rv = vldrhq_z_s32(r + i, q);
    const int32x4_t h = vmulq_n_s32(vshrq_n_s32(rv, 8), p.b);
    const int32x4_t l = vmlaq_n_s32(vmlaq_n_s32(c, vldrbq_z_s32(x + i, q), p.a), vandq_s32(rv, low8), p.b);
    const int32x4_t v = wide ? vshlq_r_s32(vaddq_s32(h, vshrq_n_s32(l, 8)), 8 - p.shift)
                             : vaddq_s32(vshlq_r_s32(vmaxq_s32(vminq_s32(h, vdupq_n_s32(hmax)), vdupq_n_s32(-hmax)),
                                                     8 - p.shift),
                                         vshlq_r_s32(l, -p.shift));
    vstrhq_p_s32(y + i, vreinterpretq_s32_s16(vqmovnbq_s32(vreinterpretq_s16_s32(v), v)), q);
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
