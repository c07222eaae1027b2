// qs8_softmax_row on NEON (Armv7-A and AArch64): qs8_softmax_exp_row__neon
// and the normalizer on 32-bit lanes (isa/neon/softmax_neon.h).
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

void qs8_softmax_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const Norm4 norm = make_norm4(qs8_softmax_exp_row__neon(n, scores, mult, shift, probs));
  int j = 0;
  if (norm.hi16) {
    for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8<true>(vld1q_u16(probs + j), norm));
  } else {
    for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8<false>(vld1q_u16(probs + j), norm));
  }
  for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm.norm);
}

}  // namespace kernels
}  // namespace edgeattn
