// qs16_narrow (requant.h contract 1 on int16 values) on the Cortex-M DSP
// extension (DSP-only builds), bit-identical to kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <cstdint>

#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

// Per value requant_cm.h's form for n = 31 - shift >= 33 (the stream is
// some 2^8 times finer than an int8 input, so n is near 39), its constants
// formed once: SMMLA onto the rounding term, ASR by n - 32 (requantize_high),
// then to_s8 (SSAT #10, the zero point, SSAT #8); the reference's 64-bit
// product and shift cost about three times that at -Os. Other shifts, or a
// zero point outside int8 (to_s8's premise), take the reference.
void qs16_narrow__dsp(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y) {
  const int32_t bits = 31 - shift;
  if (bits < 33 || zp < -128 || zp > 127) {
    qs16_narrow__ref(n, x, mult, shift, zp, y);
    return;
  }
  const int32_t round = int32_t{1} << (bits - 33), down = bits - 32;
  for (size_t i = 0; i < n; ++i) y[i] = cm::to_s8(cm::requantize_high(x[i], mult, round, down), zp);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
