// qs8_add16 (requant.h's add16 contract) on NEON (Armv7-A and AArch64),
// bit-identical to kernels/ref/elementwise.cc.
#include <arm_neon.h>

#include <cstring>

#include "microkernels.h"

namespace edgeattn {
namespace kernels {

// 8 values per step: A (x - zp_x) in int32 (below 2^29), widened to int64
// and B r added by SMLAL (exact, below 2^37), SRSHL by -n (adds 2^(n-1),
// then the floor shift: the contract's rounding), then SQXTN to int32 and
// to int16 (saturating twice saturates as sat16).
void qs8_add16__neon(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  const int16x8_t zp_x = vdupq_n_s16(static_cast<int16_t>(p.zp_x));
  const int32x2_t b = vdup_n_s32(p.b);
  const int64x2_t neg_n = vdupq_n_s64(-static_cast<int64_t>(p.shift));
  auto add4 = [&](int16x4_t dx, int16x4_t rv) {
    const int32x4_t t = vmulq_n_s32(vmovl_s16(dx), p.a);
    const int32x4_t r32 = vmovl_s16(rv);
    int64x2_t lo = vmlal_s32(vmovl_s32(vget_low_s32(t)), vget_low_s32(r32), b);
    int64x2_t hi = vmlal_s32(vmovl_s32(vget_high_s32(t)), vget_high_s32(r32), b);
    lo = vrshlq_s64(lo, neg_n);
    hi = vrshlq_s64(hi, neg_n);
    return vqmovn_s32(vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi)));
  };
  auto add8 = [&](int8x8_t xv, int16x8_t rv) {
    const int16x8_t dx = vsubq_s16(vmovl_s8(xv), zp_x);
    return vcombine_s16(add4(vget_low_s16(dx), vget_low_s16(rv)), add4(vget_high_s16(dx), vget_high_s16(rv)));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) vst1q_s16(y + i, add8(vld1_s8(x + i), vld1q_s16(r + i)));
  if (i < n) {
    int8_t xb[8] = {};
    int16_t rb[8] = {}, yb[8];
    std::memcpy(xb, x + i, n - i);
    std::memcpy(rb, r + i, (n - i) * sizeof(int16_t));
    vst1q_s16(yb, add8(vld1_s8(xb), vld1q_s16(rb)));
    std::memcpy(y + i, yb, (n - i) * sizeof(int16_t));
  }
}

}  // namespace kernels
}  // namespace edgeattn
