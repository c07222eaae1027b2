// qs8_linear with Helium (M-profile Vector Extension): VMLADAVA.S8 multiplies
// 16 int8 pairs and adds all products to a 32-bit scalar accumulator; the
// tail uses a VCTP8 predicate (inactive lanes load as zero and add nothing).
// The exact int32 sum equals the reference's, so results are bit-identical.
#include "cortex-m/cortexm_kernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstddef>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void qs8_linear__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                        const int8_t* w, int w_stride, const int32_t* bias, const int32_t* mult,
                        const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  for (int m = 0; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n = 0; n < out_features; ++n) {
      const int8_t* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      int32_t acc = bias[n];
      int k = 0;
      for (; k + 16 <= in_features; k += 16) {
        acc = vmladavaq_s8(acc, vldrbq_s8(xr + k), vldrbq_s8(wr + k));
      }
      if (k < in_features) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(in_features - k));
        acc = vmladavaq_p_s8(acc, vldrbq_z_s8(xr + k, p), vldrbq_z_s8(wr + k, p), p);
      }
      const int c = per_channel ? n : 0;
      y[static_cast<ptrdiff_t>(m) * y_stride + n] = requantize_s8(acc, mult[c], shift[c], y_zp);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
