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
  // Whole sixes of rows in six-row passes (linear_six) when every channel
  // is in residual_rmul_form (the residual projections' shifts >= -1), the
  // rest in pairs.
  const int six = rows >= 6 && EpilogueResidual::six_ready(out_features, mult, shift, per_channel) ? rows / 6 * 6 : 0;
  if (six != 0) {
    linear_six(six, out_features, in_features, x, x_stride, w, bias, mult, shift, 0, &res, y, y_stride);
    if (six == rows) return;
  }
  const QS8Residual rest{res.res + static_cast<ptrdiff_t>(six) * res.res_stride, res.res_stride, res.term};
  return linear_res_aligned(rows - six, out_features, in_features, x + static_cast<ptrdiff_t>(six) * x_stride,
                            x_stride, w, bias, mult, shift, per_channel, rest,
                            y + static_cast<ptrdiff_t>(six) * y_stride, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
