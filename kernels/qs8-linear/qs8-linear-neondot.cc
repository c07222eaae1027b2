// qs8_linear of the Armv8.2 dot-product path (AArch64): qs8_linear_rq__neondot.
// Compiled with the baseline flags: the driver, requantization, softmax and
// P.V are the NEON ones; only the int8 dot-product loops are SDOT code
// (isa/neondot/sdot.h), reached after cpu_supports(KernelPath::kNeonDot).
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neondot/sdot.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear__neondot(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                         int y_stride) {
  qs8_linear_rq__neondot(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, y_zp,
                         y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
