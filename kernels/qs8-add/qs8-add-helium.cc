// qs8_add (requant.h's add contract) on Helium, bit-identical to
// kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstdint>

namespace edgeattn {
namespace kernels {

// 4 values per step, tail-predicated, in int32 lanes: the contract's sum
// with the zero points folded into its constant, C = 2^(n-1) + zp_y 2^n -
// A zp_x - B zp_r (|C| < 2^30; every partial sum is the exact one's, below
// 2^31), by two VMLA by scalar; VSHL by -n (a floor shift); the two
// saturating narrows (sat8(sat16(v)) = sat8(v)); VSTRB.32. y may be x or r:
// a step loads its lanes before it stores them.
void qs8_add__helium(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y) {
  const int32_t c = (int32_t{1} << (p.shift - 1)) + p.zp_y * (int32_t{1} << p.shift) - p.a * p.zp_x - p.b * p.zp_r;
  const int32x4_t cv = vdupq_n_s32(c);
  for (size_t i = 0; i < n; i += 4) {
    const mve_pred16_t q = vctp32q(static_cast<uint32_t>(n - i));
    int32x4_t v = vmlaq_n_s32(cv, vldrbq_z_s32(x + i, q), p.a);
    v = vshlq_r_s32(vmlaq_n_s32(v, vldrbq_z_s32(r + i, q), p.b), -p.shift);
    const int16x8_t h = vqmovnbq_s32(vreinterpretq_s16_s32(v), v);
    vstrbq_p_s32(y + i, vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s16(h), h)), q);
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
