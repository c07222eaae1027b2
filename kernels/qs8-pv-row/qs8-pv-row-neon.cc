// qs8_pv_row on NEON (Armv7-A and AArch64).
//
//  - P.V: sum p (v - zp) = sum p v - zp sum p; the softmax's p <= 32767 is an
//    int16 (ref.h: the P.V rows take probabilities as the softmax makes them).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "isa/neon/softmax_neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

void qs8_pv_row__neon(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                      int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp,
                      int8_t* out) {
  uint32_t psum = 0;
  for (int j = 0; j < n; ++j) psum += probs[j];
  const int32x4_t corr =
      vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum));
  const int32x4_t vmult = vdupq_n_s32(pv_mult);
  const int64x2_t neg_n = neg_n_of(pv_shift);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(out_zp));
  int c = 0;
  for (; c + 16 <= v_dim; c += 16) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    const int8_t* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const int8x16_t row = vld1q_s8(vp);
      const int16x8_t lo = vmovl_s8(vget_low_s8(row));
      const int16x8_t hi = vmovl_s8(vget_high_s8(row));
      const int16_t ps = static_cast<int16_t>(probs[j]);  // p <= 32767
      a0 = vmlal_n_s16(a0, vget_low_s16(lo), ps);
      a1 = vmlal_n_s16(a1, vget_high_s16(lo), ps);
      a2 = vmlal_n_s16(a2, vget_low_s16(hi), ps);
      a3 = vmlal_n_s16(a3, vget_high_s16(hi), ps);
    }
    const int32x4_t y0 = requantize_x4(vsubq_s32(a0, corr), vmult, neg_n, neg_n);
    const int32x4_t y1 = requantize_x4(vsubq_s32(a1, corr), vmult, neg_n, neg_n);
    const int32x4_t y2 = requantize_x4(vsubq_s32(a2, corr), vmult, neg_n, neg_n);
    const int32x4_t y3 = requantize_x4(vsubq_s32(a3, corr), vmult, neg_n, neg_n);
    vst1q_s8(out + c, vcombine_s8(add_zp_sat8(y0, y1, zp), add_zp_sat8(y2, y3, zp)));
  }
  for (; c + 8 <= v_dim; c += 8) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
    const int8_t* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const int16x8_t row = vmovl_s8(vld1_s8(vp));
      const int16_t ps = static_cast<int16_t>(probs[j]);  // p <= 32767
      a0 = vmlal_n_s16(a0, vget_low_s16(row), ps);
      a1 = vmlal_n_s16(a1, vget_high_s16(row), ps);
    }
    const int32x4_t y0 = requantize_x4(vsubq_s32(a0, corr), vmult, neg_n, neg_n);
    const int32x4_t y1 = requantize_x4(vsubq_s32(a1, corr), vmult, neg_n, neg_n);
    vst1_s8(out + c, add_zp_sat8(y0, y1, zp));
  }
  for (; c < v_dim; ++c) {
    int32_t acc = 0;
    for (int j = 0; j < n; ++j) {
      acc += static_cast<int32_t>(probs[j]) * (v[static_cast<ptrdiff_t>(j) * v_stride + c] - v_zp);
    }
    out[c] = requantize_s8(acc, pv_mult, pv_shift, out_zp);
  }
}

}  // namespace kernels
}  // namespace edgeattn
