// The integer softmax of requant.h on NEON (Armv7-A and AArch64), shared by
// the row kernels (qs8-softmax-exp-row-neon.cc, qs8-softmax-row-neon.cc)
// and the tiled kernel (isa/neon/attention_tile_neon.h).
//  - exponent (steps 1-2): 32-bit lanes. Where the layer's parameters allow
//    it, two steps become one instruction (softmax_exp_row picks one of four
//    loops per layer; each gives exactly softmax_exponent_q12):
//      * d >> 1 with the pre-shift p >= 1: the signed halving subtract
//        (max - s) >> 1 keeps the 33rd bit, so it is floor(d / 2) for every
//        d = max - s in [0, 2^32); p >= 2 shifts by p - 1 more.
//      * the post-shift r = 16 (every layer with p >= 1, and most others):
//        d' M < 2^32 (D M <= 2^32, requant.h), so z = (d' M) >> 16 is the
//        high half of each product, below 0xFFFF + 1, and the clamp is a
//        no-op: one UZP2 for 8 lanes instead of two shifts and two narrows.
//        For r < 16, a saturating left shift by 16 - r first: the high half
//        is (d' M) >> r when that is below 2^16, and 0xFFFF (the clamp)
//        exactly when it is not.
//  - exp2 (step 3): 16-bit lanes; vqrdmulh is mulhrs16 (u >= 0, so it never
//    saturates), vrshl by -n the rounding shift (w + 2^(n-1)) >> n. z = 0xFFFF
//    (e = 0) shifts by 16 instead of 15: w <= 32767 then rounds to 0, so
//    no separate mask is needed.
//  - normalizer (step 5): when the row sum has b >= 17 bits (every row with
//    at least two keys of weight), 16-bit lanes:
//    (e m + 2^(b-1)) >> b = (floor(e m / 2^16) + 2^(b-17)) >> (b - 16)
//    (nested floors; 2^(b-1) is a multiple of 2^16), the high halves of UMULL
//    and one rounding shift; and p <= 16384 there (e <= 32767,
//    m <= 2^(b+15) / sum, sum >= 2^(b-1)), so the 32767 cap never binds.
//    Otherwise 32-bit lanes: e m < 2^31, vrshl by -b rounds half up like the
//    reference, then the cap.
#ifndef EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_
#define EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_

#include <arm_neon.h>

#include <cstdint>

#include "edgeattn/kernels/requant.h"
#include "neon_common.h"

namespace edgeattn {
namespace kernels {
namespace neon {

// High 16 bits of each 32-bit lane of a (lanes 0-3) and b (lanes 4-7).
static inline uint16x8_t high_halves_u32(uint32x4_t a, uint32x4_t b) {
#if defined(__aarch64__)
  return vuzp2q_u16(vreinterpretq_u16_u32(a), vreinterpretq_u16_u32(b));
#else
  return vcombine_u16(vshrn_n_u32(a, 16), vshrn_n_u32(b, 16));
#endif
}

// e * m (e 8 lanes of uint16, m a uint16 in every lane) as two uint32x4.
static inline void mul_u16_wide(uint16x8_t e, uint16x8_t m, uint32x4_t* lo, uint32x4_t* hi) {
  *lo = vmull_u16(vget_low_u16(e), vget_low_u16(m));
#if defined(__aarch64__)
  *hi = vmull_high_u16(e, m);
#else
  *hi = vmull_u16(vget_high_u16(e), vget_high_u16(m));
#endif
}

// --------------------------------------------------------------- steps 1-2 --
// How d = max - s reaches the multiplier (see the top of the file).
enum ExpPre : int { kPreNone = 0, kPreHalve = 1, kPreHalveShift = 2 };

struct ExpVecs {
  int32x4_t neg_pre1;   // -(p - 1), kPreHalveShift only
  uint32x4_t limit, mult;
  int32x4_t post_left;  // 16 - r, r < 16 only
};

static inline ExpVecs exp_vecs(const SoftmaxExpParams& x) {
  return ExpVecs{vdupq_n_s32(1 - static_cast<int32_t>(x.pre_shift)), vdupq_n_u32(x.limit),
                 vdupq_n_u32(x.multiplier), vdupq_n_s32(16 - static_cast<int32_t>(x.post_shift))};
}

template <int kPre, bool kPost16>
static inline uint32x4_t exponent32_x4(int32x4_t vmax, int32x4_t s, const ExpVecs& x) {
  uint32x4_t d;
  if (kPre == kPreNone) {
    d = vsubq_u32(vreinterpretq_u32_s32(vmax), vreinterpretq_u32_s32(s));
  } else {
    d = vreinterpretq_u32_s32(vhsubq_s32(vmax, s));  // floor((max - s) / 2), exact
    if (kPre == kPreHalveShift) d = vshlq_u32(d, x.neg_pre1);
  }
  d = vmulq_u32(vminq_u32(d, x.limit), x.mult);
  if (!kPost16) d = vqshlq_u32(d, x.post_left);
  return d;  // z in the high half
}

// z of 8 scores.
template <int kPre, bool kPost16>
static inline uint16x8_t exponent_x8(int32x4_t vmax, const int32_t* s, const ExpVecs& x) {
  return high_halves_u32(exponent32_x4<kPre, kPost16>(vmax, vld1q_s32(s), x),
                         exponent32_x4<kPre, kPost16>(vmax, vld1q_s32(s + 4), x));
}

// ----------------------------------------------------------------- step 3 --
// e of 8 exponents.
static inline uint16x8_t exp2_neg_q15_x8(uint16x8_t z) {
  // -n, or -16 where z = 0xFFFF (e = 0): vceq gives -1 there.
  const int16x8_t dead = vreinterpretq_s16_u16(vceqq_u16(z, vdupq_n_u16(static_cast<uint16_t>(kExpZeroQ12))));
  const int16x8_t neg_n = vsubq_s16(dead, vreinterpretq_s16_u16(vshrq_n_u16(z, 12)));
  const int16x8_t u = vreinterpretq_s16_u16(vandq_u16(vshlq_n_u16(z, 3), vdupq_n_u16(0x7FF8)));
  int16x8_t h = vdupq_n_s16(kExp2Coeff[3]);
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[2]), vqrdmulhq_s16(h, u));
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[1]), vqrdmulhq_s16(h, u));
  h = vaddq_s16(vdupq_n_s16(kExp2Coeff[0]), vqrdmulhq_s16(h, u));
  const int16x8_t w = vaddq_s16(vdupq_n_s16(kProbMax), vqrdmulhq_s16(h, u));
  return vrshlq_u16(vreinterpretq_u16_s16(w), neg_n);
}

// Largest of s[0, n) (n >= 1).
static inline int32_t softmax_row_max(int n, const int32_t* s) {
  int32_t row_max = s[0];
  int j = 0;
  if (n >= 16) {
    int32x4_t m0 = vld1q_s32(s), m1 = vld1q_s32(s + 4), m2 = vld1q_s32(s + 8), m3 = vld1q_s32(s + 12);
    for (j = 16; j + 16 <= n; j += 16) {
      m0 = vmaxq_s32(m0, vld1q_s32(s + j));
      m1 = vmaxq_s32(m1, vld1q_s32(s + j + 4));
      m2 = vmaxq_s32(m2, vld1q_s32(s + j + 8));
      m3 = vmaxq_s32(m3, vld1q_s32(s + j + 12));
    }
    m0 = vmaxq_s32(vmaxq_s32(m0, m1), vmaxq_s32(m2, m3));
    for (; j + 4 <= n; j += 4) m0 = vmaxq_s32(m0, vld1q_s32(s + j));
    row_max = hmax_s32(m0);
  } else if (n >= 4) {
    int32x4_t m0 = vld1q_s32(s);
    for (j = 4; j + 4 <= n; j += 4) m0 = vmaxq_s32(m0, vld1q_s32(s + j));
    row_max = hmax_s32(m0);
  }
  for (; j < n; ++j) row_max = s[j] > row_max ? s[j] : row_max;
  return row_max;
}

// Steps 1-4 over s[0, n): e[j] = e_j; returns sum_j e_j.
template <int kPre, bool kPost16>
static uint32_t softmax_exp_row_x(int n, const int32_t* s, int32_t row_max, const SoftmaxExpParams& params,
                                  uint16_t* e) {
  const ExpVecs x = exp_vecs(params);
  const int32x4_t vmax = vdupq_n_s32(row_max);
  uint32x4_t vsum = vdupq_n_u32(0);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    const uint16x8_t e0 = exp2_neg_q15_x8(exponent_x8<kPre, kPost16>(vmax, s + j, x));
    const uint16x8_t e1 = exp2_neg_q15_x8(exponent_x8<kPre, kPost16>(vmax, s + j + 8, x));
    vst1q_u16(e + j, e0);
    vst1q_u16(e + j + 8, e1);
    vsum = vpadalq_u16(vsum, vaddq_u16(e0, e1));  // e <= 32767: the pair fits uint16
  }
  if (j + 8 <= n) {
    const uint16x8_t e0 = exp2_neg_q15_x8(exponent_x8<kPre, kPost16>(vmax, s + j, x));
    vst1q_u16(e + j, e0);
    vsum = vpadalq_u16(vsum, e0);
    j += 8;
  }
  uint32_t sum = hsum_u32(vsum);
  for (; j < n; ++j) {
    e[j] = static_cast<uint16_t>(exp2_neg_q15(softmax_exponent_q12(row_max, s[j], params)));
    sum += e[j];
  }
  return sum;
}

using SoftmaxExpRowFn = uint32_t (*)(int, const int32_t*, int32_t, const SoftmaxExpParams&, uint16_t*);

// The loop for a layer's parameters (p >= 1 implies r = 16, requant.h).
static inline SoftmaxExpRowFn pick_softmax_exp_row(const SoftmaxExpParams& x) {
  if (x.pre_shift == 1) return softmax_exp_row_x<kPreHalve, true>;
  if (x.pre_shift > 1) return softmax_exp_row_x<kPreHalveShift, true>;
  if (x.post_shift == 16) return softmax_exp_row_x<kPreNone, true>;
  return softmax_exp_row_x<kPreNone, false>;
}

static inline uint32_t softmax_exp_row(int n, const int32_t* s, int32_t row_max, const SoftmaxExpParams& params,
                                       uint16_t* e) {
  return pick_softmax_exp_row(params)(n, s, row_max, params, e);
}

// ----------------------------------------------------------------- step 5 --
struct Norm4 {
  ProbNormalizer norm;
  bool hi16;           // b >= 17: the 16-bit form (normalize_x8<true>)
  uint16x8_t m16;      // m
  int16x8_t neg_b16;   // -(b - 16)
  int32x4_t neg_b;     // -b
};

static inline Norm4 make_norm4(uint32_t sum) {
  const ProbNormalizer norm = prob_normalizer(sum);
  return Norm4{norm, norm.shift >= 17, vdupq_n_u16(static_cast<uint16_t>(norm.multiplier)),
               vdupq_n_s16(static_cast<int16_t>(16 - norm.shift)), vdupq_n_s32(-norm.shift)};
}

// p of 8 e values (kHi16 only when q.hi16).
template <bool kHi16>
static inline uint16x8_t normalize_x8(uint16x8_t e, const Norm4& q) {
  uint32x4_t lo, hi;
  mul_u16_wide(e, q.m16, &lo, &hi);
  if (kHi16) return vrshlq_u16(high_halves_u32(lo, hi), q.neg_b16);
  lo = vrshlq_u32(lo, q.neg_b);
  hi = vrshlq_u32(hi, q.neg_b);
  return vminq_u16(vcombine_u16(vqmovn_u32(lo), vqmovn_u32(hi)), vdupq_n_u16(static_cast<uint16_t>(kProbMax)));
}

}  // namespace neon
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_NEON_SOFTMAX_NEON_H_
