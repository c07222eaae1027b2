// The avxvnni path's attention below the tiles (qs8_attention__avxvnni; its
// list entry is qs8_attention_tiled__avxvnni): the x86 row-pair driver with
// the VPDPBUSD two-row Q.K step. Compiled with -mavxvnni.
//

// ------------------------------------------------------------------ Q.K ----
// Two query rows against keys 0..n-1 with VPDPBUSD over the first dv =
// 32 * (dim / 32) dimensions; the rest (dim % 32) is the avx2 step on the
// sub-range, which is the same exact sum restricted to those dimensions.
// With u = q ^ 0x80 = q + 128 (unsigned) against the signed key bytes,
//   D_j = sum_i (q_i + 128) k_ji = sum_i q_i k_ji + 128 S_j,  S_j = sum_i k_ji
// and the exact score part is
//   sum_i (q_i - zq)(k_ji - zk) = D_j - (128 + zq) S_j - zk sum_i (q_i - zq).
// S_j comes from one more VPDPBUSD against bytes of 1 per key block. All of
// it in wrapping int32, like the reference, whose sum fits int32.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/packed_weights.h"
#include "isa/x86/avxvnni_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

#ifndef EA_DPBUSD
#define EA_DPBUSD _mm256_dpbusd_avx_epi32
#endif

namespace edgeattn {
namespace kernels {
namespace {

inline int32_t sum_q_minus_zp(int d, const int8_t* q, int32_t q_zp) {
  uint32_t s = 0;
  for (int i = 0; i < d; ++i) s += static_cast<uint32_t>(static_cast<int32_t>(q[i]) - q_zp);
  return static_cast<int32_t>(s);
}

}  // namespace

void qs8_qk_rows2__avxvnni(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                              const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                              int32_t* scores1) {
  const int blocks = dim / 32;
  const int dv = 32 * blocks;
  if (blocks == 0) {
    qs8_qk_rows2__avx2(n, dim, q0, q1, q_zp, k, k_stride, k_zp, scores0, scores1);
    return;
  }
  const bool rest = dv < dim;
  if (rest) {  // scores start as the sums over dimensions dv..dim-1
    qs8_qk_rows2__avx2(n, dim - dv, q0 + dv, q1 + dv, q_zp, k + dv, k_stride, k_zp, scores0,
                       scores1);
  }
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones = _mm256_set1_epi8(1);
  const __m128i kcoef = _mm_set1_epi32(128 + q_zp);
  const __m128i base0 = _mm_set1_epi32(static_cast<int32_t>(
      0u - static_cast<uint32_t>(k_zp) * static_cast<uint32_t>(sum_q_minus_zp(dv, q0, q_zp))));
  const __m128i base1 = _mm_set1_epi32(static_cast<int32_t>(
      0u - static_cast<uint32_t>(k_zp) * static_cast<uint32_t>(sum_q_minus_zp(dv, q1, q_zp))));
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    __m256i s0 = a0, s1 = a0, s2 = a0, s3 = a0;
    for (int b = 0; b < blocks; ++b) {
      const __m256i u0 = _mm256_xor_si256(load32(q0 + 32 * b), flip);
      const __m256i u1 = _mm256_xor_si256(load32(q1 + 32 * b), flip);
      const __m256i k0 = load32(kr + 32 * b);
      const __m256i k1 = load32(kr + k_stride + 32 * b);
      const __m256i k2 = load32(kr + 2 * static_cast<ptrdiff_t>(k_stride) + 32 * b);
      const __m256i k3 = load32(kr + 3 * static_cast<ptrdiff_t>(k_stride) + 32 * b);
      a0 = EA_DPBUSD(a0, u0, k0); a1 = EA_DPBUSD(a1, u0, k1);
      a2 = EA_DPBUSD(a2, u0, k2); a3 = EA_DPBUSD(a3, u0, k3);
      b0 = EA_DPBUSD(b0, u1, k0); b1 = EA_DPBUSD(b1, u1, k1);
      b2 = EA_DPBUSD(b2, u1, k2); b3 = EA_DPBUSD(b3, u1, k3);
      s0 = EA_DPBUSD(s0, ones, k0); s1 = EA_DPBUSD(s1, ones, k1);
      s2 = EA_DPBUSD(s2, ones, k2); s3 = EA_DPBUSD(s3, ones, k3);
    }
    const __m128i corr = _mm_mullo_epi32(vnni_hsum4(s0, s1, s2, s3), kcoef);
    __m128i r0 = _mm_add_epi32(_mm_sub_epi32(vnni_hsum4(a0, a1, a2, a3), corr), base0);
    __m128i r1 = _mm_add_epi32(_mm_sub_epi32(vnni_hsum4(b0, b1, b2, b3), corr), base1);
    if (rest) {
      r0 = _mm_add_epi32(r0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(scores0 + j)));
      r1 = _mm_add_epi32(r1, _mm_loadu_si128(reinterpret_cast<const __m128i*>(scores1 + j)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores0 + j), r0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scores1 + j), r1);
  }
  for (; j < n; ++j) {  // the last 1-3 keys
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc0 = 0, acc1 = 0;
    for (int i = 0; i < dv; ++i) {
      acc0 += (q0[i] - q_zp) * (kr[i] - k_zp);
      acc1 += (q1[i] - q_zp) * (kr[i] - k_zp);
    }
    scores0[j] = rest ? static_cast<int32_t>(static_cast<uint32_t>(scores0[j]) + static_cast<uint32_t>(acc0)) : acc0;
    scores1[j] = rest ? static_cast<int32_t>(static_cast<uint32_t>(scores1[j]) + static_cast<uint32_t>(acc1)) : acc1;
  }
}

void qs8_attention__avxvnni(const QS8AttentionArgs& a) {
  const Qs8AttentionSteps steps = {qs8_qk_rows2__avxvnni,
                                   {qs8_qk_row__avx2, qs8_softmax_row__avx2, qs8_pv_row__avx2}};
  qs8_attention_with__avx2(steps, a);
}

}  // namespace kernels
}  // namespace edgeattn
