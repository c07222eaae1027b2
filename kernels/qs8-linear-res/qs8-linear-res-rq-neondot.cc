// qs8_linear_rq__neondot's register tiles with the residual epilogue
// (qs8_linear_res contract); qs8_linear_res__neondot calls it.
// Compiled with -march=armv8.2-a+dotprod (isa/neon/kernels.cmake) and reached
// only after HWCAP_ASIMDDP was seen (cpu_features_arm.cc). Deliberately
// self-contained: it includes no project header with inline functions
// (only isa/neondot/, which has none outside its own SDOT code), so no
// vague-linkage helper compiled with dotprod instructions can be shared
// with, and picked by the linker for, the baseline NEON path.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/neondot/sdot.h"
#include "isa/neondot/linear_rq_sdot.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

void qs8_linear_res_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                                const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                int per_channel, const int8_t* res, int res_stride, int32_t res_mult,
                                int32_t res_shift, int32_t res_a_zp, int32_t res_y_zp, int32_t res_offset,
                                int8_t* y, int y_stride) {
  int32_t any_neg = 0;  // sign bit: some s < 0 (an OR, which GCC vectorizes)
  for (int i = 0; i < (per_channel ? out_features : 1); ++i) any_neg |= shift[i];
  if (res_shift == 16 && any_neg >= 0) {
    OutRes16 out;
    for (int l = 0; l < 4; ++l) out.k[0][l] = res_mult;
    for (int l = 0; l < 16; ++l) reinterpret_cast<int8_t*>(out.k[1])[l] = static_cast<int8_t>(res_a_zp);
    for (int l = 0; l < 8; ++l) reinterpret_cast<int16_t*>(out.k[2])[l] = static_cast<int16_t>(res_y_zp);
    out.res = res;
    out.res_stride = res_stride;
    linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
    return;
  }
  OutRes out;
  for (int l = 0; l < 4; ++l) {
    out.k[0][l] = res_mult;
    out.k[1][l] = res_offset;
    out.k[2][l] = -res_shift;
  }
  out.res = res;
  out.res_stride = res_stride;
  linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
