// f32_attention on NEON (Armv7-A and AArch64), and its P.V row (also the
// f32 additive layer's).
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

float f32_dot(int dim, const float* a, const float* b) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int i = 0;
  for (; i + 4 <= dim; i += 4) acc = fma_f32(acc, vld1q_f32(a + i), vld1q_f32(b + i));
  float r = hsum_f32(acc);
  for (; i < dim; ++i) r += a[i] * b[i];
  return r;
}

}  // namespace

// out[c] = sum_j p_j v[j][c], columns in registers, keys streamed.
void f32_pv_row__neon(int n, int v_dim, const float* p, const float* v, int v_stride, float* out) {
  int c = 0;
  for (; c + 8 <= v_dim; c += 8) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0;
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const float32x4_t pj = vdupq_n_f32(p[j]);
      a0 = fma_f32(a0, pj, vld1q_f32(vp));
      a1 = fma_f32(a1, pj, vld1q_f32(vp + 4));
    }
    vst1q_f32(out + c, a0);
    vst1q_f32(out + c + 4, a1);
  }
  for (; c + 4 <= v_dim; c += 4) {
    float32x4_t a0 = vdupq_n_f32(0.0f);
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) a0 = fma_f32(a0, vdupq_n_f32(p[j]), vld1q_f32(vp));
    vst1q_f32(out + c, a0);
  }
  for (; c < v_dim; ++c) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += p[j] * v[static_cast<ptrdiff_t>(j) * v_stride + c];
    out[c] = acc;
  }
}

void f32_attention__neon(const F32AttentionArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const float* q = a.q + static_cast<ptrdiff_t>(r) * a.q_stride;
    for (int j = 0; j < limit; ++j) {
      a.scratch[j] = f32_dot(a.head_dim, q, a.k + static_cast<ptrdiff_t>(j) * a.k_stride) * a.scale;
    }
    f32_softmax_row(limit, a.scratch);  // the reference's own: exp dominates, nothing to vectorize
    f32_pv_row__neon(limit, a.v_dim, a.scratch, a.v, a.v_stride,
                    a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
