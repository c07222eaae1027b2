// The AVX-VNNI linear accumulation (VEX VPDPBUSD, compiled with -mavxvnni; only
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
// Requantization comes from the avx2 driver (isa/x86/linear_avx2.cc).
//
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

}  // namespace kernels
}  // namespace edgeattn
