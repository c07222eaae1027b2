// qs8_linear_res with AMX-INT8 tiles (isa/x86/linear_amx.h): TDPBSSD sums, the
// AVX512-VNNI epilogue; rows past the last whole 16 on the AVX512-VNNI tiles.
#include "isa/x86/linear_amx.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_linear_res__amx(int rows, int out_features, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                                const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                                int y_stride) {
  const Job j = {out_features, in_features, x, x_stride, bias, mult, shift, per_channel, y, y_stride};
  linear_amx(j, residual_epilogue(res), rows, w);
}

}  // namespace kernels
}  // namespace edgeattn
