// qs8_softmax_exp_row on NEON (Armv7-A and AArch64): steps 1-4 of
// requant.h's integer softmax (isa/neon/softmax_neon.h).
//
//  - softmax: the exponent on 32-bit lanes, the polynomial (vqrdmulh =
//    mulhrs16) and the rounding shift (vrshl) on 16-bit lanes, the normalizer
//    on 32-bit lanes (e m < 2^31, vrshl rounds half up); see softmax_neon.h.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "isa/neon/softmax_neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

uint32_t qs8_softmax_exp_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  return softmax_exp_row(n, scores, softmax_row_max(n, scores), softmax_exp_params(mult, shift), e);
}

}  // namespace kernels
}  // namespace edgeattn
