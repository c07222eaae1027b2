// qs8_linear_res (requant.h contract 5b) on the Cortex-M DSP extension
// (DSP-only builds): qs8_linear__dsp's passes with the residual epilogue
// (isa/cortex-m/linear_dsp.h).
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include "isa/cortex-m/linear_dsp.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_dsp;  // NOLINT(build/namespaces)

void qs8_linear_res__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                         const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                         int y_stride) {
  linear_dsp(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel,
             StoreResidual{res, cm::residual_const(res.term), mult}, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
