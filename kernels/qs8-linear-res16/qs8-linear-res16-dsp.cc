// qs8_linear_res16 (requant.h contract 5c, the 16-bit residual stream) on the
// Cortex-M DSP extension (DSP-only builds): qs8_linear__dsp's passes (three
// rows x 16 channels, isa/cortex-m/linear_dsp.h) with the int16 residual
// epilogue (StoreRes16: whole passes in assembly, ea_cm_linear_store_res16_3x16).
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include "isa/cortex-m/linear_dsp.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_dsp;  // NOLINT(build/namespaces)

void qs8_linear_res16__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                           int y_stride) {
  linear_dsp(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, StoreRes16{res, mult}, y,
             y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
