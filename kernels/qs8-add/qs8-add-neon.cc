// qs8_add (requant.h's add contract) on NEON (Armv7-A and AArch64),
// bit-identical to kernels/ref/elementwise.cc.
#include <arm_neon.h>

#include <cstring>

#include "microkernels.h"

namespace edgeattn {
namespace kernels {

// 8 values per step: x - zp_x and r - zp_r in int16 (|.| <= 255), the
// contract's sum in int32 lanes (MUL / MLA by scalar; every term fits
// int32), SSHL by -n (the floor shift; the rounding term is in the sum),
// then SQXTN twice (int32 -> int16 -> int8 saturates as saturate_s8).
void qs8_add__neon(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y) {
  const int16x8_t zp_x = vdupq_n_s16(static_cast<int16_t>(p.zp_x));
  const int16x8_t zp_r = vdupq_n_s16(static_cast<int16_t>(p.zp_r));
  const int32x4_t c = vdupq_n_s32((int32_t{1} << (p.shift - 1)) + p.zp_y * (int32_t{1} << p.shift));
  const int32x4_t neg_n = vdupq_n_s32(-p.shift);
  auto add8 = [&](int8x8_t xv, int8x8_t rv) {
    const int16x8_t dx = vsubq_s16(vmovl_s8(xv), zp_x);
    const int16x8_t dr = vsubq_s16(vmovl_s8(rv), zp_r);
    int32x4_t lo = vmlaq_n_s32(vmlaq_n_s32(c, vmovl_s16(vget_low_s16(dx)), p.a), vmovl_s16(vget_low_s16(dr)), p.b);
    int32x4_t hi = vmlaq_n_s32(vmlaq_n_s32(c, vmovl_s16(vget_high_s16(dx)), p.a), vmovl_s16(vget_high_s16(dr)), p.b);
    lo = vshlq_s32(lo, neg_n);
    hi = vshlq_s32(hi, neg_n);
    return vqmovn_s16(vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi)));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) vst1_s8(y + i, add8(vld1_s8(x + i), vld1_s8(r + i)));
  if (i < n) {
    int8_t xb[8] = {}, rb[8] = {}, yb[8];
    std::memcpy(xb, x + i, n - i);
    std::memcpy(rb, r + i, n - i);
    vst1_s8(yb, add8(vld1_s8(xb), vld1_s8(rb)));
    std::memcpy(y + i, yb, n - i);
  }
}

}  // namespace kernels
}  // namespace edgeattn
