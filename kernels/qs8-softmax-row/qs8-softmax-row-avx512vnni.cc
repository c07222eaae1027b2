// qs8_softmax_row on zmm: qs8_softmax_exp_row__avx512vnni, then the
// normalizer on 16 32-bit lanes.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {

using avx512::lanes16;
using avx512::load_keys_t;

}  // namespace

void qs8_softmax_row__avx512vnni(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                 uint16_t* probs) {
  if (n <= 0) return;
  const avx512::ProbNorm16 norm = avx512::make_prob_norm16(prob_normalizer(qs8_softmax_exp_row__avx512vnni(n, scores, mult, shift, probs)));
  for (int j = 0; j < n; j += 16) {
    const __mmask16 m = lanes16(n - j < 16 ? n - j : 16);
    const __m512i e = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, probs + j));
    _mm256_mask_storeu_epi16(probs + j, m, _mm512_cvtepi32_epi16(avx512::normalize_probs_x16(e, norm)));
  }
}

}  // namespace kernels
}  // namespace edgeattn
