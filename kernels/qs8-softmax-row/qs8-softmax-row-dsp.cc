// qs8_softmax_row on the Cortex-M DSP extension (DSP-only builds): steps 1-4
// are qs8_softmax_exp_row__dsp (its file describes both), step 5 here on
// pairs of probabilities with SMLAWB / SMLAWT.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstring>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void qs8_softmax_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer_cm(qs8_softmax_exp_row__dsp(n, scores, mult, shift, probs));
  int j = 0;
  if (norm.shift >= 17) {
    const int32_t m = static_cast<int32_t>(norm.multiplier << (32 - norm.shift));
    for (; j + 2 <= n; j += 2) {
      int32_t pair;
      std::memcpy(&pair, probs + j, 4);
      int32_t lo, hi;
      __asm__("smlawb %0, %1, %2, %3" : "=r"(lo) : "r"(m), "r"(pair), "r"(1 << 15));
      __asm__("smlawt %0, %1, %2, %3" : "=r"(hi) : "r"(m), "r"(pair), "r"(1 << 15));
      __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(pair) : "r"(hi), "r"(lo));
      std::memcpy(probs + j, &pair, 4);
    }
  }
  for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
