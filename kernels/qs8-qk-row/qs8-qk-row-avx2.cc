// qs8_qk_row with AVX2.
//
// int8 exactness notes (each step is the integer function of requant.h):
//  - Q.K: sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq). q - zq is in
//    [-255, 255] (int16); a vpmaddwd pair is at most 2 * 255 * 128, exact. The
//    wrapping int32 sum equals the reference's (which cannot overflow).
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

void qs8_qk_row__avx2(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                      int32_t k_zp, int32_t* scores) {
  const int kblocks = dim / 16;
  const int d16 = 16 * kblocks;
  // An 8-wide block after the 16-wide ones (head dims like 8 or 15): its
  // upper int16 lanes are 0 on the key side, so q - zq there adds nothing.
  const bool half = dim - d16 >= 8;
  const int d = d16 + (half ? 8 : 0);
  uint32_t sum_q = 0;  // sum over the vector part of (q - zq)
  for (int i = 0; i < d; ++i) sum_q += static_cast<uint32_t>(static_cast<int32_t>(q[i]) - q_zp);
  const int32_t base = static_cast<int32_t>(0u - static_cast<uint32_t>(k_zp) * sum_q);
  const __m256i zq = _mm256_set1_epi16(static_cast<int16_t>(q_zp));
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int b = 0; b < kblocks; ++b) {
      const __m256i qv = _mm256_sub_epi16(load16_s16(q + 16 * b), zq);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(qv, load16_s16(k0 + 16 * b)));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(qv, load16_s16(k1 + 16 * b)));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(qv, load16_s16(k2 + 16 * b)));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(qv, load16_s16(k3 + 16 * b)));
    }
    if (half) {
      const __m256i qv = _mm256_sub_epi16(load8_s16(q + d16), zq);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(qv, load8_s16(k0 + d16)));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(qv, load8_s16(k1 + d16)));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(qv, load8_s16(k2 + d16)));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(qv, load8_s16(k3 + d16)));
    }
    const __m128i r = _mm_add_epi32(hsum4_s32(a0, a1, a2, a3), _mm_set1_epi32(base));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores + j), r);
    if (d < dim) {
      for (int t = 0; t < 4; ++t) {
        const int8_t* kr = k0 + static_cast<ptrdiff_t>(t) * k_stride;
        int32_t acc = 0;
        for (int i = d; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
        scores[j + t] += acc;
      }
    }
  }
  for (; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    __m256i a = _mm256_setzero_si256();
    for (int b = 0; b < kblocks; ++b) {
      const __m256i qv = _mm256_sub_epi16(load16_s16(q + 16 * b), zq);
      a = _mm256_add_epi32(a, _mm256_madd_epi16(qv, load16_s16(kr + 16 * b)));
    }
    if (half) {
      a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_sub_epi16(load8_s16(q + d16), zq),
                                                load8_s16(kr + d16)));
    }
    int32_t tail = 0;
    for (int i = d; i < dim; ++i) tail += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = static_cast<int32_t>(static_cast<uint32_t>(hsum_s32(a)) + static_cast<uint32_t>(base) +
                                     static_cast<uint32_t>(tail));
  }
}

}  // namespace kernels
}  // namespace edgeattn
