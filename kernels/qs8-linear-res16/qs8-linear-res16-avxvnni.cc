// qs8_linear_res16 of the avxvnni path: the AVX2 driver with contract 5c's
// int16 epilogue and the VPDPBUSD accumulation (isa/x86/linear_avxvnni.cc).
// No VNNI instruction here.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res16__avxvnni(int rows, int out_features, int in_features, const int8_t* x,
                               int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                               const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                               int y_stride) {
  qs8_linear_res16_with__avx2(qs8_linear_acc__avxvnni, rows, out_features, in_features, x, x_stride, w,
                              bias, mult, shift, per_channel, res, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
