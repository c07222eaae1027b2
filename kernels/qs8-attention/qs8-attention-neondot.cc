// qs8_attention of the Armv8.2 dot-product path (AArch64): the tiled kernel
// (SDOT tiles) where it applies, else the shared row driver with the SDOT
// score row and the NEON softmax and P.V.
// Compiled with the baseline flags: the driver, requantization, softmax and
// P.V are the NEON ones; only the int8 dot-product loops are SDOT code
// (isa/neondot/sdot.h), reached after cpu_supports(KernelPath::kNeonDot).
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neondot/sdot.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

void qs8_attention__neondot(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiled__neondot(a)) {
    qs8_attention_rows({qs8_qk_row__neondot, qs8_softmax_row__neon, qs8_pv_row__neon}, a);
  }
}

}  // namespace kernels
}  // namespace edgeattn
