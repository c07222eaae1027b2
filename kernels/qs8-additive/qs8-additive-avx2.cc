// qs8_additive (Bahdanau attention) with AVX2: per key, 8 attention
// features per step: pre = (qp - zq) + (kp - zk) in int32 (exact), exact
// vector requantization to the tanh-table index, lookup with vpgatherdd from
// a 256-entry int32 copy of the table on the stack (never reads past the
// caller's 256-byte table), and the int32 product with v. Softmax and P.V are
// the exact AVX2 row kernels. Coverage: per key, c_j broadcast, the product
// with 8 sign-extended w_c lanes requantized exactly (requantize_x8) and added
// to pre; the weights are added to c after the softmax.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

void qs8_additive__avx2(const QS8AdditiveArgs& a) {
  alignas(32) int32_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = a.tanh_table[i];
  const int d = a.attn_dim & ~7;
  const __m256i zsum = _mm256_set1_epi32(a.qp_zp + a.kp_zp);
  const Rq8 rq = rq8_uniform(a.pre_mult, a.pre_shift);
  const __m256i lo512 = _mm256_set1_epi32(-512), hi512 = _mm256_set1_epi32(512);
  const __m256i zp_plus_128 = _mm256_set1_epi32(a.pre_zp + 128);
  const __m256i zero = _mm256_setzero_si256(), k255 = _mm256_set1_epi32(255);
  const bool cov = a.coverage != nullptr;
  const Rq8 rq_cov = rq8_uniform(cov ? a.cov_mult : (int32_t{1} << 30), cov ? a.cov_shift : 0);
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const int8_t* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      __m256i acc = _mm256_setzero_si256();
      const int32_t cj = cov ? a.coverage[j] : 0;
      const __m256i cjv = _mm256_set1_epi32(cj);
      for (int c = 0; c < d; c += 8) {
        const __m256i qv = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qp + c)));
        const __m256i kv = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kp + c)));
        __m256i pre = _mm256_sub_epi32(_mm256_add_epi32(qv, kv), zsum);
        if (cov) {
          const __m256i wc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a.cov_w + c)));
          pre = _mm256_add_epi32(pre, requantize_x8(_mm256_mullo_epi32(wc, cjv), rq_cov));
        }
        __m256i y = requantize_x8(pre, rq);
        y = _mm256_min_epi32(_mm256_max_epi32(y, lo512), hi512);
        // index + 128 = clamp(y + zp, -128, 127) + 128
        const __m256i idx = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(y, zp_plus_128), zero), k255);
        const __m256i t = _mm256_i32gather_epi32(table, idx, 4);
        const __m256i vw = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a.v_w + c)));
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(t, vw));
      }
      int32_t s = hsum_s32(acc);
      for (int c = d; c < a.attn_dim; ++c) {
        int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
        if (cov) pre += requantize(a.cov_w[c] * cj, a.cov_mult, a.cov_shift);
        const int8_t index = requantize_s8(pre, a.pre_mult, a.pre_shift, a.pre_zp);
        s += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
      }
      a.scratch[j] = s;
    }
    qs8_softmax_row__avx2(limit, a.scratch, a.score_mult, a.score_shift, a.prob_scratch);
    if (cov) qs8_coverage_add_row(limit, a.prob_scratch, a.coverage);
    qs8_pv_row__avx2(limit, a.v_dim, a.prob_scratch, a.values, a.values_stride, a.values_zp,
                     a.pv_mult, a.pv_shift, a.out_zp, a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.prob_scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
