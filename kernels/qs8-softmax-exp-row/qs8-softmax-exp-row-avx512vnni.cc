// qs8_softmax_exp_row on zmm (AVX-512 F/BW/VL), and its form for the
// rows of a tile.
//
// Softmax (requant.h): the exponent on 16 32-bit lanes, the polynomial and
// the rounding shift on 32 16-bit lanes, the normalizer on 16 32-bit lanes;
// tails (n % 32) use masked loads and stores, no scalar loop.
//
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

inline __m512i load16_s32(const int32_t* p) { return _mm512_loadu_si512(p); }

// Steps 1-2 of the softmax (requant.h) for 32 scores in 32-bit lanes,
// narrowed to 16-bit z. kPre: the pre-shift p is not 0 (one score unit is
// worth less than 2^-16 in log2, c log2(e) < 2^-16); without it the shift
// is skipped.
struct ExpParams16 {
  __m512i limit, mult;
  __m128i pre, post;
};

inline ExpParams16 exp_params16(const SoftmaxExpParams& x) {
  return ExpParams16{_mm512_set1_epi32(static_cast<int32_t>(x.limit)), _mm512_set1_epi32(static_cast<int32_t>(x.multiplier)),
                     _mm_cvtsi32_si128(static_cast<int>(x.pre_shift)), _mm_cvtsi32_si128(static_cast<int>(x.post_shift))};
}

template <bool kPre>
inline __m512i exponent_x16(__m512i vmax, __m512i s, const ExpParams16& x) {
  __m512i d = _mm512_sub_epi32(vmax, s);
  if (kPre) d = _mm512_srl_epi32(d, x.pre);
  return _mm512_srl_epi32(_mm512_mullo_epi32(_mm512_min_epu32(d, x.limit), x.mult), x.post);
}

// The two halves' z narrowed to 32 16-bit lanes in key order. VPACKUSDW's
// signed-to-unsigned saturation is the clamp to 0xFFFF: after the post shift
// z < 2^31 (requant.h: d' M < 0xFFFF 2^r + M, and r = 0 only when that is
// below 2^17). It interleaves per 128-bit lane, so VPERMQ restores the order.
inline __m512i narrow_z(__m512i z0, __m512i z1) {
  const __m512i order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
  return _mm512_permutexvar_epi64(order, _mm512_packus_epi32(z0, z1));
}

// Step 3 on 32 16-bit lanes: vpmulhrsw is mulhrs16. The rounding shift
// e = (w + 2^(n-1)) >> n, n = z >> 12, is VPAVGW((2w) >> n, 0): with nested
// floors floor((floor(2w / 2^n) + 1) / 2) = floor((w + 2^(n-1)) / 2^n), and
// for n = 0 it gives (2w + 1) >> 1 = w; 2w <= 65534 fits 16 bits unsigned.
// z = 0xFFFF is masked to 0, and so are the lanes outside `keep`.
inline __m512i exp2_neg_q15_x32(__m512i z, __mmask32 keep) {
  const __mmask32 live = keep & _mm512_cmpneq_epu16_mask(z, _mm512_set1_epi16(static_cast<int16_t>(kExpZeroQ12)));
  const __m512i n = _mm512_srli_epi16(z, 12);
  const __m512i u = _mm512_slli_epi16(_mm512_and_si512(z, _mm512_set1_epi16(0xFFF)), 3);
  __m512i h = _mm512_set1_epi16(kExp2Coeff[3]);
  h = _mm512_add_epi16(_mm512_set1_epi16(kExp2Coeff[2]), _mm512_mulhrs_epi16(h, u));
  h = _mm512_add_epi16(_mm512_set1_epi16(kExp2Coeff[1]), _mm512_mulhrs_epi16(h, u));
  h = _mm512_add_epi16(_mm512_set1_epi16(kExp2Coeff[0]), _mm512_mulhrs_epi16(h, u));
  const __m512i w = _mm512_add_epi16(_mm512_set1_epi16(kProbMax), _mm512_mulhrs_epi16(h, u));
  return _mm512_maskz_avg_epu16(live, _mm512_srlv_epi16(_mm512_add_epi16(w, w), n), _mm512_setzero_si512());
}

// Step 1's maximum of one row of n >= 1 scores.
inline int32_t row_max(int n, const int32_t* scores) {
  const int n16 = n & ~15;
  const __mmask16 tail = lanes16(n - n16);
  const __m512i lowest = _mm512_set1_epi32(INT32_MIN);
  __m512i m0 = lowest, m1 = lowest;
  int j = 0;
  for (; j + 32 <= n16; j += 32) {
    m0 = _mm512_max_epi32(m0, load16_s32(scores + j));
    m1 = _mm512_max_epi32(m1, load16_s32(scores + j + 16));
  }
  if (j < n16) m0 = _mm512_max_epi32(m0, load16_s32(scores + j));
  if (tail != 0) m1 = _mm512_max_epi32(m1, _mm512_mask_loadu_epi32(lowest, tail, scores + n16));
  return _mm512_reduce_max_epi32(_mm512_max_epi32(m0, m1));
}

// Steps 1-4 for one row of n >= 1 scores whose maximum is `max`: e into
// e[0, n), returns the sum.
template <bool kPre>
inline uint32_t exp_row(int n, const int32_t* scores, int32_t max, const ExpParams16& x, uint16_t* e) {
  const __m512i vmax = _mm512_set1_epi32(max);
  // The sum: VPMADDWD of e (<= 32767, a valid int16) with 1s, 16 pair sums.
  const __m512i ones = _mm512_set1_epi16(1);
  __m512i vsum = _mm512_setzero_si512();
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m512i z = narrow_z(exponent_x16<kPre>(vmax, load16_s32(scores + j), x),
                               exponent_x16<kPre>(vmax, load16_s32(scores + j + 16), x));
    const __m512i ev = exp2_neg_q15_x32(z, ~__mmask32{0});
    _mm512_storeu_si512(e + j, ev);
    vsum = _mm512_add_epi32(vsum, _mm512_madd_epi16(ev, ones));
  }
  if (j < n) {  // 1..31 scores: masked loads; dead lanes are 0 and not stored
    const int left = n - j;
    const __mmask16 k0 = lanes16(left < 16 ? left : 16);
    const __mmask16 k1 = left > 16 ? lanes16(left - 16) : 0;
    const __mmask32 keep = static_cast<__mmask32>((uint64_t{1} << left) - 1u);
    const __m512i z = narrow_z(exponent_x16<kPre>(vmax, _mm512_maskz_loadu_epi32(k0, scores + j), x),
                               exponent_x16<kPre>(vmax, _mm512_maskz_loadu_epi32(k1, scores + j + 16), x));
    const __m512i ev = exp2_neg_q15_x32(z, keep);
    _mm512_mask_storeu_epi16(e + j, keep, ev);
    vsum = _mm512_add_epi32(vsum, _mm512_madd_epi16(ev, ones));
  }
  // Wrapping adds like the reference's uint32 sum (which stays below 2^31).
  return static_cast<uint32_t>(_mm512_reduce_add_epi32(vsum));
}

// Two sweeps over the rows: every row's maximum first, then the exponentials.
// With one row at a time, a row's exponent steps all wait for its maximum's
// horizontal reduction and fill the scheduler; after the first sweep they
// depend only on their loads.
template <bool kPre>
void exp_rows(int rows, const int* limits, const int32_t* scores, int stride, const ExpParams16& x, uint16_t* e,
              uint32_t* sums) {
  constexpr int kSweepRows = kQs8AttnTileRows;
  for (int r0 = 0; r0 < rows; r0 += kSweepRows) {
    const int r1 = rows - r0 < kSweepRows ? rows : r0 + kSweepRows;
    int32_t max[kSweepRows];
    for (int r = r0; r < r1; ++r) {
      if (limits[r] > 0) max[r - r0] = row_max(limits[r], scores + static_cast<ptrdiff_t>(r) * stride);
    }
    for (int r = r0; r < r1; ++r) {
      const ptrdiff_t at = static_cast<ptrdiff_t>(r) * stride;
      sums[r] = limits[r] > 0 ? exp_row<kPre>(limits[r], scores + at, max[r - r0], x, e + at) : 1u;
    }
  }
}

}  // namespace

uint32_t qs8_softmax_exp_row__avx512vnni(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                         uint16_t* e) {
  if (n <= 0) return 0;
  const SoftmaxExpParams params = softmax_exp_params(mult, shift);
  const ExpParams16 x = exp_params16(params);
  const int32_t max = row_max(n, scores);
  return params.pre_shift != 0 ? exp_row<true>(n, scores, max, x, e) : exp_row<false>(n, scores, max, x, e);
}

void qs8_softmax_exp_rows__avx512vnni(int rows, const int* limits, const int32_t* scores, int stride,
                                      const SoftmaxExpParams& params, uint16_t* e, uint32_t* sums) {
  const ExpParams16 x = exp_params16(params);
  if (params.pre_shift != 0) {
    exp_rows<true>(rows, limits, scores, stride, x, e, sums);
  } else {
    exp_rows<false>(rows, limits, scores, stride, x, e, sums);
  }
}

}  // namespace kernels
}  // namespace edgeattn
