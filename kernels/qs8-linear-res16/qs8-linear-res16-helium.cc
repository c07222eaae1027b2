// qs8_linear_res16 (requant.h contract 5c, the 16-bit residual stream) on
// Helium: qs8_linear_res__helium's passes (isa/cortex-m/linear_helium.h)
// with an int16 residual epilogue, as qs8_linear_res16__dsp reuses the DSP
// tile with StoreRes16. Exactness: the int32 sums are the reference's exact
// dot products in another order; requantize() is formed as for contract 5b
// (the shift <= -2 lanes exactly by VMULH + rounding term + VSHL, the
// residual_rmul_form channels by VQSHL + VRMULH: exact, or beyond +-2^29 on
// the reference's side with |y| <= 2^30); then A a + 2^(n-1) (VMLAS, |A a|
// <= 2^28), the sum (|sum| < 2^31), VSHL by -n and VQMOVNB.S32 (sat16). 5c's
// clamp to +-2^29 is left out: a term beyond it saturates the output to the
// int16 end the clamped term gives (requant.h's 5c bounds), so every output
// is residual_epilogue_s16's. Each output's residual halfword is read
// before that output is stored, so y may be the residual (in place).
// Unaligned w, and a multiplier below 2^30 at a shift >= -1 (never from
// quantize_multiplier), take the reference.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "isa/cortex-m/linear_helium.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_helium;  // NOLINT(build/namespaces)

void qs8_linear_res16__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                              const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                              int per_channel, const QS16Residual& res, int16_t* y, int y_stride) {
  if ((reinterpret_cast<uintptr_t>(w) & 3u) != 0 || !EpilogueResidual::ready(out_features, mult, shift, per_channel)) {
    return qs8_linear_res16__ref(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
                                 res, y, y_stride);
  }
  // Whole sixes of rows in six-row passes when every channel is in
  // residual_rmul_form (the converter's residual projections), the rest in
  // pairs, as qs8_linear_res__helium.
  const int six = rows >= 6 && EpilogueResidual::six_ready(out_features, mult, shift, per_channel) ? rows / 6 * 6 : 0;
  if (six != 0) {
    linear_six_res16(six, out_features, in_features, x, x_stride, w, bias, mult, shift, res, y, y_stride);
    if (six == rows) return;
  }
  const QS16Residual rest{res.res + static_cast<ptrdiff_t>(six) * res.res_stride, res.res_stride, res.term};
  return linear_res16_aligned(rows - six, out_features, in_features, x + static_cast<ptrdiff_t>(six) * x_stride,
                              x_stride, w, bias, mult, shift, per_channel, rest,
                              y + static_cast<ptrdiff_t>(six) * y_stride, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
