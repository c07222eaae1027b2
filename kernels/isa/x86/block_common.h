// Helpers shared by the x86 block kernels (qs8-layernorm-avx2.cc, qs8-layernorm-avx512vnni.cc
// with AVX-512 flags). Internal linkage only (static inline), as in
// avx2_common.h, so no wider-flag copy can be linked into the AVX2 path.
#ifndef EDGEATTN_KERNELS_AVX2_BLOCK_COMMON_H_
#define EDGEATTN_KERNELS_AVX2_BLOCK_COMMON_H_

#include <immintrin.h>

#include <cstdint>

#include "edgeattn/kernels/layernorm_row.h"

namespace edgeattn {
namespace kernels {
namespace avx2 {

// floor(sqrt(v[b].x >> 32)) for n <= 16 rows (layernorm_row.h):
// isqrt_u32_top's 15 steps on two vectors of 8 uint32 lanes at once
// (a >= t as max(a, t) == a; two independent chains).
static inline void layernorm_roots_x16(int n, const LayerNormScaledVar* v, uint32_t* roots) {
  alignas(32) uint32_t a[16] = {};
  for (int b = 0; b < n; ++b) a[b] = static_cast<uint32_t>(v[b].x >> 32);
  __m256i va[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(a)),
                   _mm256_load_si256(reinterpret_cast<const __m256i*>(a + 8))};
  __m256i root[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  for (uint32_t bit = uint32_t{1} << 28; bit != 0; bit >>= 2) {
    const __m256i vb = _mm256_set1_epi32(static_cast<int32_t>(bit));
    for (int h = 0; h < 2; ++h) {
      const __m256i t = _mm256_add_epi32(root[h], vb);
      const __m256i take = _mm256_cmpeq_epi32(_mm256_max_epu32(va[h], t), va[h]);
      va[h] = _mm256_sub_epi32(va[h], _mm256_and_si256(t, take));
      root[h] = _mm256_add_epi32(_mm256_srli_epi32(root[h], 1), _mm256_and_si256(vb, take));
    }
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(roots), root[0]);
  _mm256_store_si256(reinterpret_cast<__m256i*>(roots + 8), root[1]);
}

// The row scales of n <= 16 rows (contract 4): the roots together, the rest
// per row.
static inline void layernorm_row_scales_x16(int n, int d, const int32_t* sum, const int32_t* sum_sq,
                                            int64_t eps_term, LayerNormRowScale* out) {
  LayerNormScaledVar v[16];
  for (int b = 0; b < n; ++b) v[b] = layernorm_scaled_var(d, sum[b], sum_sq[b], eps_term);
  alignas(32) uint32_t roots[16];
  layernorm_roots_x16(n, v, roots);
  for (int b = 0; b < n; ++b) out[b] = layernorm_row_scale_finish(d, v[b], roots[b]);
}

// Contract 4b's row scales (int16 rows, 64-bit sums of squares).
static inline void layernorm16_row_scales_x16(int n, int d, const int32_t* sum, const int64_t* sum_sq,
                                              int64_t eps_term, LayerNormRowScale* out) {
  LayerNormScaledVar v[16];
  for (int b = 0; b < n; ++b) v[b] = layernorm16_scaled_var(d, sum[b], sum_sq[b], eps_term);
  alignas(32) uint32_t roots[16];
  layernorm_roots_x16(n, v, roots);
  for (int b = 0; b < n; ++b) out[b] = layernorm16_row_scale_finish(d, v[b], roots[b]);
}

}  // namespace avx2
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_BLOCK_COMMON_H_
