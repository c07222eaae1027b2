// qs8_attention on Helium: the shared row driver with this path's score
// row, softmax and weighted sum.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
namespace edgeattn {
namespace kernels {

void qs8_attention__helium(const QS8AttentionArgs& a) {
  qs8_attention_rows({qs8_qk_row__helium, qs8_softmax_row__helium, qs8_pv_row__helium}, a);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
