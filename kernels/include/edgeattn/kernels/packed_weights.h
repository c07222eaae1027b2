// The packed int8 weight layout of format version 2 ("K4N16"): the file's
// canonical layout for every int8 linear weight, written by the converter and
// read in place by every kernel path.
//
// A weight W[n][k] (n < N output channels, k < K inputs) is stored in blocks
// of 16 output channels; inside a block, groups of 4 consecutive inputs; inside
// a group, channel-major 4-byte words:
//
//   offset(n, k) = (n / 16) * 16 * Kp  +  (k / 4) * 64  +  (n % 16) * 4  +  k % 4
//
// with Np = round_up(N, 16), Kp = round_up(K, 4) and Np * Kp bytes in all;
// the padding (channels >= N, inputs >= K) is zero. Why this shape: one 64-byte
// group is 16 channels x 4 inputs, which is exactly one 4-byte dot-product
// step for 16 int32 accumulators (VPDPBUSD zmm, four SDOT-by-lane on NEON,
// 4 x 4 on ymm/Helium), so the microkernels stream weights with aligned loads
// and never reduce across lanes. Kernels never rely on the padding's value:
// inputs past K are multiplied as zero and channels past N are not stored.
#ifndef EDGEATTN_KERNELS_PACKED_WEIGHTS_H_
#define EDGEATTN_KERNELS_PACKED_WEIGHTS_H_

#include <cstddef>
#include <cstdint>

namespace edgeattn {
namespace kernels {

constexpr int kPackN = 16;  // output channels per block
constexpr int kPackK = 4;   // inputs per dot-product group

constexpr int packed_n(int n) { return (n + kPackN - 1) / kPackN * kPackN; }
constexpr int packed_k(int k) { return (k + kPackK - 1) / kPackK * kPackK; }
constexpr size_t packed_weight_bytes(int n, int k) {
  return static_cast<size_t>(packed_n(n)) * static_cast<size_t>(packed_k(k));
}
// Bytes of one 16-channel block.
constexpr size_t packed_block_bytes(int k) { return static_cast<size_t>(kPackN) * packed_k(k); }

inline size_t packed_offset(int n, int k, int kp) {
  return static_cast<size_t>(n / kPackN) * kPackN * static_cast<size_t>(kp) +
         static_cast<size_t>(k / kPackK) * (kPackN * kPackK) +
         static_cast<size_t>(n % kPackN) * kPackK + static_cast<size_t>(k % kPackK);
}

// Row-major w[n * w_stride + k] -> packed (dst holds packed_weight_bytes(n, k)
// bytes, padding zeroed). Used by the converter and the tests.
inline void pack_weights_k4n16(int n_out, int k_in, const int8_t* w, int w_stride, int8_t* dst) {
  const int kp = packed_k(k_in);
  const size_t bytes = packed_weight_bytes(n_out, k_in);
  for (size_t i = 0; i < bytes; ++i) dst[i] = 0;
  for (int n = 0; n < n_out; ++n) {
    for (int k = 0; k < k_in; ++k) {
      dst[packed_offset(n, k, kp)] = w[static_cast<ptrdiff_t>(n) * w_stride + k];
    }
  }
}

// Packed -> row-major (the XNNPACK backend and the tools read rows).
inline void unpack_weights_k4n16(int n_out, int k_in, const int8_t* src, int8_t* w, int w_stride) {
  const int kp = packed_k(k_in);
  for (int n = 0; n < n_out; ++n) {
    for (int k = 0; k < k_in; ++k) {
      w[static_cast<ptrdiff_t>(n) * w_stride + k] = src[packed_offset(n, k, kp)];
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_PACKED_WEIGHTS_H_
