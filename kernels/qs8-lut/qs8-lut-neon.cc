// qs8_lut (requant.h contract 6) on NEON (Armv7-A and AArch64),
// bit-identical to kernels/ref/elementwise.cc.
#include <arm_neon.h>

#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

// y = table[x + 128] with TBL/VTBL over the 256-byte table in 64-byte (AArch64: 4
// registers) or 32-byte (Armv7: VTBL's 4 d registers) slices: an index past a
// slice gives 0 (TBL) or leaves the lane (TBX), so each slice adds its bytes.
// AArch64 indexes by x's byte read as unsigned, u = x + 128 mod 256: slice s
// covers u in [64 s, 64 s + 64), i.e. table[(64 s) ^ 128 ...], so no EOR;
// 64 bytes a step (one LD1 and one ST1 of four registers): 7 instructions
// per 16 bytes.
void qs8_lut__neon(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                   int y_stride) {
#if defined(__aarch64__)
  uint8x16x4_t t[4];
  for (int s = 0; s < 4; ++s) t[s] = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(table) + 64 * (s ^ 2));
  const uint8x16_t step = vdupq_n_u8(64);
  auto lut16 = [&](uint8x16_t u) {
    uint8x16_t out = vqtbl4q_u8(t[0], u);
    uint8x16_t idx = vsubq_u8(u, step);
    out = vqtbx4q_u8(out, t[1], idx);
    idx = vsubq_u8(idx, step);
    out = vqtbx4q_u8(out, t[2], idx);
    idx = vsubq_u8(idx, step);
    return vqtbx4q_u8(out, t[3], idx);
  };
#else
  uint8x8x4_t t[8];
  for (int s = 0; s < 8; ++s) {
    for (int k = 0; k < 4; ++k) t[s].val[k] = vld1_u8(reinterpret_cast<const uint8_t*>(table) + 32 * s + 8 * k);
  }
  const uint8x8_t step = vdup_n_u8(32), bias = vdup_n_u8(128);
  auto lut8 = [&](uint8x8_t v) {
    uint8x8_t idx = veor_u8(v, bias);
    uint8x8_t out = vtbl4_u8(t[0], idx);
    for (int s = 1; s < 8; ++s) {
      idx = vsub_u8(idx, step);
      out = vtbx4_u8(out, t[s], idx);
    }
    return out;
  };
  auto lut16 = [&](uint8x16_t v) { return vcombine_u8(lut8(vget_low_u8(v)), lut8(vget_high_u8(v))); };
#endif
  for (int r = 0; r < rows; ++r) {
    const uint8_t* xr = reinterpret_cast<const uint8_t*>(x) + static_cast<ptrdiff_t>(r) * x_stride;
    uint8_t* yr = reinterpret_cast<uint8_t*>(y) + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
#if defined(__aarch64__)
    for (; i + 64 <= n; i += 64) {
      uint8x16x4_t v = vld1q_u8_x4(xr + i);
      for (int k = 0; k < 4; ++k) v.val[k] = lut16(v.val[k]);
      vst1q_u8_x4(yr + i, v);
    }
#endif
    for (; i + 16 <= n; i += 16) vst1q_u8(yr + i, lut16(vld1q_u8(xr + i)));
    if (i < n) {
      uint8_t xb[16] = {}, yb[16];
      std::memcpy(xb, xr + i, n - i);
      vst1q_u8(yb, lut16(vld1q_u8(xb)));
      std::memcpy(yr + i, yb, n - i);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
