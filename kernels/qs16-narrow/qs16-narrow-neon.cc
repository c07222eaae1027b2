// qs16_narrow (requant.h contract 1 on int16 values) on NEON (Armv7-A and
// AArch64), bit-identical to kernels/ref/elementwise.cc.
#include <arm_neon.h>

#include <cstring>

#include "isa/neon/neon_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces)

// 8 values per step: widened to int32, requantize_x4 (SMULL to int64,
// SRSHL by -n: the rounding add and the floor shift, SQXTN) and
// add_zp_sat8's zero point and saturation; the tail through a local block.
void qs16_narrow__neon(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y) {
  const int64x2_t neg_n = neg_n_of(shift);
  const int16x8_t zp16 = vdupq_n_s16(static_cast<int16_t>(zp));
  auto narrow8 = [&](int16x8_t v) {
    return add_zp_sat8(requantize_x4(vmovl_s16(vget_low_s16(v)), mult, neg_n),
                       requantize_x4(vmovl_s16(vget_high_s16(v)), mult, neg_n), zp16);
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) vst1_s8(y + i, narrow8(vld1q_s16(x + i)));
  if (i < n) {
    int16_t xb[8] = {};
    int8_t yb[8];
    std::memcpy(xb, x + i, (n - i) * sizeof(int16_t));
    vst1_s8(yb, narrow8(vld1q_s16(xb)));
    std::memcpy(y + i, yb, n - i);
  }
}

}  // namespace kernels
}  // namespace edgeattn
