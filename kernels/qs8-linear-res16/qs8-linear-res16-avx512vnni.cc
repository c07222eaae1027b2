// qs8_linear_res16 (contract 5c, the 16-bit residual stream) on zmm: the
// AVX512-VNNI GEMM tiles with the int16 epilogue (isa/x86/linear_avx512vnni.h).
#include "isa/x86/linear_avx512vnni.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res16__avx512vnni(int rows, int out_features, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                                  const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                                  int y_stride) {
  const Job j = {out_features, in_features, x, x_stride, bias, mult, shift, per_channel, nullptr, 0};
  linear(j, residual16_epilogue(res, y, y_stride), rows, w);
}

}  // namespace kernels
}  // namespace edgeattn
