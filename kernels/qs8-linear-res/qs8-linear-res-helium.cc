// qs8_linear_res (requant.h contract 5b) on Helium: qs8_linear__helium's
// passes with the residual between the pass and the stores
// (isa/cortex-m/linear_helium.h); unaligned w, and a multiplier below 2^30
// at a shift >= -1 (never from quantize_multiplier), take the reference.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "isa/cortex-m/linear_helium.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_helium;  // NOLINT(build/namespaces)

// The alignment test sits in front of the kernel's frame setup (inline, GCC
// builds the whole frame first); the calls are tail branches.
void qs8_linear_res__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                            int y_stride) {
  if ((reinterpret_cast<uintptr_t>(w) & 3u) != 0 || !EpilogueResidual::ready(out_features, mult, shift, per_channel)) {
    return qs8_linear_res__ref(rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                               per_channel, res, y, y_stride);
  }
  return linear_res_aligned(rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                            per_channel, res, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
