// qs8_attention on the Cortex-M DSP extension: the shared row driver with
// this path's score row, softmax (DSP-only builds; Helium builds keep the
// reference's, for flash) and weighted sum.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
namespace edgeattn {
namespace kernels {

void qs8_attention__dsp(const QS8AttentionArgs& a) {
#if EA_CM_DSP_ONLY
  qs8_attention_rows({qs8_qk_row__dsp, qs8_softmax_row__dsp, qs8_pv_row__dsp}, a);
#else
  qs8_attention_rows({qs8_qk_row__dsp, qs8_softmax_row__ref, qs8_pv_row__dsp}, a);  // Helium build's fallback
#endif
}

}  // namespace kernels
}  // namespace edgeattn
#endif
