// qs8_attention on NEON (Armv7-A and AArch64).
#include "isa/neon/neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

// Tiled when the caller gave tile scratch and there are enough query rows
// (qs8-attention-tile-stages-neon.cc), else the shared row driver with the row primitives
// above.
void qs8_attention__neon(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiled__neon(a)) {
    qs8_attention_rows({qs8_qk_row__neon, qs8_softmax_row__neon, qs8_pv_row__neon}, a);
  }
}

}  // namespace kernels
}  // namespace edgeattn
