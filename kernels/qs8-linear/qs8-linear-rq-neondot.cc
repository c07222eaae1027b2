// The int8 linear (qs8_linear contract) with SDOT register tiles and the
// requantization fused into them; qs8_linear__neondot calls it.
// Compiled with -march=armv8.2-a+dotprod (isa/neon/kernels.cmake) and reached
// only after HWCAP_ASIMDDP was seen (cpu_features_arm.cc). Deliberately
// self-contained: it includes no project header with inline functions
// (only isa/neondot/, which has none outside its own SDOT code), so no
// vague-linkage helper compiled with dotprod instructions can be shared
// with, and picked by the linker for, the baseline NEON path.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/neondot/sdot.h"
#include "isa/neondot/linear_rq_sdot.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

void qs8_linear_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  const OutS8 out{vdupq_n_s16(static_cast<int16_t>(y_zp))};
  linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
