// qs16_layernorm (requant.h contract 4b: int16 rows, int8 and/or int16
// output) of the AVX512-VNNI path on 16 lanes with masked tails: the same
// integers as kernels/ref/layernorm.cc. qs16-layernorm-avx2.cc and
// qs8-layernorm-avx2.cc explain the arithmetic; this file has the 64-bit
// arithmetic shift (VPSRAQ) and VPDPWSSD.
#include <immintrin.h>

#include "isa/x86/avx512_common.h"
#include "isa/x86/block_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {
namespace {

inline __mmask16 tail16(int m) { return static_cast<__mmask16>(m >= 16 ? 0xFFFFu : (1u << m) - 1u); }

// S = sum x_i (VPMADDWD with ones) and Q = sum x_i^2: VPMADDWD of x with
// itself gives pairs of squares <= 2^31, exact as uint32, widened to 64-bit
// lanes (even and odd dwords). 32 elements per step, the tail masked.
void row_sums16(const int16_t* x, int d, int32_t* sum, int64_t* sum_sq) {
  const __m512i ones = _mm512_set1_epi16(1), lo32 = _mm512_set1_epi64(0xFFFFFFFFll);
  __m512i vs = _mm512_setzero_si512(), vq = _mm512_setzero_si512();
  for (int i = 0; i < d; i += 32) {
    const int m = d - i;
    const __mmask32 k = m >= 32 ? ~__mmask32{0} : (__mmask32{1} << m) - 1;
    const __m512i v = _mm512_maskz_loadu_epi16(k, x + i);
    vs = _mm512_add_epi32(vs, _mm512_madd_epi16(v, ones));
    const __m512i sq = _mm512_madd_epi16(v, v);
    vq = _mm512_add_epi64(vq, _mm512_add_epi64(_mm512_and_si512(sq, lo32), _mm512_srli_epi64(sq, 32)));
  }
  *sum = _mm512_reduce_add_epi32(vs);
  *sum_sq = _mm512_reduce_add_epi64(vq);
}

struct LnRow {
  __m512i d, neg_sum, inv, rnd;
  __m128i s;
};

// y_q gain + bias for 16 elements (x sign-extended to int32 lanes).
inline __m512i ln_acc16(const LnRow& r, __m512i x, __m512i g, __m512i bias) {
  // c = d x - S as VPDPWSSD of x's low half (int16) with d zero-extended (d <= 16384).
  const __m512i c = _mm512_dpwssd_epi32(r.neg_sum, x, r.d);
  const __m512i pe = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(c, r.inv), r.rnd), r.s);
  const __m512i po = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(c, 32), r.inv), r.rnd), r.s);
  const __m512i y = _mm512_mask_shuffle_epi32(pe, 0xAAAA, po, _MM_PERM_CDAB);  // odd dwords from po's even ones
  return _mm512_dpwssd_epi32(bias, y, g);
}

}  // namespace

void qs16_layernorm__avx512vnni(const QS16LayerNormArgs& a) {
  constexpr int kBatch = 16;
  const int d = a.dim;
  const bool out8 = a.y8 != nullptr, out16 = a.y16 != nullptr;
  const avx512::Rq16 rq8 = avx512::make_rq16(_mm512_set1_epi32(a.mult), _mm512_set1_epi32(a.shift));
  const avx512::Rq16 rq16 = avx512::make_rq16(_mm512_set1_epi32(a.mult16), _mm512_set1_epi32(a.shift16));
  const __m512i zp = _mm512_set1_epi32(a.y_zp);
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch];
    int64_t sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums16(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    avx2::layernorm16_row_scales_x16(nb, d, sum, sum_sq, a.eps_term, rs);
    for (int b = 0; b < nb; ++b) {
      const int16_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y8 = out8 ? a.y8 + static_cast<ptrdiff_t>(row0 + b) * a.y8_stride : nullptr;
      int16_t* y16 = out16 ? a.y16 + static_cast<ptrdiff_t>(row0 + b) * a.y16_stride : nullptr;
      LnRow r;
      r.d = _mm512_set1_epi32(d);
      r.neg_sum = _mm512_set1_epi32(-sum[b]);
      r.inv = _mm512_set1_epi32(rs[b].inv);
      r.rnd = _mm512_set1_epi64(int64_t{1} << (rs[b].shift - 1));
      r.s = _mm_cvtsi32_si128(rs[b].shift);
      for (int i = 0; i < d; i += 16) {
        const __mmask16 k = tail16(d - i);
        const __m512i acc = ln_acc16(r, _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(k, x + i)),
                                     _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, a.gain + i)),
                                     _mm512_maskz_loadu_epi32(k, a.bias + i));
        if (out8) _mm_mask_storeu_epi8(y8 + i, k, avx512::requantize_s8_x16(acc, rq8, zp));
        // sat16: requantize clamped to +-2^16 (exact int32 lanes), then VPMOVSDW.
        if (out16) {
          _mm256_mask_storeu_epi16(y16 + i, k,
                                   _mm512_cvtsepi32_epi16(avx512::requantize_clamp_x16(acc, rq16, int32_t{1} << 16)));
        }
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
