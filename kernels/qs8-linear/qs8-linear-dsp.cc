// qs8_linear on the Cortex-M DSP extension (DSP-only builds): SMLAD on
// sign-extended int8 pairs, three rows x 16 channels per pass (a 3 x 16
// tile of sums on the stack)
// (isa/cortex-m/linear_dsp.h).
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include "isa/cortex-m/linear_dsp.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_dsp;  // NOLINT(build/namespaces)

void qs8_linear__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  linear_dsp(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, StoreS8{y_zp}, y,
             y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
