// requantize_s8() of requant.h in 32-bit instructions on Cortex-M cores with
// the DSP extension (M4, M7, M33, M55). Include only from the Cortex-M kernel
// files, inside their __ARM_FEATURE_DSP sections.
//
// requant.h computes (acc M + 2^(n-1)) >> n with a 64-bit product, n = 31 -
// shift; at -Os on Armv7E-M that is a long multiply, a 64-bit add and a
// variable 64-bit shift per output. When n >= 32 (a multiplier below 1/2:
// the projections and the weighted sums of real models) the same integer
// comes from the high word of the product: SMMLA adds its accumulator
// operand times 2^32, so with the accumulator 2^(n-33) it gives
// floor((acc M + 2^(n-1)) / 2^32), and the arithmetic shift by n - 32 then
// gives floor((acc M + 2^(n-1)) / 2^n) (nested floors). For n = 32 SMMLAR
// adds the rounding 2^31 itself. |acc M| < 2^62, so the result is below
// 2^30 in magnitude and requant.h's saturation to int32 cannot bind. Other
// shifts take requant.h's function.
//
// Out of line on purpose: inlined at its seven call sites it cost 600 B
// (M4) / 870 B (M55) more flash for no measurable change in instructions
// (docs/footprint.md).
#ifndef EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_
#define EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_

#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace cm {

__attribute__((noinline)) inline int8_t requantize_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                                           int32_t zp) {
  const int32_t n = 31 - shift;
  int32_t y;
  if (n >= 33) {
    int32_t hi;
    __asm__("smmla %0, %1, %2, %3" : "=r"(hi) : "r"(acc), "r"(multiplier), "r"(int32_t{1} << (n - 33)));
    y = hi >> (n - 32);
  } else if (n == 32) {
    __asm__("smmlar %0, %1, %2, %3" : "=r"(y) : "r"(acc), "r"(multiplier), "r"(0));
  } else {
    return kernels::requantize_s8(acc, multiplier, shift, zp);
  }
  const int32_t clamped = y < -512 ? -512 : (y > 512 ? 512 : y);
  return saturate_s8(clamped + zp);
}

}  // namespace cm
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_
