// f32_additive (Bahdanau attention) on NEON (Armv7-A and AArch64).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

// Float: the vector part is the add and the dot with v; tanh stays the scalar
// libm tanhf of the reference, which dominates the cost.
void f32_additive__neon(const F32AdditiveArgs& a) {
  if (a.coverage != nullptr) {
    f32_additive__ref(a);
    return;
  }
  const int d4 = a.attn_dim & ~3;
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const float* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const float* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      float32x4_t acc = vdupq_n_f32(0.0f);
      for (int c = 0; c < d4; c += 4) {
        float t[4];
        vst1q_f32(t, vaddq_f32(vld1q_f32(qp + c), vld1q_f32(kp + c)));
        for (float& x : t) x = std::tanh(x);
        acc = fma_f32(acc, vld1q_f32(t), vld1q_f32(a.v_w + c));
      }
      float s = hsum_f32(acc);
      for (int c = d4; c < a.attn_dim; ++c) s += a.v_w[c] * std::tanh(qp[c] + kp[c]);
      a.scratch[j] = s;
    }
    f32_softmax_row(limit, a.scratch);  // the reference's own (libm exp), one copy for every path
    f32_pv_row__neon(limit, a.v_dim, a.scratch, a.values, a.values_stride,
                     a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
