// qs8_linear on Helium: word gathers of packed K4N16 weights into
// VMLADAVA.S8 (isa/cortex-m/linear_helium.h). w not 4-byte aligned (MVE
// word loads would fault) falls back to the reference.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "isa/cortex-m/linear_helium.h"

namespace edgeattn {
namespace kernels {

using namespace cm_linear_helium;  // NOLINT(build/namespaces)

// The alignment test sits in front of the kernel's frame setup (inline, GCC
// builds the whole frame first); both calls are tail branches.
void qs8_linear__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                        const int8_t* w, const int32_t* bias, const int32_t* mult,
                        const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                        int y_stride) {
  if ((reinterpret_cast<uintptr_t>(w) & 3u) != 0) {
    return qs8_linear__ref(rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                           per_channel, y_zp, y, y_stride);
  }
  // Whole sixes of rows in six-row passes (linear_six), the rest in pairs.
  const int six = rows >= 6 && six_ready(out_features, shift, per_channel) ? rows / 6 * 6 : 0;
  if (six != 0) {
    linear_six(six, out_features, in_features, x, x_stride, w, bias, mult, shift, y_zp, nullptr, y, y_stride);
    if (six == rows) return;
  }
  return linear_aligned(rows - six, out_features, in_features, x + static_cast<ptrdiff_t>(six) * x_stride,
                        x_stride, w, bias, mult, shift, per_channel, y_zp, y + static_cast<ptrdiff_t>(six) * y_stride,
                        y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
