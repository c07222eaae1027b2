// qs8_linear_res of the Armv8.2 dot-product path (AArch64): qs8_linear_res_rq__neondot.
// Compiled with the baseline flags: the driver, requantization, softmax and
// P.V are the NEON ones; only the int8 dot-product loops are SDOT code
// (isa/neondot/sdot.h), reached after cpu_supports(KernelPath::kNeonDot).
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neondot/sdot.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res__neondot(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                             const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                             int y_stride) {
  qs8_linear_res_rq__neondot(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                             res.res, res.res_stride, res.term.mult, res.term.shift, res.term.a_zp, res.term.y_zp,
                             residual_offset(res.term), y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
