// qs8_additive on the Cortex-M DSP extension: the reference driver
// (qs8_additive_rows, with its softmax) over this path's score row and
// weighted sum (qs8_pv_row__dsp).
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

// One query row's additive scores: the reference's loop
// (qs8_additive_score_row__ref) with 32-bit requantizations, inline. The
// pre-tanh step's multiplier is usually above 1/2 (1.61 in the bundled
// model, n = 30): without coverage it is one shift and one SMMULR per
// feature, otherwise requant_cm.h's requantize().
void qs8_additive_score_row__dsp(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores) {
  const int32_t n = 31 - a.pre_shift;
  if (a.coverage == nullptr && n >= 11 && n <= 31) {
    // Without coverage pre = (qp - zq) + (kp - zk) lies in [-510, 510], so
    // pre * 2^(32 - n) fits int32 and SMMULR of it by M, floor((pre M
    // 2^(32-n) + 2^31) / 2^32), is requant.h's floor((pre M + 2^(n-1)) / 2^n)
    // in two instructions (the Helium row's VRMULH form, one lane).
    const int32_t up = 32 - n;
    const int32_t zsum = a.qp_zp + a.kp_zp;
    for (int j = 0; j < limit; ++j) {
      const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      int32_t acc = 0;
      for (int c = 0; c < a.attn_dim; ++c) {
        int32_t y;
        const uint32_t scaled = static_cast<uint32_t>(qp[c] + kp[c] - zsum) << up;
        __asm__("smmulr %0, %1, %2" : "=r"(y) : "r"(scaled), "r"(a.pre_mult));
        const int8_t index = cm::to_s8(y, a.pre_zp);
        acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
      }
      scores[j] = acc;
    }
    return;
  }
  for (int j = 0; j < limit; ++j) {
    const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
    int32_t acc = 0;
    const int32_t cj = a.coverage != nullptr ? a.coverage[j] : 0;
    for (int c = 0; c < a.attn_dim; ++c) {
      int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
      if (a.coverage != nullptr) pre += cm::requantize(a.cov_w[c] * cj, a.cov_mult, a.cov_shift);
      const int32_t y = cm::requantize(pre, a.pre_mult, a.pre_shift);
      const int8_t index = cm::to_s8(y, a.pre_zp);
      acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
    }
    scores[j] = acc;
  }
}

void qs8_additive__dsp(const QS8AdditiveArgs& a) {
  qs8_additive_rows({qs8_additive_score_row__dsp, qs8_pv_row__dsp}, a);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
