// qs8_lut (requant.h contract 6) on Helium, bit-identical to
// kernels/ref/elementwise.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_acle.h>
#include <arm_mve.h>

#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// 16 bytes per step, tail-predicated: x + 128 (VADD.I8, as a byte offset
// the same as x XOR 0x80), one byte gather from the table, the store; 5
// instructions per 16. Rows without gaps run as one.
void qs8_lut__helium(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                     int y_stride) {
  if (x_stride == n && y_stride == n) {
    n *= rows;
    rows = 1;
  }
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    __asm__ volatile(  // reads and writes memory the operands do not name
        "wlstp.8 lr, %[n], 2f\n"
        "1:\n"
        "vldrb.u8 q0, [%[x]], #16\n"
        "vadd.i8 q0, q0, %[k]\n"
        "vldrb.u8 q1, [%[t], q0]\n"
        "vstrb.8 q1, [%[y]], #16\n"
        "letp lr, 1b\n"
        "2:\n"
        : [x] "+r"(xr), [y] "+r"(yr)
        : [n] "r"(n), [t] "r"(table), [k] "r"(0x80)
        : "q0", "q1", "lr", "memory");
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
