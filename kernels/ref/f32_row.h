// Float row helpers shared by the float reference kernels (softmax in place,
// weighted sum of values).
#ifndef EDGEATTN_KERNELS_REF_F32_ROW_H_
#define EDGEATTN_KERNELS_REF_F32_ROW_H_

#include <cmath>
#include <cstddef>

namespace edgeattn {
namespace kernels {

// Float softmax over scratch[0..n) in place (max-subtracted for range).
inline void f32_softmax_row(int n, float* s) {
  if (n <= 0) return;
  float row_max = s[0];
  for (int j = 1; j < n; ++j) row_max = s[j] > row_max ? s[j] : row_max;
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    s[j] = std::exp(s[j] - row_max);
    sum += s[j];
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < n; ++j) s[j] *= inv;
}

inline void f32_pv_row(int n, int v_dim, const float* p, const float* v, int v_stride, float* out) {
  for (int c = 0; c < v_dim; ++c) out[c] = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float* vr = v + static_cast<ptrdiff_t>(j) * v_stride;
    for (int c = 0; c < v_dim; ++c) out[c] += p[j] * vr[c];
  }
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_REF_F32_ROW_H_
