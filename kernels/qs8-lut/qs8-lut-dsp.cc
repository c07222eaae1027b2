// qs8_lut (requant.h contract 6) on the Cortex-M DSP extension (DSP-only
// builds), bit-identical to kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"

namespace edgeattn {
namespace kernels {

// Four bytes per word: each index sign-extended by SXTB (with its rotation)
// into the table's middle, table + 128, and the four results packed into
// one store (the reference reloads the table pointer per byte at -Os).
void qs8_lut__dsp(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y, int y_stride) {
  const uint8_t* const mid = reinterpret_cast<const uint8_t*>(table) + 128;
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      const uint32_t w = dsp::load4(xr + i);
      const uint32_t v = mid[static_cast<int8_t>(w)] | uint32_t{mid[static_cast<int8_t>(w >> 8)]} << 8 |
                         uint32_t{mid[static_cast<int8_t>(w >> 16)]} << 16 | uint32_t{mid[static_cast<int8_t>(w >> 24)]} << 24;
      std::memcpy(yr + i, &v, 4);
    }
    for (; i < n; ++i) yr[i] = static_cast<int8_t>(mid[xr[i]]);
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
