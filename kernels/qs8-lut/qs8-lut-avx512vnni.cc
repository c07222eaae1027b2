// qs8_lut of the avx512vnni path: qs8_lut__avx512vbmi (VPERMI2B) where the
// CPU has AVX512_VBMI, else qs8_lut__avx512bw. Compiled with the path's
// flags; the VBMI code is in its own file.
#include <atomic>

#include "cpu_features.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

namespace {
// cpu_has_avx512vbmi() once: -1 not asked yet, then 0 or 1. Threads that ask
// at the same time store the same value (relaxed, as dispatch.cc's table).
std::atomic<int> g_vbmi{-1};
}  // namespace

void qs8_lut__avx512vnni(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                         int y_stride) {
  int vbmi = g_vbmi.load(std::memory_order_relaxed);
  if (vbmi < 0) {
    vbmi = cpu_has_avx512vbmi() ? 1 : 0;
    g_vbmi.store(vbmi, std::memory_order_relaxed);
  }
  if (vbmi != 0) {
    qs8_lut__avx512vbmi(rows, n, x, x_stride, table, y, y_stride);
  } else {
    qs8_lut__avx512bw(rows, n, x, x_stride, table, y, y_stride);
  }
}

}  // namespace kernels
}  // namespace edgeattn
