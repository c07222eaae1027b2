// AVX-512 (F, BW, VL) LayerNorm of the AVX512-VNNI path: the same integers as kernels/ref/layernorm.cc and elementwise.cc
// (contracts 4 and 6 of requant.h) on 16 lanes, with masked loads and stores for
// the row tails. qs8-layernorm-avx2.cc explains the arithmetic.
#include <immintrin.h>

#include <atomic>

#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "isa/x86/block_common.h"
#include "isa/x86/lut_rows_avx512.h"
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

inline __mmask16 tail16(int m) { return static_cast<__mmask16>(m >= 16 ? 0xFFFFu : (1u << m) - 1u); }

// S and Q with VPDPBUSD (no saturation): S = sum 1 x_i and
// Q = sum (x_i + 128) x_i - 128 S ((x_i + 128) as the unsigned operand).
void row_sums(const int8_t* x, int d, int32_t* sum, int32_t* sum_sq) {
  const __m512i ones = _mm512_set1_epi8(1), flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i vs = _mm512_setzero_si512(), vq = _mm512_setzero_si512();
  for (int i = 0; i < d; i += 64) {
    const int m = d - i;
    const __mmask64 k = m >= 64 ? ~__mmask64{0} : (__mmask64{1} << m) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(k, x + i);
    vs = _mm512_dpbusd_epi32(vs, ones, v);
    vq = _mm512_dpbusd_epi32(vq, _mm512_xor_si512(v, flip), v);
  }
  const int32_t s = _mm512_reduce_add_epi32(vs);
  *sum = s;
  *sum_sq = static_cast<int32_t>(static_cast<uint32_t>(_mm512_reduce_add_epi32(vq)) - 128u * static_cast<uint32_t>(s));
}

// Step 4 with VPSRAQ (AVX-512 has the 64-bit arithmetic shift). |y_q| <= 2^14
// (qs8-layernorm-avx2.cc): the clamp to +-32767 never binds and is left out (7 % of the
// time), and y_q g is VPMADDWD of y_q's low half with g zero-extended.
struct LnRow {
  __m512i d, neg_sum, inv, rnd;
  __m128i s;
};

inline __m512i ln_acc16(const LnRow& r, __m512i x, __m512i g, __m512i bias) {
  // c = d x - S as VPDPWSSD of x's low half (x fits int16) with d zero-extended.
  const __m512i c = _mm512_dpwssd_epi32(r.neg_sum, x, r.d);
  const __m512i pe = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(c, r.inv), r.rnd), r.s);
  const __m512i po = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(c, 32), r.inv), r.rnd), r.s);
  const __m512i y = _mm512_mask_shuffle_epi32(pe, 0xAAAA, po, _MM_PERM_CDAB);  // odd dwords from po's even ones
  return _mm512_dpwssd_epi32(bias, y, g);
}

}  // namespace

void qs8_layernorm__avx512vnni(const QS8LayerNormArgs& a) {
  constexpr int kBatch = 16;
  const int d = a.dim;
  const avx512::Rq16 rq = avx512::make_rq16(_mm512_set1_epi32(a.mult), _mm512_set1_epi32(a.shift));
  const __m512i zp = _mm512_set1_epi32(a.y_zp);
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch], sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    avx2::layernorm_row_scales_x16(nb, d, sum, sum_sq, a.eps_term, rs);
    for (int b = 0; b < nb; ++b) {
      const int8_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y = a.y + static_cast<ptrdiff_t>(row0 + b) * a.y_stride;
      LnRow r;
      r.d = _mm512_set1_epi32(d);
      r.neg_sum = _mm512_set1_epi32(-sum[b]);
      r.inv = _mm512_set1_epi32(rs[b].inv);
      r.rnd = _mm512_set1_epi64(int64_t{1} << (rs[b].shift - 1));
      r.s = _mm_cvtsi32_si128(rs[b].shift);
      int i = 0;
      for (; i + 16 <= d; i += 16) {
        const __m512i acc = ln_acc16(r, _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))),
                                     _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.gain + i))),
                                     _mm512_loadu_si512(a.bias + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), avx512::requantize_s8_x16(acc, rq, zp));
      }
      if (i < d) {
        const __mmask16 k = tail16(d - i);
        const __m512i acc = ln_acc16(r, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(k, x + i)),
                                     _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, a.gain + i)),
                                     _mm512_maskz_loadu_epi32(k, a.bias + i));
        _mm_mask_storeu_epi8(y + i, k, avx512::requantize_s8_x16(acc, rq, zp));
      }
    }
  }
}

// y = table[x + 128]: VPSHUFB of each 16-byte slice T_j by the low nibble of
// v = x + 128, then a binary tree over v's high nibble: bit 4 picks between
// T_2k and T_2k+1 (a masked shuffle), bits 5-7 between the pairs' results
// (masked blends). Four bit tests make all the masks; the tree's levels are

}  // namespace kernels
}  // namespace edgeattn
