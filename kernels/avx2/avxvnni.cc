// AVX-VNNI int8 dot products (VEX VPDPBUSD, compiled with -mavxvnni; only
// reached after cpu_supports(KernelPath::kAvxVnni)). VPDPBUSD multiplies
// unsigned by signed bytes, so the weight byte is offset: u = w ^ 0x80 =
// w + 128 in [0, 255] and
//   sum_k (w_k + 128) x_k = sum_k w_k x_k + 128 sum_k x_k,
// corrected with the activation row sum (computed per row and 64-channel chunk, over
// the same zero-padded range). Weights stay in the canonical layout, read in
// place; no repacking, nothing stored. VPDPBUSD (not VPDPBUSDS) adds without
// saturation, and the correction is subtracted in wrapping 32-bit arithmetic,
// so the result is the exact sum whenever that fits int32 (as in the reference).
// Requantization and tails come from qs8_linear_with__avx2 (linear.cc).
//
// The same code is built twice: here with the VEX form (AVX-VNNI), and via
// avx512vnni.cc with EA_VNNI_EVEX defined, as the EVEX-encoded 256-bit form
// (AVX512-VNNI + AVX512VL), for CPUs that have AVX-512 VNNI but no AVX-VNNI
// (AMD Zen 4, Intel Ice Lake / Cascade Lake). Same instruction, same results.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "avx2_kernels.h"

#if defined(EA_VNNI_EVEX)
#define EA_DPBUSD _mm256_dpbusd_epi32
#define EA_VNNI_FN(name) name##__avx512vnni
#else
#define EA_DPBUSD _mm256_dpbusd_avx_epi32
#define EA_VNNI_FN(name) name##__avxvnni
#endif

namespace edgeattn {
namespace kernels {

namespace {

inline __m256i zext16(const int8_t* p) {
  return _mm256_inserti128_si256(_mm256_setzero_si256(),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), 0);
}
inline __m256i load32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m128i vnni_hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

inline int32_t vnni_hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

template <int R>
void acc_block_vnni(int n_out, int kblocks, const int8_t* x, int x_stride, const int8_t* xtail,
                    const int8_t* w, int w_stride, int32_t* acc, int acc_stride) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const int pairs = kblocks / 2;
  const bool odd = (kblocks & 1) != 0;
  const int8_t* xr[R];
  uint32_t corr[R];  // 128 * sum x, wrapping (like the accumulators)
  for (int r = 0; r < R; ++r) {
    xr[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
    int32_t s = 0;
    for (int k = 0; k < 16 * kblocks; ++k) s += xr[r][k];
    if (xtail != nullptr) {
      for (int k = 0; k < 16; ++k) s += xtail[16 * r + k];
    }
    corr[r] = 128u * static_cast<uint32_t>(s);
  }
  // The odd block and the tail block are loaded as zero-extended 256-bit
  // vectors where they are used (the upper x lanes are 0, so (0 ^ 0x80) * 0
  // adds nothing). Kept in registers across the channel loop they pushed
  // three accumulators of the 2 x 4 tile to the stack (GCC 12).
  const int off_odd = 32 * pairs;
  const int off_tail = 16 * kblocks;
  int n = 0;
  for (; n + 4 <= n_out; n += 4) {
    const int8_t* wp[4];
    for (int i = 0; i < 4; ++i) wp[i] = w + static_cast<ptrdiff_t>(n + i) * w_stride;
    __m256i a[R][4];
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < 4; ++i) a[r][i] = _mm256_setzero_si256();
    for (int b = 0; b < pairs; ++b) {
      __m256i wv[4];
      for (int i = 0; i < 4; ++i) wv[i] = _mm256_xor_si256(load32(wp[i] + 32 * b), flip);
      for (int r = 0; r < R; ++r) {
        const __m256i xv = load32(xr[r] + 32 * b);
        for (int i = 0; i < 4; ++i) a[r][i] = EA_DPBUSD(a[r][i], wv[i], xv);
      }
    }
    if (odd) {
      for (int i = 0; i < 4; ++i) {
        const __m256i wv = _mm256_xor_si256(zext16(wp[i] + off_odd), flip);
        for (int r = 0; r < R; ++r) a[r][i] = EA_DPBUSD(a[r][i], wv, zext16(xr[r] + off_odd));
      }
    }
    if (xtail != nullptr) {
      for (int i = 0; i < 4; ++i) {
        const __m256i wv = _mm256_xor_si256(zext16(wp[i] + off_tail), flip);
        for (int r = 0; r < R; ++r) a[r][i] = EA_DPBUSD(a[r][i], wv, zext16(xtail + 16 * r));
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m128i s = _mm_sub_epi32(vnni_hsum4(a[r][0], a[r][1], a[r][2], a[r][3]), _mm_set1_epi32(static_cast<int32_t>(corr[r])));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + static_cast<ptrdiff_t>(r) * acc_stride + n), s);
    }
  }
  for (; n < n_out; ++n) {
    const int8_t* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
    __m256i a[R];
    for (int r = 0; r < R; ++r) a[r] = _mm256_setzero_si256();
    for (int b = 0; b < pairs; ++b) {
      const __m256i wv = _mm256_xor_si256(load32(wr + 32 * b), flip);
      for (int r = 0; r < R; ++r) a[r] = EA_DPBUSD(a[r], wv, load32(xr[r] + 32 * b));
    }
    if (odd) {
      const __m256i wv = _mm256_xor_si256(zext16(wr + off_odd), flip);
      for (int r = 0; r < R; ++r) a[r] = EA_DPBUSD(a[r], wv, zext16(xr[r] + off_odd));
    }
    if (xtail != nullptr) {
      const __m256i wv = _mm256_xor_si256(zext16(wr + off_tail), flip);
      for (int r = 0; r < R; ++r) a[r] = EA_DPBUSD(a[r], wv, zext16(xtail + 16 * r));
    }
    for (int r = 0; r < R; ++r) acc[static_cast<ptrdiff_t>(r) * acc_stride + n] =
        static_cast<int32_t>(static_cast<uint32_t>(vnni_hsum(a[r])) - corr[r]);
  }
}

}  // namespace

void EA_VNNI_FN(qs8_linear_acc)(int rows, int n_out, int kblocks, const int8_t* x, int x_stride,
                             const int8_t* xtail, const int8_t* w, int w_stride, int32_t* acc,
                             int acc_stride) {
  // Rows in pairs (2 rows x 4 channels = 8 accumulators + 4 weight vectors).
  for (int r = 0; r < rows; r += 2) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    const int8_t* xt = xtail != nullptr ? xtail + 16 * r : nullptr;
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
    if (rows - r >= 2) {
      acc_block_vnni<2>(n_out, kblocks, xr, x_stride, xt, w, w_stride, ar, acc_stride);
    } else {
      acc_block_vnni<1>(n_out, kblocks, xr, x_stride, xt, w, w_stride, ar, acc_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn

// The table entry (the wrapper itself has no VNNI instruction; it only passes
// the VNNI accumulator to the AVX2 driver).
namespace edgeattn {
namespace kernels {
void EA_VNNI_FN(qs8_linear)(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, int w_stride, const int32_t* bias,
                         const int32_t* mult, const int32_t* shift, int per_channel, int32_t y_zp,
                         int8_t* y, int y_stride) {
  qs8_linear_with__avx2(EA_VNNI_FN(qs8_linear_acc), rows, out_features, in_features, x, x_stride, w,
                        w_stride, bias, mult, shift, per_channel, y_zp, y, y_stride);
}
}  // namespace kernels
}  // namespace edgeattn

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
namespace edgeattn {
namespace kernels {
namespace {

inline int32_t sum_q_minus_zp(int d, const int8_t* q, int32_t q_zp) {
  uint32_t s = 0;
  for (int i = 0; i < d; ++i) s += static_cast<uint32_t>(static_cast<int32_t>(q[i]) - q_zp);
  return static_cast<int32_t>(s);
}

}  // namespace

void EA_VNNI_FN(qs8_qk_rows2)(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
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

void EA_VNNI_FN(qs8_attention)(const QS8AttentionArgs& a) {
  qs8_attention_with__avx2(EA_VNNI_FN(qs8_qk_rows2), a);
}

}  // namespace kernels
}  // namespace edgeattn
