// f32_attention with AVX2 + FMA, and its P.V row (also the f32 additive
// layer's).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/requant.h"
#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

namespace {

inline float f32_dot(int dim, const float* a, const float* b) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  int i = 0;
  for (; i + 16 <= dim; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= dim; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  float r = hsum_f32(_mm256_add_ps(acc0, acc1));
  for (; i < dim; ++i) r += a[i] * b[i];
  return r;
}

}  // namespace

// out[c] = sum_j p_j v[j][c], columns in registers, keys streamed.
void f32_pv_row__avx2(int n, int v_dim, const float* p, const float* v, int v_stride, float* out) {
  int c = 0;
  for (; c + 16 <= v_dim; c += 16) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const __m256 pj = _mm256_set1_ps(p[j]);
      a0 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vp), a0);
      a1 = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vp + 8), a1);
    }
    _mm256_storeu_ps(out + c, a0);
    _mm256_storeu_ps(out + c + 8, a1);
  }
  for (; c + 8 <= v_dim; c += 8) {
    __m256 a0 = _mm256_setzero_ps();
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) a0 = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(vp), a0);
    _mm256_storeu_ps(out + c, a0);
  }
  for (; c < v_dim; ++c) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += p[j] * v[static_cast<ptrdiff_t>(j) * v_stride + c];
    out[c] = acc;
  }
}

void f32_attention__avx2(const F32AttentionArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const float* q = a.q + static_cast<ptrdiff_t>(r) * a.q_stride;
    for (int j = 0; j < limit; ++j) {
      a.scratch[j] = f32_dot(a.head_dim, q, a.k + static_cast<ptrdiff_t>(j) * a.k_stride) * a.scale;
    }
    f32_softmax_row(limit, a.scratch);  // the reference's own: exp dominates, nothing to vectorize
    f32_pv_row__avx2(limit, a.v_dim, a.scratch, a.v, a.v_stride,
                     a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
