// qs8_softmax_exp_row (steps 1-4 of requant.h's integer softmax) with AVX2,
// and its form with the step-2 parameters given (the VNNI tiles use it).
//
//  - softmax: every step of requant.h is a 32-bit or 16-bit lane operation
//    (see exponent_x8 and exp2_neg_q15_x16); the normalizer's e m < 2^31.
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

// Steps 1-2 of the softmax (requant.h) for 8 scores: z in 32-bit lanes,
// already clamped to 0xFFFF so that vpackusdw (signed input) keeps it.
struct ExpParams8 {
  __m256i limit, mult, zero_z;
  __m128i pre, post;
};

inline ExpParams8 exp_params8(const SoftmaxExpParams& x) {
  return ExpParams8{_mm256_set1_epi32(static_cast<int32_t>(x.limit)), _mm256_set1_epi32(static_cast<int32_t>(x.multiplier)),
                    _mm256_set1_epi32(static_cast<int32_t>(kExpZeroQ12)), _mm_cvtsi32_si128(static_cast<int>(x.pre_shift)),
                    _mm_cvtsi32_si128(static_cast<int>(x.post_shift))};
}

inline __m256i exponent_x8(__m256i vmax, __m256i s, const ExpParams8& x) {
  const __m256i dp = _mm256_min_epu32(_mm256_srl_epi32(_mm256_sub_epi32(vmax, s), x.pre), x.limit);
  return _mm256_min_epu32(_mm256_srl_epi32(_mm256_mullo_epi32(dp, x.mult), x.post), x.zero_z);
}

// Step 3 for 16 exponents za (scores 0-7) and zb (8-15), into ea and eb.
// The polynomial runs on 16-bit lanes (vpmulhrsw is mulhrs16 of requant.h)
// after vpackusdw; vpunpck{l,h}wd with 0 undo the pack lane for lane, so wa
// lines up with za. AVX2 has no 16-bit variable shift: the rounding shift by
// n = z >> 12 runs on 32-bit lanes (n <= 15 for live lanes; z = 0xFFFF is 0).
inline void exp2_neg_q15_x16(__m256i za, __m256i zb, __m256i* ea, __m256i* eb) {
  const __m256i z16 = _mm256_packus_epi32(za, zb);
  const __m256i u = _mm256_slli_epi16(_mm256_and_si256(z16, _mm256_set1_epi16(0xFFF)), 3);
  __m256i h = _mm256_set1_epi16(kExp2Coeff[3]);
  h = _mm256_add_epi16(_mm256_set1_epi16(kExp2Coeff[2]), _mm256_mulhrs_epi16(h, u));
  h = _mm256_add_epi16(_mm256_set1_epi16(kExp2Coeff[1]), _mm256_mulhrs_epi16(h, u));
  h = _mm256_add_epi16(_mm256_set1_epi16(kExp2Coeff[0]), _mm256_mulhrs_epi16(h, u));
  const __m256i w = _mm256_add_epi16(_mm256_set1_epi16(kProbMax), _mm256_mulhrs_epi16(h, u));
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i zero_z = _mm256_set1_epi32(static_cast<int32_t>(kExpZeroQ12));
  auto shift = [&](__m256i w32, __m256i z) {
    const __m256i n = _mm256_srli_epi32(z, 12);
    const __m256i r = _mm256_srli_epi32(_mm256_sllv_epi32(one, n), 1);
    return _mm256_andnot_si256(_mm256_cmpeq_epi32(z, zero_z), _mm256_srlv_epi32(_mm256_add_epi32(w32, r), n));
  };
  *ea = shift(_mm256_unpacklo_epi16(w, _mm256_setzero_si256()), za);
  *eb = shift(_mm256_unpackhi_epi16(w, _mm256_setzero_si256()), zb);
}

// acc_lo/acc_hi (columns 0-3,8-11 / 4-7,12-15) += p * row16 for one key

}  // namespace

uint32_t qs8_softmax_exp_row__avx2(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  return qs8_softmax_exp_row_with__avx2(n, scores, softmax_exp_params(mult, shift), e);
}

uint32_t qs8_softmax_exp_row_with__avx2(int n, const int32_t* scores, const SoftmaxExpParams& params, uint16_t* e) {
  const int n8 = n & ~7;
  int32_t row_max = scores[0];
  if (n8 > 0) {
    __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores));
    for (int j = 8; j < n8; j += 8) {
      m = _mm256_max_epi32(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores + j)));
    }
    row_max = hmax_s32(m);
  }
  for (int j = n8; j < n; ++j) row_max = scores[j] > row_max ? scores[j] : row_max;

  const ExpParams8 x = exp_params8(params);
  const __m256i vmax = _mm256_set1_epi32(row_max);
  __m256i vsum = _mm256_setzero_si256();
  int j8 = 0;
  for (; j8 + 16 <= n8; j8 += 16) {
    const __m256i* p = reinterpret_cast<const __m256i*>(scores + j8);
    __m256i ea, eb;
    exp2_neg_q15_x16(exponent_x8(vmax, _mm256_loadu_si256(p), x), exponent_x8(vmax, _mm256_loadu_si256(p + 1), x),
                     &ea, &eb);
    // vpackusdw works per 128-bit lane: qwords (a0-3, b0-3, a4-7, b4-7) -> (0, 2, 1, 3).
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(e + j8),
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(ea, eb), 0xD8));
    vsum = _mm256_add_epi32(vsum, _mm256_add_epi32(ea, eb));
  }
  if (j8 < n8) {  // one more block of 8: the upper half of the pack is a dummy
    const __m256i za = exponent_x8(vmax, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores + j8)), x);
    __m256i ea, unused;
    exp2_neg_q15_x16(za, za, &ea, &unused);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(e + j8),
                     _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(ea, ea), 0xD8)));
    vsum = _mm256_add_epi32(vsum, ea);
  }
  uint32_t sum = static_cast<uint32_t>(hsum_s32(vsum));
  for (int j = n8; j < n; ++j) {
    e[j] = static_cast<uint16_t>(exp2_neg_q15(softmax_exponent_q12(row_max, scores[j], params)));
    sum += e[j];
  }
  return sum;
}

}  // namespace kernels
}  // namespace edgeattn
