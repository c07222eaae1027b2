// qs8_linear with AVX2 (isa/x86/linear_avx2.cc).
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear__avx2(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  qs8_linear_with__avx2(qs8_linear_acc__avx2, rows, out_features, in_features, x, x_stride, w,
                        bias, mult, shift, per_channel, y_zp, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
