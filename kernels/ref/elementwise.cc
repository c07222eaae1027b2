// Reference element-wise kernels of the transformer blocks: the int8
// activation table (requant.h contract 6), the int16 stream's narrowing
// (contract 1) and the add / add16 contracts, the float activations and
// residual add (int8 blocks add theirs in qs8_linear_res's epilogue).
#include <cmath>

#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

void qs8_lut__ref(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                  int y_stride) {
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    for (int i = 0; i < n; ++i) yr[i] = table[xr[i] + 128];
  }
}

void qs16_narrow__ref(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = requantize_s8(x[i], mult, shift, zp);
}

void qs8_add__ref(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = add_s8(x[i], p.zp_x, p.a, r[i], p.zp_r, p.b, p.shift, p.zp_y);
}

void qs8_add16__ref(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  for (size_t i = 0; i < n; ++i) y[i] = add_s16(x[i], p.zp_x, p.a, r[i], p.b, p.shift);
}

#if !(defined(EA_INT8_ONLY) && EA_INT8_ONLY)
void f32_add__ref(int rows, int n, const float* a, int a_stride, const float* b, int b_stride,
                  float* y, int y_stride) {
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < n; ++i) {
      y[static_cast<ptrdiff_t>(r) * y_stride + i] =
          a[static_cast<ptrdiff_t>(r) * a_stride + i] + b[static_cast<ptrdiff_t>(r) * b_stride + i];
    }
  }
}

void f32_activation__ref(int rows, int n, float* x, int x_stride, int32_t activation) {
  for (int r = 0; r < rows; ++r) {
    float* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    for (int i = 0; i < n; ++i) {
      const float v = xr[i];
      switch (activation) {
        case kActRelu: xr[i] = v > 0.0f ? v : 0.0f; break;
        case kActGeluErf: xr[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678f)); break;
        case kActGeluTanh:
          xr[i] = 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));
          break;
        default: xr[i] = v / (1.0f + std::exp(-v)); break;  // kActSilu
      }
    }
  }
}
#endif

}  // namespace kernels
}  // namespace edgeattn
