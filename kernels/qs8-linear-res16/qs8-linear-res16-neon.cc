// qs8_linear_res16 (requant.h contract 5c, the 16-bit residual stream) on
// NEON: qs8_linear__neon's accumulation (widening, or int16 pairs where the
// driver finds them exact) and requantization with the int16 epilogue
// (isa/neon/linear_neon.cc).
#include "isa/neon/neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res16__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                            int y_stride) {
  qs8_linear_res16_with__neon(qs8_linear_acc__neon, qs8_linear_acc_pairs__neon, rows, out_features,
                              in_features, x, x_stride, w, bias, mult, shift, per_channel, res, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
