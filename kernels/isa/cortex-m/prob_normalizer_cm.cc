// requant.h's prob_normalizer for the Cortex-M softmax rows (DSP and
// Helium), one copy for both.
#include "isa/cortex-m/cortexm.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// requant.h's prob_normalizer with 32-bit divisions: m = floor((2^(b+15) -
// 1) / sum). For b <= 16 the numerator fits 32 bits. Else, scaled by
// 2^(32-b) (the same quotient), m = floor((2^47 - 2^(32-b)) / s) with
// s = sum 2^(32-b) in [2^31, 2^32): an estimate from one UDIV by the top 16
// bits of s (within a few units of m), then corrected until the remainder
// lies in [0, s), with 64-bit products (UMULL) and no 64-bit division
// (libgcc's took about 120 instructions per row).
ProbNormalizer prob_normalizer_cm(uint32_t sum) {
  const int b = bit_length_u32(sum);
  if (b <= 16) return ProbNormalizer{((1u << (b + 15)) - 1) / sum, b};
  const uint32_t s = sum << (32 - b);
  const int64_t num = (int64_t{1} << 47) - (int64_t{1} << (32 - b));
  uint32_t m = (1u << 31) / ((s >> 16) + 1);
  int64_t r = num - static_cast<int64_t>(uint64_t{m} * s);
  while (r < 0) --m, r += s;
  while (r >= static_cast<int64_t>(s)) ++m, r -= s;
  return ProbNormalizer{m, b};
}

}  // namespace kernels
}  // namespace edgeattn
#endif
