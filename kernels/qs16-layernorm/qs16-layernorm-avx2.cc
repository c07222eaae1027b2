// qs16_layernorm (requant.h contract 4b: int16 rows, int8 and/or int16
// output) with AVX2, bit-identical to kernels/ref/layernorm.cc.
#include <immintrin.h>

#include <cstring>

#include "isa/x86/avx2_common.h"
#include "isa/x86/block_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {
namespace {

inline __m256i load16_s16(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// S = sum x_i (VPMADDWD with ones: pairs of int16 into int32 lanes, |S| <=
// 2^29 as in the reference) and Q = sum x_i^2: VPMADDWD of x with itself
// gives x_{2j}^2 + x_{2j+1}^2 <= 2^31, exact as uint32 (it wraps as int32
// only for two -32768s), widened to 64-bit lanes at once (the even and odd
// dwords of each qword separately).
void row_sums16(const int16_t* x, int d, int32_t* sum, int64_t* sum_sq) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFFll);
  __m256i vs = _mm256_setzero_si256(), vq = _mm256_setzero_si256();
  int i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256i v = load16_s16(x + i);
    vs = _mm256_add_epi32(vs, _mm256_madd_epi16(v, ones));
    const __m256i sq = _mm256_madd_epi16(v, v);
    vq = _mm256_add_epi64(vq, _mm256_add_epi64(_mm256_and_si256(sq, lo32), _mm256_srli_epi64(sq, 32)));
  }
  int32_t s = avx2::hsum_s32(vs);
  alignas(32) int64_t q4[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(q4), vq);
  int64_t q = q4[0] + q4[1] + q4[2] + q4[3];
  for (; i < d; ++i) {
    s += x[i];
    q += static_cast<int32_t>(x[i]) * x[i];
  }
  *sum = s;
  *sum_sq = q;
}

// Steps 4 and 5 of contract 4b for 8 elements; the caller requantizes.
// As qs8-layernorm-avx2.cc: with K = 2^62 + 2^(s-1), c inv + K is positive
// (|c inv| < 2^60) and below 2^63, so a logical 64-bit shift gives
// floor((c inv + 2^(s-1)) / 2^s) + 2^(62-s), and the low dword minus
// 2^(62-s) mod 2^32 is y_q mod 2^32 (s in [2, 53]). That is y_q, and the
// clamp never binds, by the argument there with D >= 4^p d^2 var:
// |c_i| 2^60 / sqrt(D 4^k) 2^-s = |c_i| 2^(p+f) / sqrt(D) <= sqrt(d - 1) 2^f
// <= 2^14 (Samuelson), plus less than 2^-14 from the roundings of r and inv.
struct LnRow {
  __m256i d, sum, inv, k, off;
  __m128i s;
};

inline LnRow ln_row(int d, int32_t sum, const LayerNormRowScale& rs) {
  LnRow r;
  r.d = _mm256_set1_epi32(d);
  r.sum = _mm256_set1_epi32(sum);
  r.inv = _mm256_set1_epi32(rs.inv);
  r.k = _mm256_set1_epi64x(static_cast<int64_t>((uint64_t{1} << 62) + (uint64_t{1} << (rs.shift - 1))));
  r.off = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(uint64_t{1} << (62 - rs.shift))));
  r.s = _mm_cvtsi32_si128(rs.shift);
  return r;
}

inline __m256i ln_acc8(const LnRow& r, __m256i x, const int16_t* gain, const int32_t* bias) {
  const __m256i c = _mm256_sub_epi32(_mm256_mullo_epi32(x, r.d), r.sum);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(c, r.inv), r.k);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(c, 32), r.inv), r.k);
  const __m256i y = _mm256_blend_epi32(_mm256_srl_epi64(pe, r.s), _mm256_slli_epi64(_mm256_srl_epi64(po, r.s), 32), 0xAA);
  const __m256i yq = _mm256_sub_epi32(y, r.off);
  // y_q g as VPMADDWD of y_q's low half (y_q fits int16) with g zero-extended.
  const __m256i g = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(gain)));
  return _mm256_add_epi32(_mm256_madd_epi16(yq, g), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias)));
}

// The outputs of 16 elements (acc0: 0-7, acc1: 8-15): int8 (sat8(clamp(y,
// +-512) + zp): VPACKSSDW, VPADDSW, VPACKSSWB) and/or int16 (sat16(y):
// VPACKSSDW), each with its own requantization.
struct Outs {
  avx2::Rq8 rq8, rq16;
  __m256i zp16;
  bool out8, out16;
};

inline void ln_out16(const Outs& o, __m256i acc0, __m256i acc1, int8_t* y8, int16_t* y16) {
  if (o.out8) {
    const __m256i y0 = avx2::requantize_x8(acc0, o.rq8), y1 = avx2::requantize_x8(acc1, o.rq8);
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xD8);
    const __m256i s = _mm256_adds_epi16(p, o.zp16);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y8),
                     _mm_packs_epi16(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1)));
  }
  if (o.out16) {
    const __m256i y0 = avx2::requantize_x8(acc0, o.rq16), y1 = avx2::requantize_x8(acc1, o.rq16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y16), _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xD8));
  }
}

inline void ln_x16(const LnRow& r, const Outs& o, const int16_t* x, const int16_t* gain, const int32_t* bias,
                   int8_t* y8, int16_t* y16) {
  const __m256i xv = load16_s16(x);
  const __m256i a0 = ln_acc8(r, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(xv)), gain, bias);
  const __m256i a1 = ln_acc8(r, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(xv, 1)), gain + 8, bias + 8);
  ln_out16(o, a0, a1, y8, y16);
}

}  // namespace

// Rows in batches of 16: their sums and row scales first (the 15 root steps
// on vectors of rows), then their elements. A row's elements are read before
// its int16 outputs at the same places are written (y16 may be x).
void qs16_layernorm__avx2(const QS16LayerNormArgs& a) {
  constexpr int kBatch = 16;
  const int d = a.dim;
  Outs o;
  o.out8 = a.y8 != nullptr;
  o.out16 = a.y16 != nullptr;
  o.rq8 = avx2::rq8_uniform(a.mult, a.shift);
  o.rq16 = avx2::rq8_uniform(a.mult16, a.shift16);
  o.zp16 = _mm256_set1_epi16(static_cast<int16_t>(a.y_zp));
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch];
    int64_t sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums16(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    avx2::layernorm16_row_scales_x16(nb, d, sum, sum_sq, a.eps_term, rs);
    for (int b = 0; b < nb; ++b) {
      const int16_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y8 = o.out8 ? a.y8 + static_cast<ptrdiff_t>(row0 + b) * a.y8_stride : nullptr;
      int16_t* y16 = o.out16 ? a.y16 + static_cast<ptrdiff_t>(row0 + b) * a.y16_stride : nullptr;
      const LnRow r = ln_row(d, sum[b], rs[b]);
      int i = 0;
      for (; i + 16 <= d; i += 16) {
        ln_x16(r, o, x + i, a.gain + i, a.bias + i, o.out8 ? y8 + i : nullptr, o.out16 ? y16 + i : nullptr);
      }
      if (i < d) {  // the last 1-15 elements through zero-padded copies
        const int n = d - i;
        alignas(32) int16_t xb[16] = {}, gb[16] = {}, yb16[16];
        alignas(32) int32_t bb[16] = {};
        alignas(16) int8_t yb8[16];
        std::memcpy(xb, x + i, n * sizeof(int16_t));
        std::memcpy(gb, a.gain + i, n * sizeof(int16_t));
        std::memcpy(bb, a.bias + i, n * sizeof(int32_t));
        ln_x16(r, o, xb, gb, bb, yb8, yb16);
        if (o.out8) std::memcpy(y8 + i, yb8, n);
        if (o.out16) std::memcpy(y16 + i, yb16, n * sizeof(int16_t));
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
