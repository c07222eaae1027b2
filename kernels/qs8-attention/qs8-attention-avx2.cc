// qs8_attention with AVX2: the x86 row-pair driver (isa/x86/attention_avx2.cc)
// with the AVX2 steps.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention__avx2(const QS8AttentionArgs& a) {
  const Qs8AttentionSteps steps = {qs8_qk_rows2__avx2,
                                   {qs8_qk_row__avx2, qs8_softmax_row__avx2, qs8_pv_row__avx2}};
  qs8_attention_with__avx2(steps, a);
}

}  // namespace kernels
}  // namespace edgeattn
