// f32_additive with AVX2: tanh is the scalar libm call like the reference;
// the dot with v and P.V are vectorized.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

void f32_additive__avx2(const F32AdditiveArgs& a) {
  if (a.coverage != nullptr) {  // float coverage layers: the reference loop
    f32_additive__ref(a);
    return;
  }
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const float* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const float* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      alignas(32) float t[8];
      __m256 acc = _mm256_setzero_ps();
      int c = 0;
      for (; c + 8 <= a.attn_dim; c += 8) {
        for (int i = 0; i < 8; ++i) t[i] = std::tanh(qp[c + i] + kp[c + i]);
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(a.v_w + c), _mm256_load_ps(t), acc);
      }
      float s = hsum_f32(acc);
      for (; c < a.attn_dim; ++c) s += a.v_w[c] * std::tanh(qp[c] + kp[c]);
      a.scratch[j] = s;
    }
    f32_softmax_row(limit, a.scratch);  // the reference's own (libm exp), one copy for every path
    f32_pv_row__avx2(limit, a.v_dim, a.scratch, a.values, a.values_stride,
                     a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
