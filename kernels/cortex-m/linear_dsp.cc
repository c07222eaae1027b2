// qs8_linear with the Armv7E-M DSP extension. Each 32-bit load holds 4 int8;
// SXTB16 sign-extends bytes 0,2 (and, after a rotate by 8, bytes 1,3) into two
// halfwords, and SMLAD adds both 16x16 products to the accumulator. The sum
// is the reference's exact int32 dot product (|acc| < 2^31, see ref/linear.cc),
// only in a different order, so the result is bit-identical.
#include "cortex-m/cortexm_kernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace {

inline uint32_t load4(const int8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // unaligned LDR on Armv7E-M
  return v;
}

inline uint32_t ror8(uint32_t v) { return (v >> 8) | (v << 24); }  // one ROR

inline int32_t dot_dsp(const int8_t* a, const int8_t* b, int n, int32_t acc) {
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t va = load4(a + k), vb = load4(b + k);
    acc = __smlad(__sxtb16(va), __sxtb16(vb), acc);
    acc = __smlad(__sxtb16(ror8(va)), __sxtb16(ror8(vb)), acc);
  }
  for (; k < n; ++k) acc += static_cast<int32_t>(a[k]) * b[k];
  return acc;
}

}  // namespace

void qs8_linear__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, int w_stride, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  for (int m = 0; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n = 0; n < out_features; ++n) {
      const int8_t* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      const int32_t acc = dot_dsp(xr, wr, in_features, bias[n]);
      const int c = per_channel ? n : 0;
      y[static_cast<ptrdiff_t>(m) * y_stride + n] = requantize_s8(acc, mult[c], shift[c], y_zp);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
