// qs8_softmax_row with AVX2: qs8_softmax_exp_row__avx2, then the normalizer
// on 32-bit lanes.
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

void qs8_softmax_row__avx2(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  // p = min(32767, (e m + 2^(b-1)) >> b): e m < 2^31, so one vpmulld and a
  // logical shift are exact.
  const ProbNormalizer norm = prob_normalizer(qs8_softmax_exp_row__avx2(n, scores, mult, shift, probs));
  if (norm.shift >= 17) {
    int j = 0;
    for (; j + 16 <= n; j += 16) {
      __m256i* pj = reinterpret_cast<__m256i*>(probs + j);
      _mm256_storeu_si256(pj, avx2::normalize_probs_x16(_mm256_loadu_si256(pj), norm));
    }
    for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm);
    return;
  }
  const __m256i m = _mm256_set1_epi32(static_cast<int32_t>(norm.multiplier));
  const __m256i rnd = _mm256_set1_epi32(static_cast<int32_t>(1u << (norm.shift - 1)));
  const __m256i cap = _mm256_set1_epi32(kProbMax);
  const __m128i sh = _mm_cvtsi32_si128(norm.shift);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    __m128i* pj = reinterpret_cast<__m128i*>(probs + j);
    const __m256i e = _mm256_cvtepu16_epi32(_mm_loadu_si128(pj));
    const __m256i p = _mm256_min_epu32(_mm256_srl_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, m), rnd), sh), cap);
    _mm_storeu_si128(pj, _mm_packus_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
  }
  for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm);
}

}  // namespace kernels
}  // namespace edgeattn
