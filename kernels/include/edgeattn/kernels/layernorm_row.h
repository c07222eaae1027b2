// The per-row scale of the integer LayerNorm (requant.h contract 4, steps
// 2-3) computed faster, with the same integers as layernorm_row_scale():
// the reference's square root runs 31 data-dependent steps (most of a SIMD
// row's time at d = 128); this one runs 15 branch-free steps on 32 bits
// (which the x86 code runs for 16 rows at once), one Newton step and two
// corrections. Used by the SIMD LayerNorm kernels;
// simd_test compares both functions on edges and random rows.
#ifndef EDGEATTN_KERNELS_LAYERNORM_ROW_H_
#define EDGEATTN_KERNELS_LAYERNORM_ROW_H_

#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// floor(sqrt(x)) for x in [2^60, 2^62) (= isqrt_u64(x) there), in two parts
// so that SIMD code can run the first on several rows at once:
//  - root = floor(sqrt(a)), a = x >> 32 in [2^28, 2^30), bit by bit (15 steps,
//    selects instead of branches): isqrt_u32_top(a);
//  - r0 = root 2^16 <= sqrt(x) <= r0 + 2^16 (a <= x 2^-32 < a + 1 <= (root + 1)^2);
//    one Newton step r = (r0 + x / r0) >> 1 is at least floor(sqrt(x))
//    (AM-GM; the inner floor does not change the outer one) and at most
//    (sqrt(x) - r0)^2 / (2 r0) <= 2^32 / 2^31 = 2 above sqrt(x); so at most two
//    decrements while r^2 > x (r < 2^31 + 2: r^2 fits uint64):
//    isqrt_u64_top_finish(x, root).
inline uint32_t isqrt_u32_top(uint32_t a) {
  uint32_t root = 0;
  for (uint32_t bit = uint32_t{1} << 28; bit != 0; bit >>= 2) {
    const uint32_t t = root + bit;
    const uint32_t take = a >= t ? ~uint32_t{0} : 0;
    a -= t & take;
    root = (root >> 1) + (bit & take);
  }
  return root;
}

inline uint32_t isqrt_u64_top_finish(uint64_t x, uint32_t root) {
  const uint64_t r0 = static_cast<uint64_t>(root) << 16;
  uint64_t r = (r0 + x / r0) >> 1;
  r -= r * r > x ? 1 : 0;
  r -= r * r > x ? 1 : 0;
  return static_cast<uint32_t>(r);
}

inline uint32_t isqrt_u64_top(uint64_t x) {
  return isqrt_u64_top_finish(x, isqrt_u32_top(static_cast<uint32_t>(x >> 32)));
}

// Step 3's D 4^k (in [2^60, 2^62)) and k for one row.
struct LayerNormScaledVar {
  uint64_t x;
  int k;
};
inline LayerNormScaledVar layernorm_scaled_var(int d, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  const int64_t var_d2 = static_cast<int64_t>(d) * sum_sq - static_cast<int64_t>(sum) * sum;
  const uint64_t big = (static_cast<uint64_t>(var_d2) << 16) + static_cast<uint64_t>(eps_term);
  const int k = (62 - bit_length_u64(big)) / 2;
  return LayerNormScaledVar{big << (2 * k), k};
}

// The row scale from D 4^k and floor(sqrt((D 4^k) >> 32)).
inline LayerNormRowScale layernorm_row_scale_finish(int d, const LayerNormScaledVar& v, uint32_t root) {
  const uint64_t r = isqrt_u64_top_finish(v.x, root);
  const int32_t inv = static_cast<int32_t>(((uint64_t{1} << 60) + (r >> 1)) / r);
  return LayerNormRowScale{inv, 52 - v.k - layernorm_frac_bits(d)};
}

// = layernorm_row_scale(d, sum, sum_sq, eps_term) for every input it accepts.
inline LayerNormRowScale layernorm_row_scale_fast(int d, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  const LayerNormScaledVar v = layernorm_scaled_var(d, sum, sum_sq, eps_term);
  return layernorm_row_scale_finish(d, v, isqrt_u32_top(static_cast<uint32_t>(v.x >> 32)));
}

// The same for contract 4b (int16 rows): D = 4^p (d Q - S^2) + E < 2^61,
// so D 4^k is in [2^60, 2^62) as above.
inline LayerNormScaledVar layernorm16_scaled_var(int d, int32_t sum, int64_t sum_sq, int64_t eps_term) {
  const int64_t var_d2 = static_cast<int64_t>(d) * sum_sq - static_cast<int64_t>(sum) * sum;
  const uint64_t big =
      (static_cast<uint64_t>(var_d2) << (2 * layernorm16_var_shift(d))) + static_cast<uint64_t>(eps_term);
  const int k = (62 - bit_length_u64(big)) / 2;
  return LayerNormScaledVar{big << (2 * k), k};
}

inline LayerNormRowScale layernorm16_row_scale_finish(int d, const LayerNormScaledVar& v, uint32_t root) {
  const uint64_t r = isqrt_u64_top_finish(v.x, root);
  const int32_t inv = static_cast<int32_t>(((uint64_t{1} << 60) + (r >> 1)) / r);
  return LayerNormRowScale{inv, 60 - v.k - layernorm16_var_shift(d) - layernorm_frac_bits(d)};
}

// = layernorm16_row_scale(d, sum, sum_sq, eps_term) for every input it accepts.
inline LayerNormRowScale layernorm16_row_scale_fast(int d, int32_t sum, int64_t sum_sq, int64_t eps_term) {
  const LayerNormScaledVar v = layernorm16_scaled_var(d, sum, sum_sq, eps_term);
  return layernorm16_row_scale_finish(d, v, isqrt_u32_top(static_cast<uint32_t>(v.x >> 32)));
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_LAYERNORM_ROW_H_
