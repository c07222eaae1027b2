// qs8_additive on Helium: the reference driver (qs8_additive_rows, with
// its softmax) over this path's score row and weighted sum.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

// One query row's additive scores, 4 features per step: the pre-tanh sums in
// 32-bit lanes, their requantization as one vector, the tanh table read by a
// byte gather at index + 128, and VMLADAVA with v into the key's score. Without coverage
// pre = (qp - zq) + (kp - zk) lies in [-510, 510] (int8 values and zero
// points), so for n = 31 - pre_shift in [11, 31] pre * 2^(32 - n) fits int32
// and VRMULH of it by M is floor((pre M 2^(32-n) + 2^31) / 2^32) =
// floor((pre M + 2^(n-1)) / 2^n), requant.h's integer; n = 32 is VRMULH
// itself and n >= 33 requant_cm.h's VMULH form. Rows with coverage (its term
// is not bounded that way) or n < 11 take the DSP row (Helium requires the
// DSP extension).
void qs8_additive_score_row__helium(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores) {
  const int32_t n = 31 - a.pre_shift;
  if (a.coverage != nullptr || n < 11) {
    qs8_additive_score_row__dsp(a, qp, limit, scores);
    return;
  }
  const int32x4_t mult = vdupq_n_s32(a.pre_mult);
  const int32_t zsum = a.qp_zp + a.kp_zp;
  for (int j = 0; j < limit; ++j) {
    const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
    int32_t acc = 0;
    for (int c = 0; c < a.attn_dim; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(a.attn_dim - c));
      const int32x4_t pre = vsubq_n_s32(vaddq_s32(vldrbq_z_s32(qp + c, p), vldrbq_z_s32(kp + c, p)), zsum);
      int32x4_t y;
      if (n >= 33) {
        y = vaddq_n_s32(vmulhq_s32(pre, mult), int32_t{1} << (n - 33));
        y = vshlq_s32(y, vdupq_n_s32(32 - n));
      } else {
        y = vrmulhq_s32(vshlq_s32(pre, vdupq_n_s32(32 - n)), mult);
      }
      y = vaddq_n_s32(vmaxq_s32(vminq_s32(y, vdupq_n_s32(512)), vdupq_n_s32(-512)), a.pre_zp);
      const int32x4_t index = vmaxq_s32(vminq_s32(y, vdupq_n_s32(127)), vdupq_n_s32(-128));
      const int32x4_t t = vldrbq_gather_offset_z_s32(a.tanh_table, vreinterpretq_u32_s32(vaddq_n_s32(index, 128)), p);
      acc = vmladavaq_s32(acc, t, vldrbq_z_s32(a.v_w + c, p));
    }
    scores[j] = acc;
  }
}

void qs8_additive__helium(const QS8AdditiveArgs& a) {
  qs8_additive_rows({qs8_additive_score_row__helium, qs8_pv_row__helium}, a);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
