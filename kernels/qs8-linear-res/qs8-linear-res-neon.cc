// qs8_linear_res (requant.h contract 5b) on NEON: qs8_linear__neon's
// accumulation and requantization with the residual epilogue
// (isa/neon/linear_neon.cc).
#include "isa/neon/neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, const int32_t* bias, const int32_t* mult,
                          const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                          int y_stride) {
  qs8_linear_res_with__neon(qs8_linear_acc__neon, qs8_linear_acc_pairs__neon, rows, out_features,
                            in_features, x, x_stride, w, bias, mult, shift, per_channel, res, y,
                            y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
