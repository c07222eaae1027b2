// qs8_linear on NEON (Armv7-A and AArch64): the driver of
// isa/neon/linear_neon.cc with the widening and int16-pair accumulations.
#include "isa/neon/neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                      int y_stride) {
  qs8_linear_with__neon(qs8_linear_acc__neon, qs8_linear_acc_pairs__neon, rows, out_features,
                        in_features, x, x_stride, w, bias, mult, shift, per_channel, y_zp, y,
                        y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
