// The x86 attention below the tiles (qs8_attention_with__avx2): query rows
// two at a time with a two-row Q.K step (qs8_qk_rows2__avx2 here, or the
// VNNI / zmm ones) and a two-row P.V, the rest through the shared row driver.
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

// The two-row Q.K step for head dims of exactly 16 * KB (+ 8 with HALF:
// 8, 16, 24, 32, 48, 64): the zero-point-corrected query vectors stay in
// registers for every key instead of being widened and corrected again per
// group of 4 keys. An 8-wide block has zeros in its upper key lanes, so
// q - zq there adds nothing (as in qs8_qk_row__avx2).
template <int KB, bool HALF>
void qk_rows2_whole_blocks(int n, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                           const int8_t* k, int k_stride, __m128i base0, __m128i base1,
                           int32_t* scores0, int32_t* scores1) {
  constexpr int kVecs = KB + (HALF ? 1 : 0);
  const __m256i zq = _mm256_set1_epi16(static_cast<int16_t>(q_zp));
  __m256i qa[kVecs], qb[kVecs];
  for (int b = 0; b < KB; ++b) {
    qa[b] = _mm256_sub_epi16(load16_s16(q0 + 16 * b), zq);
    qb[b] = _mm256_sub_epi16(load16_s16(q1 + 16 * b), zq);
  }
  if (HALF) {
    qa[kVecs - 1] = _mm256_sub_epi16(load8_s16(q0 + 16 * KB), zq);
    qb[kVecs - 1] = _mm256_sub_epi16(load8_s16(q1 + 16 * KB), zq);
  }
  for (int j = 0; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (int b = 0; b < kVecs; ++b) {
      const bool half = HALF && b == kVecs - 1;
      const int8_t* kb = k0 + 16 * b;
      const __m256i v0 = half ? load8_s16(kb) : load16_s16(kb);
      const __m256i v1 = half ? load8_s16(kb + k_stride) : load16_s16(kb + k_stride);
      const __m256i v2 = half ? load8_s16(kb + 2 * static_cast<ptrdiff_t>(k_stride))
                              : load16_s16(kb + 2 * static_cast<ptrdiff_t>(k_stride));
      const __m256i v3 = half ? load8_s16(kb + 3 * static_cast<ptrdiff_t>(k_stride))
                              : load16_s16(kb + 3 * static_cast<ptrdiff_t>(k_stride));
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(qa[b], v0));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(qa[b], v1));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(qa[b], v2));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(qa[b], v3));
      b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(qb[b], v0));
      b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(qb[b], v1));
      b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(qb[b], v2));
      b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(qb[b], v3));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores0 + j), _mm_add_epi32(hsum4_s32(a0, a1, a2, a3), base0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores1 + j), _mm_add_epi32(hsum4_s32(b0, b1, b2, b3), base1));
  }
}

// The whole-block Q.K step for this head dim, or null.
using QkRows2WholeFn = void (*)(int, const int8_t*, const int8_t*, int32_t, const int8_t*, int,
                                __m128i, __m128i, int32_t*, int32_t*);
QkRows2WholeFn qk_rows2_whole_blocks_for(int dim) {
  switch (dim) {
    case 8: return qk_rows2_whole_blocks<0, true>;
    case 16: return qk_rows2_whole_blocks<1, false>;
    case 24: return qk_rows2_whole_blocks<1, true>;
    case 32: return qk_rows2_whole_blocks<2, false>;
    case 48: return qk_rows2_whole_blocks<3, false>;
    case 64: return qk_rows2_whole_blocks<4, false>;
    default: return nullptr;
  }
}

}  // namespace

// scores0/1[j] = Q.K scores of rows q0/q1 for keys 0..n-1.
void qs8_qk_rows2__avx2(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                        const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                        int32_t* scores1) {
  const int kblocks = dim / 16;
  const int d16 = 16 * kblocks;
  const bool half = dim - d16 >= 8;  // as in qs8_qk_row__avx2
  const int d = d16 + (half ? 8 : 0);
  uint32_t sum0 = 0, sum1 = 0;
  for (int i = 0; i < d; ++i) {
    sum0 += static_cast<uint32_t>(static_cast<int32_t>(q0[i]) - q_zp);
    sum1 += static_cast<uint32_t>(static_cast<int32_t>(q1[i]) - q_zp);
  }
  const __m128i base0 = _mm_set1_epi32(static_cast<int32_t>(0u - static_cast<uint32_t>(k_zp) * sum0));
  const __m128i base1 = _mm_set1_epi32(static_cast<int32_t>(0u - static_cast<uint32_t>(k_zp) * sum1));
  const __m256i zq = _mm256_set1_epi16(static_cast<int16_t>(q_zp));
  int j = 0;
  if (const QkRows2WholeFn whole = qk_rows2_whole_blocks_for(dim)) {
    whole(n, q0, q1, q_zp, k, k_stride, base0, base1, scores0, scores1);
    j = n & ~3;
  }
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (int b = 0; b < kblocks; ++b) {
      const __m256i qa = _mm256_sub_epi16(load16_s16(q0 + 16 * b), zq);
      const __m256i qb = _mm256_sub_epi16(load16_s16(q1 + 16 * b), zq);
      const __m256i v0 = load16_s16(k0 + 16 * b), v1 = load16_s16(k1 + 16 * b);
      const __m256i v2 = load16_s16(k2 + 16 * b), v3 = load16_s16(k3 + 16 * b);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(qa, v0));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(qa, v1));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(qa, v2));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(qa, v3));
      b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(qb, v0));
      b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(qb, v1));
      b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(qb, v2));
      b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(qb, v3));
    }
    if (half) {
      const __m256i qa = _mm256_sub_epi16(load8_s16(q0 + d16), zq);
      const __m256i qb = _mm256_sub_epi16(load8_s16(q1 + d16), zq);
      const __m256i v0 = load8_s16(k0 + d16), v1 = load8_s16(k1 + d16);
      const __m256i v2 = load8_s16(k2 + d16), v3 = load8_s16(k3 + d16);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(qa, v0));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(qa, v1));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(qa, v2));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(qa, v3));
      b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(qb, v0));
      b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(qb, v1));
      b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(qb, v2));
      b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(qb, v3));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores0 + j),
                     _mm_add_epi32(hsum4_s32(a0, a1, a2, a3), base0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores1 + j),
                     _mm_add_epi32(hsum4_s32(b0, b1, b2, b3), base1));
    if (d < dim) {
      for (int t = 0; t < 4; ++t) {
        const int8_t* kr = k0 + static_cast<ptrdiff_t>(t) * k_stride;
        int32_t acc0 = 0, acc1 = 0;
        for (int i = d; i < dim; ++i) {
          acc0 += (q0[i] - q_zp) * (kr[i] - k_zp);
          acc1 += (q1[i] - q_zp) * (kr[i] - k_zp);
        }
        scores0[j + t] += acc0;
        scores1[j + t] += acc1;
      }
    }
  }
  if (j < n) {  // the last 1-3 keys, row by row
    qs8_qk_row__avx2(n - j, dim, q0, q_zp, k + static_cast<ptrdiff_t>(j) * k_stride, k_stride,
                     k_zp, scores0 + j);
    qs8_qk_row__avx2(n - j, dim, q1, q_zp, k + static_cast<ptrdiff_t>(j) * k_stride, k_stride,
                     k_zp, scores1 + j);
  }
}

namespace {

// out0/out1 = P.V of two probability rows over keys 0..n-1 (a shorter row is
// zero-padded up to n by the caller).
void qs8_pv_rows2(int n, int v_dim, const uint16_t* p0, const uint16_t* p1, const int8_t* v,
                  int v_stride, int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp,
                  int8_t* out0, int8_t* out1) {
  uint32_t psum0 = 0, psum1 = 0;
  for (int j = 0; j < n; ++j) {
    psum0 += p0[j];
    psum1 += p1[j];
  }
  const __m256i corr0 = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum0));
  const __m256i corr1 = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum1));
  const Rq8 rq = rq8_uniform(pv_mult, pv_shift);
  const __m128i zp16 = _mm_set1_epi16(static_cast<int16_t>(out_zp));
  int c = 0;
  for (; c + 16 <= v_dim; c += 16) {
    __m256i lo0 = _mm256_setzero_si256(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
    const int8_t* vp = v + c;
    int j = 0;
    for (; j + 2 <= n; j += 2, vp += 2 * static_cast<ptrdiff_t>(v_stride)) {
      const __m256i r0 = load16_s16(vp);
      const __m256i r1 = load16_s16(vp + v_stride);
      const __m256i lo = _mm256_unpacklo_epi16(r0, r1), hi = _mm256_unpackhi_epi16(r0, r1);
      uint32_t pair0, pair1;  // (p_j, p_j+1) as the int16 pairs vpmaddwd wants
      std::memcpy(&pair0, p0 + j, sizeof(pair0));
      std::memcpy(&pair1, p1 + j, sizeof(pair1));
      const __m256i pp0 = _mm256_set1_epi32(static_cast<int32_t>(pair0));
      const __m256i pp1 = _mm256_set1_epi32(static_cast<int32_t>(pair1));
      lo0 = _mm256_add_epi32(lo0, _mm256_madd_epi16(lo, pp0));
      hi0 = _mm256_add_epi32(hi0, _mm256_madd_epi16(hi, pp0));
      lo1 = _mm256_add_epi32(lo1, _mm256_madd_epi16(lo, pp1));
      hi1 = _mm256_add_epi32(hi1, _mm256_madd_epi16(hi, pp1));
    }
    if (j < n) {
      const __m256i r0 = load16_s16(vp);
      pv_add_one(r0, p0[j], &lo0, &hi0);
      pv_add_one(r0, p1[j], &lo1, &hi1);
    }
    store8(out0 + c, add_zp_sat8(requantize_x8(_mm256_sub_epi32(_mm256_permute2x128_si256(lo0, hi0, 0x20), corr0), rq), zp16));
    store8(out0 + c + 8, add_zp_sat8(requantize_x8(_mm256_sub_epi32(_mm256_permute2x128_si256(lo0, hi0, 0x31), corr0), rq), zp16));
    store8(out1 + c, add_zp_sat8(requantize_x8(_mm256_sub_epi32(_mm256_permute2x128_si256(lo1, hi1, 0x20), corr1), rq), zp16));
    store8(out1 + c + 8, add_zp_sat8(requantize_x8(_mm256_sub_epi32(_mm256_permute2x128_si256(lo1, hi1, 0x31), corr1), rq), zp16));
  }
  if (c < v_dim) {  // the last < 16 columns, row by row
    qs8_pv_row__avx2(n, v_dim - c, p0, v + c, v_stride, v_zp, pv_mult, pv_shift, out_zp, out0 + c);
    qs8_pv_row__avx2(n, v_dim - c, p1, v + c, v_stride, v_zp, pv_mult, pv_shift, out_zp, out1 + c);
  }
}

}  // namespace

void qs8_attention_with__avx2(const Qs8AttentionSteps& steps, const QS8AttentionArgs& a) {
  if (a.tile_scratch == nullptr || a.q_len < 2) {
    qs8_attention_rows(steps.rows, a);
    return;
  }
  const Qs8AttnTile t = carve_qs8_attention_tile(a.tile_scratch, a.kv_len, a.head_dim, a.v_dim);
  int32_t* const scores0 = t.scores;
  int32_t* const scores1 = t.scores + t.stride;
  uint16_t* const probs0 = t.probs;
  uint16_t* const probs1 = t.probs + t.stride;
  int r = 0;
  for (; r + 2 <= a.q_len; r += 2) {
    const int n0 = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const int n1 = attention_row_limit(r + 1, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const int n = n0 > n1 ? n0 : n1;
    const int8_t* q0 = a.q + static_cast<ptrdiff_t>(r) * a.q_stride;
    int8_t* out0 = a.out + static_cast<ptrdiff_t>(r) * a.out_stride;
    steps.qk_rows2(n, a.head_dim, q0, q0 + a.q_stride, a.q_zp, a.k, a.k_stride, a.k_zp, scores0,
                   scores1);
    steps.rows.softmax_row(n0, scores0, a.score_mult, a.score_shift, probs0);
    steps.rows.softmax_row(n1, scores1, a.score_mult, a.score_shift, probs1);
    // Keys a row does not attend to get probability 0: they add nothing.
    for (int j = n0; j < n; ++j) probs0[j] = 0;
    for (int j = n1; j < n; ++j) probs1[j] = 0;
    qs8_pv_rows2(n, a.v_dim, probs0, probs1, a.v, a.v_stride, a.v_zp, a.pv_mult, a.pv_shift,
                 a.out_zp, out0, out0 + a.out_stride);
    if (a.weights != nullptr) {
      uint16_t* w0 = a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride;
      write_weights_row(n0, a.kv_len, probs0, w0);
      write_weights_row(n1, a.kv_len, probs1, w0 + a.weights_stride);
    }
  }
  if (r < a.q_len) {  // the last row of an odd count: row r of the layer is row 0 here
    QS8AttentionArgs last = a;
    last.q_len = 1;
    last.q += static_cast<ptrdiff_t>(r) * a.q_stride;
    last.out += static_cast<ptrdiff_t>(r) * a.out_stride;
    if (a.weights != nullptr) last.weights += static_cast<ptrdiff_t>(r) * a.weights_stride;
    last.causal_offset += r;
    qs8_attention_rows(steps.rows, last);
  }
}

}  // namespace kernels
}  // namespace edgeattn
