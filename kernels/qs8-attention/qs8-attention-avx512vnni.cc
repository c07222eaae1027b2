// The avx512vnni path's attention below the tiles (qs8_attention__avx512vnni;
// its list entry is qs8_attention_tiled__avx512vnni): the x86 row-pair
// driver with the zmm steps.
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention__avx512vnni(const QS8AttentionArgs& a) {
  const Qs8AttentionSteps steps = {
      qs8_qk_rows2_zmm__avx512vnni,
      {qs8_qk_row__avx512vnni, qs8_softmax_row__avx512vnni, qs8_pv_row__avx2}};
  qs8_attention_with__avx2(steps, a);
}

}  // namespace kernels
}  // namespace edgeattn
