// AVX-VNNI int8 dot products (VEX VPDPBUSD, compiled with -mavxvnni; only
// reached after cpu_supports(KernelPath::kAvxVnni)).
//
// Linear: VPDPBUSD multiplies unsigned by signed bytes. The packed K4N16
// weights (packed_weights.h) are the unsigned operand, offset by 128
// (u = w ^ 0x80 = w + 128), and the row's 4 inputs, broadcast, the signed one:
//   sum_k (w_k + 128) x_k = sum_k w_k x_k + 128 sum_k x_k,
// so 128 times the row's input sum is subtracted afterwards. One 64-byte
// group (16 channels x 4 inputs) is two ymm of 8 channels: the accumulator
// lanes are the output channels, no horizontal sums. VPDPBUSD (not VPDPBUSDS)
// adds without saturation, and everything wraps in 32 bits like the
// reference, so the result is the exact sum whenever that fits int32.
// Requantization comes from the avx2 driver (linear.cc).
//
// The avx512vnni path has its own zmm kernels (linear_avx512vnni.cc,
// attention_avx512vnni.cc); this file is the VEX (AVX-VNNI) path only.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "avx2_kernels.h"
#include "edgeattn/kernels/packed_weights.h"

#define EA_DPBUSD _mm256_dpbusd_avx_epi32

namespace edgeattn {
namespace kernels {

namespace {

inline __m256i load32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m128i vnni_hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

}  // namespace

namespace {

// acc[r][0..16) for R rows against one 16-channel block (2 x R accumulators).
// sum_k x[k] (wrapping) as sum_k (x[k] ^ 0x80) - 128 n: VPSADBW adds the
// offset (unsigned) bytes 8 at a time into 64-bit lanes.
inline uint32_t row_sum(const int8_t* x, int n) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i s = _mm256_setzero_si256();
  int k = 0;
  for (; k + 32 <= n; k += 32) {
    s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_xor_si256(load32(x + k), flip), _mm256_setzero_si256()));
  }
  const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  uint32_t sum = static_cast<uint32_t>(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1)) - 128u * static_cast<uint32_t>(k);
  for (; k < n; ++k) sum += static_cast<uint32_t>(static_cast<int32_t>(x[k]));
  return sum;
}

// The K loop of block_vnni<4> with 8 named accumulators, updated in place:
// GCC 12 compiles the accumulator-array loop with a register copy per
// accumulator and step and three spills (as in the attention tiles);
// named variables keep them in registers.
#define EA_ACC_ROW(r)                                                  \
  {                                                                    \
    int32_t word;                                                      \
    std::memcpy(&word, xr[r] + 4 * static_cast<ptrdiff_t>(g), 4);      \
    const __m256i xv = _mm256_set1_epi32(word);                        \
    a##r##0 = EA_DPBUSD(a##r##0, w0, xv);                              \
    a##r##1 = EA_DPBUSD(a##r##1, w1, xv);                              \
  }
__attribute__((noinline)) void acc_4x2(const int8_t* const* xr, const int8_t* wb, int groups, __m256i (*a)[2]) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i a00 = a[0][0], a01 = a[0][1], a10 = a[1][0], a11 = a[1][1];
  __m256i a20 = a[2][0], a21 = a[2][1], a30 = a[3][0], a31 = a[3][1];
  for (int g = 0; g < groups; ++g) {
    const __m256i w0 = _mm256_xor_si256(load32(wb + 64 * static_cast<ptrdiff_t>(g)), flip);
    const __m256i w1 = _mm256_xor_si256(load32(wb + 64 * static_cast<ptrdiff_t>(g) + 32), flip);
    EA_ACC_ROW(0) EA_ACC_ROW(1) EA_ACC_ROW(2) EA_ACC_ROW(3)
  }
  a[0][0] = a00; a[0][1] = a01; a[1][0] = a10; a[1][1] = a11;
  a[2][0] = a20; a[2][1] = a21; a[3][0] = a30; a[3][1] = a31;
}
#undef EA_ACC_ROW

// corr[r] = 128 * sum_k x_r[k] (wrapping, like the accumulators).
template <int R>
void block_vnni(int in_features, const int8_t* x, int x_stride, const uint32_t* corr,
                const int8_t* wb, int32_t* acc, int acc_stride) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const int groups = in_features / 4;
  const int8_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  __m256i a[R][2];
  for (int r = 0; r < R; ++r) a[r][0] = a[r][1] = _mm256_setzero_si256();
  if constexpr (R == 4) {
    acc_4x2(xr, wb, groups, a);
  } else {
    for (int g = 0; g < groups; ++g) {
      const __m256i w0 = _mm256_xor_si256(load32(wb + 64 * g), flip);
      const __m256i w1 = _mm256_xor_si256(load32(wb + 64 * g + 32), flip);
      for (int r = 0; r < R; ++r) {
        int32_t word;
        std::memcpy(&word, xr[r] + 4 * g, 4);
        const __m256i xv = _mm256_set1_epi32(word);
        a[r][0] = EA_DPBUSD(a[r][0], w0, xv);
        a[r][1] = EA_DPBUSD(a[r][1], w1, xv);
      }
    }
  }
  if (4 * groups < in_features) {  // the last, partial group: inputs past the row are 0
    const __m256i w0 = _mm256_xor_si256(load32(wb + 64 * groups), flip);
    const __m256i w1 = _mm256_xor_si256(load32(wb + 64 * groups + 32), flip);
    for (int r = 0; r < R; ++r) {
      int32_t word = 0;
      std::memcpy(&word, xr[r] + 4 * groups, static_cast<size_t>(in_features - 4 * groups));
      const __m256i xv = _mm256_set1_epi32(word);
      a[r][0] = EA_DPBUSD(a[r][0], w0, xv);
      a[r][1] = EA_DPBUSD(a[r][1], w1, xv);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256i c = _mm256_set1_epi32(static_cast<int32_t>(corr[r]));
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ar), _mm256_sub_epi32(a[r][0], c));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ar + 8), _mm256_sub_epi32(a[r][1], c));
  }
}

}  // namespace

void qs8_linear_acc__avxvnni(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                             const int8_t* w, int32_t* acc, int acc_stride) {
  const size_t block_bytes = packed_block_bytes(in_features);
  // The driver calls this once per 64-channel chunk, so the row sums are
  // redone per chunk: VPSADBW keeps that to in/32 steps per row.
  uint32_t corr[kLinearAccMaxRows];
  for (int r = 0; r < rows; ++r) {
    corr[r] = 128u * row_sum(x + static_cast<ptrdiff_t>(r) * x_stride, in_features);
  }
  for (int b = 0; b < blocks; ++b) {
    const int8_t* wb = w + static_cast<ptrdiff_t>(b) * static_cast<ptrdiff_t>(block_bytes);
    int32_t* ab = acc + 16 * b;
    switch (rows) {  // up to 4 rows x 16 channels: 8 accumulators + 2 weights
      case 4: block_vnni<4>(in_features, x, x_stride, corr, wb, ab, acc_stride); break;
      case 3: block_vnni<3>(in_features, x, x_stride, corr, wb, ab, acc_stride); break;
      case 2: block_vnni<2>(in_features, x, x_stride, corr, wb, ab, acc_stride); break;
      default: block_vnni<1>(in_features, x, x_stride, corr, wb, ab, acc_stride); break;
    }
  }
}

// The table entries (the wrappers themselves have no VNNI instruction; they
// only pass the VNNI accumulator to the AVX2 driver).
void qs8_linear__avxvnni(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                         int y_stride) {
  qs8_linear_with__avx2(qs8_linear_acc__avxvnni, rows, out_features, in_features, x, x_stride, w,
                        bias, mult, shift, per_channel, y_zp, y, y_stride);
}

void qs8_linear_res__avxvnni(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                             const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                             int y_stride) {
  qs8_linear_res_with__avx2(qs8_linear_acc__avxvnni, rows, out_features, in_features, x, x_stride, w,
                            bias, mult, shift, per_channel, res, y, y_stride);
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
