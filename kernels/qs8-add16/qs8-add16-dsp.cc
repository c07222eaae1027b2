// qs8_add16 (requant.h's add16 contract) on the Cortex-M DSP extension
// (DSP-only builds), bit-identical to kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstdint>

namespace edgeattn {
namespace kernels {

// Per value in 32-bit registers, the sum split as in qs8-add16-avx2.cc
// (r = 2^8 rh + rl: H = B rh, L = A (x - zp_x) + B rl + 2^(n-1), A zp_x
// folded into L's constant; n >= 8: (H + (L >> 8)) >> (n - 8); n < 8:
// clamp(H, +-2^23) 2^(8-n) + (L >> n)), then SSAT #16: the contract's
// 64-bit integers without the reference's 64-bit shift.
void qs8_add16__dsp(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  const int32_t c = (int32_t{1} << (p.shift - 1)) - p.a * p.zp_x;
  if (p.shift >= 8) {
    const int32_t down = p.shift - 8;
    for (size_t i = 0; i < n; ++i) {
      const int32_t rv = r[i];
      const int32_t l = c + p.a * x[i] + p.b * (rv & 0xFF);
      y[i] = static_cast<int16_t>(__ssat((p.b * (rv >> 8) + (l >> 8)) >> down, 16));
    }
    return;
  }
  const int32_t up = 8 - p.shift, hmax = int32_t{1} << 23;
  for (size_t i = 0; i < n; ++i) {
    const int32_t rv = r[i];
    int32_t h = p.b * (rv >> 8);
    h = h > hmax ? hmax : (h < -hmax ? -hmax : h);
    const int32_t l = c + p.a * x[i] + p.b * (rv & 0xFF);
    y[i] = static_cast<int16_t>(__ssat(h * (int32_t{1} << up) + (l >> p.shift), 16));
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
