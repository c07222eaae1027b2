// Helpers shared by the baseline NEON kernel files (Armv7-A NEON and AArch64
// Advanced SIMD). Everything here has internal linkage (static inline), and
// this header must NOT be included by the SDOT files (isa/neondot/): they
// are compiled with -march=armv8.2-a+dotprod, and a vague-linkage copy of a
// helper compiled there could be picked by the linker for the baseline path
// (SIGILL on a Cortex-A53). Only they get that flag (isa/neon/kernels.cmake).
#ifndef EDGEATTN_KERNELS_NEON_NEON_COMMON_H_
#define EDGEATTN_KERNELS_NEON_NEON_COMMON_H_

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

namespace edgeattn {
namespace kernels {
namespace neon {

// ------------------------------------------------------------ reductions --
static inline int32_t hsum_s32(int32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_s32(v);
#else
  int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
  return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

static inline uint32_t hsum_u32(uint32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_u32(v);
#else
  uint32x2_t s = vadd_u32(vget_low_u32(v), vget_high_u32(v));
  return vget_lane_u32(vpadd_u32(s, s), 0);
#endif
}

static inline int32_t hmax_s32(int32x4_t v) {
#if defined(__aarch64__)
  return vmaxvq_s32(v);
#else
  int32x2_t m = vmax_s32(vget_low_s32(v), vget_high_s32(v));
  return vget_lane_s32(vpmax_s32(m, m), 0);
#endif
}

static inline float hsum_f32(float32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_f32(v);
#else
  float32x2_t s = vadd_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(vpadd_f32(s, s), 0);
#endif
}

static inline float hmax_f32(float32x4_t v) {
#if defined(__aarch64__)
  return vmaxvq_f32(v);
#else
  float32x2_t m = vmax_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(vpmax_f32(m, m), 0);
#endif
}

// {sum(a), sum(b), sum(c), sum(d)} (integer adds wrap, like the scalar sums).
static inline int32x4_t hsum4_s32(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
#if defined(__aarch64__)
  return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
#else
  const int32x2_t sa = vadd_s32(vget_low_s32(a), vget_high_s32(a));
  const int32x2_t sb = vadd_s32(vget_low_s32(b), vget_high_s32(b));
  const int32x2_t sc = vadd_s32(vget_low_s32(c), vget_high_s32(c));
  const int32x2_t sd = vadd_s32(vget_low_s32(d), vget_high_s32(d));
  return vcombine_s32(vpadd_s32(sa, sb), vpadd_s32(sc, sd));
#endif
}

static inline float32x4_t hsum4_f32(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
#if defined(__aarch64__)
  return vpaddq_f32(vpaddq_f32(a, b), vpaddq_f32(c, d));
#else
  const float32x2_t sa = vadd_f32(vget_low_f32(a), vget_high_f32(a));
  const float32x2_t sb = vadd_f32(vget_low_f32(b), vget_high_f32(b));
  const float32x2_t sc = vadd_f32(vget_low_f32(c), vget_high_f32(c));
  const float32x2_t sd = vadd_f32(vget_low_f32(d), vget_high_f32(d));
  return vcombine_f32(vpadd_f32(sa, sb), vpadd_f32(sc, sd));
#endif
}

// ------------------------------------------------------- int8 products ----
// acc += sum of a[i] * b[i] over 16 lanes, four partial sums per lane group.
// Two int8 products can reach 2 * 16384 = 32768, which does not fit int16, so
// each product vector is widened into int32 separately (vpadal).
static inline int32x4_t dot16_s8(int32x4_t acc, int8x16_t a, int8x16_t b) {
  const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
#if defined(__aarch64__)
  const int16x8_t hi = vmull_high_s8(a, b);
#else
  const int16x8_t hi = vmull_s8(vget_high_s8(a), vget_high_s8(b));
#endif
  return vpadalq_s16(vpadalq_s16(acc, lo), hi);
}

static inline float32x4_t fma_f32(float32x4_t acc, float32x4_t a, float32x4_t b) {
#if defined(__aarch64__) || defined(__ARM_FEATURE_FMA)
  return vfmaq_f32(acc, a, b);
#else
  return vmlaq_f32(acc, a, b);
#endif
}

// ------------------------------------------------------- requantization ----
// Exact vector form of requantize() in requant.h: one widening multiply to
// int64, one rounding right shift by n = 31 - shift (VRSHL with a negative
// count adds 2^(n-1) before the arithmetic shift: round half up), then
// saturating narrowing to int32. `neg_n` holds shift - 31 in each int64 lane.
static inline int32x4_t requantize_x4(int32x4_t acc, int32x4_t mult, int64x2_t neg_n_lo,
                                      int64x2_t neg_n_hi) {
  int64x2_t lo = vmull_s32(vget_low_s32(acc), vget_low_s32(mult));
#if defined(__aarch64__)
  int64x2_t hi = vmull_high_s32(acc, mult);
#else
  int64x2_t hi = vmull_s32(vget_high_s32(acc), vget_high_s32(mult));
#endif
  lo = vrshlq_s64(lo, neg_n_lo);
  hi = vrshlq_s64(hi, neg_n_hi);
  return vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi));
}

// Same with one multiplier / shift for all lanes.
static inline int32x4_t requantize_x4(int32x4_t acc, int32_t mult, int64x2_t neg_n) {
  return requantize_x4(acc, vdupq_n_s32(mult), neg_n, neg_n);
}

// sat8(clamp(y, -512, 512) + zp) for 8 lanes. Saturating to int16 instead of
// clamping to +-512 gives the same int8: any |y| > 512 saturates either way
// because |zp| <= 128.
static inline int8x8_t add_zp_sat8(int32x4_t y0, int32x4_t y1, int16x8_t zp) {
  const int16x8_t y = vqaddq_s16(vcombine_s16(vqmovn_s32(y0), vqmovn_s32(y1)), zp);
  return vqmovn_s16(y);
}

static inline int64x2_t neg_n_of(int32_t shift) { return vdupq_n_s64(static_cast<int64_t>(shift) - 31); }

// The same requantization for an int8 result in 32-bit lanes only (3
// instructions per 4 lanes instead of 6): SQSHL by L, SQDMULH by M (floor of
// x M / 2^31), rounding shift right by R, with R - L = -s and R >= 1:
// s >= 0: L = s + 1, R = 1; s < 0: L = 0, R = -s. Without saturation this is
// floor((floor(x 2^L M / 2^31) + 2^(R-1)) / 2^R) = floor((x M + 2^(n-1)) / 2^n),
// n = 31 - s (nested floors by integer divisors), exactly requantize(). If
// x << L saturates (only for s >= 0, so R = 1), |x| >= 2^(31-L) so
// |requantize(x)| >= 2^29, and the vector result has its sign and magnitude
// in [2^29, 2^30]: SQDMULH gives M - 1 for INT32_MAX and -M for INT32_MIN,
// so y = M >> 1 or (1 - M) >> 1, with M in [2^30, 2^31) (the loader checks
// M >= 2^30). Such a lane gives the same int8 as requantize() after the
// +-512 clamp of requantize_s8 (add_zp_sat8 saturates the same way) and
// after the +-2^29 clamp of residual_epilogue_s8. Unsaturated lanes are
// exact, and every lane has |y| <= 2^30.
// SQDMULH saturates only for INT32_MIN x INT32_MIN (M > 0 here).
struct Rq32 {
  int32x4_t mult, left, neg_right;
};

static inline Rq32 rq32_of(int32_t mult, int32_t shift) {
  Rq32 q;
  q.mult = vdupq_n_s32(mult);
  q.left = vdupq_n_s32(shift >= 0 ? shift + 1 : 0);
  q.neg_right = vdupq_n_s32(shift >= 0 ? -1 : shift);
  return q;
}

static inline int32x4_t requantize32_x4(int32x4_t acc, const Rq32& q) {
  return vrshlq_s32(vqdmulhq_s32(vqshlq_s32(acc, q.left), q.mult), q.neg_right);
}

}  // namespace neon
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_NEON_NEON_COMMON_H_
