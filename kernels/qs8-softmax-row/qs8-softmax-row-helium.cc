// qs8_softmax_row on Helium: steps 1-4 are qs8_softmax_exp_row__helium (its
// file describes both), step 5 in 8 lanes of 16 bits here.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {
// Step 5 on 8 values of e (b = norm.shift). b >= 17: the
// high halves (VMULH) and one rounding shift by b - 16. Else b is 15 or 16
// (the sum is at least 32767, the row maximum's e): VRMULH.U16 of e 2^(16-b)
// (at most 2 e < 2^16) and m is (e m 2^(16-b) + 2^15) >> 16 =
// (e m + 2^(b-1)) >> b, then the 32767 cap.
__attribute__((always_inline)) inline uint16x8_t normalize_x8(uint16x8_t e, uint16x8_t m, int32_t b) {
  if (b >= 17) return vrshlq_n_u16(vmulhq_u16(e, m), 16 - b);
  return vminq_u16(vrmulhq_u16(vshlq_r_u16(e, 16 - b), m), vdupq_n_u16(static_cast<uint16_t>(kProbMax)));
}
}  // namespace

void qs8_softmax_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer_cm(qs8_softmax_exp_row__helium(n, scores, mult, shift, probs));
  const uint16x8_t m = vdupq_n_u16(static_cast<uint16_t>(norm.multiplier));
  int j = 0;
  for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8(vld1q_u16(probs + j), m, norm.shift));
  if (j < n) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
    vstrhq_p_u16(probs + j, normalize_x8(vldrhq_z_u16(probs + j, p), m, norm.shift), p);
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
