// qs8_layernorm (requant.h contract 4) on NEON (Armv7-A and AArch64),
// bit-identical to kernels/ref/layernorm.cc.
#include <arm_neon.h>

#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

namespace {

// S = sum x_i and Q = sum x_i^2 of one row (x^2 <= 16384 fits int16; pairs
// are added in int32 by VPADAL).
void row_sums(const int8_t* x, int d, int32_t* sum, int32_t* sum_sq) {
  int32x4_t vs = vdupq_n_s32(0), vq = vdupq_n_s32(0);
  int i = 0;
  for (; i + 16 <= d; i += 16) {
    const int8x16_t v = vld1q_s8(x + i);
    vs = vpadalq_s16(vs, vpaddlq_s8(v));
    vq = vpadalq_s16(vq, vmull_s8(vget_low_s8(v), vget_low_s8(v)));
    vq = vpadalq_s16(vq, vmull_s8(vget_high_s8(v), vget_high_s8(v)));
  }
  int32_t s = neon::hsum_s32(vs), q = neon::hsum_s32(vq);
  for (; i < d; ++i) {
    s += x[i];
    q += x[i] * x[i];
  }
  *sum = s;
  *sum_sq = q;
}

// Step 4 of contract 4 in 32-bit lanes, y_q = floor((c inv + 2^(s-1)) / 2^s),
// in one of two forms chosen per row:
//  - s <= 31: SQRDMULH of a = c 2^(31-s) by inv, floor((2 a inv + 2^31) / 2^32)
//    = floor((c inv 2^(32-s) + 2^31) / 2^32), which is y_q exactly;
//  - s > 31: SQDMULH of c by inv (floor(c inv / 2^31)), then a rounding shift
//    right by R = s - 31 (VRSHL: round half up), nested floors: y_q again.
// a fits int32: |y_q| <= 2^14 for every int8 row and E >= 1 (the proof is in
// kernels/qs8-layernorm/qs8-layernorm-avx2.cc), so |c| <= (2^14 + 1) 2^s / inv < 2^(s - 14) and
// |c 2^(31-s)| < 2^17. For the same reason the clamp to +-32767 never binds,
// and y_q fits int16 for the gain product (VMLAL). SQ(R)DMULH saturates only
// for INT32_MIN x INT32_MIN; inv > 0.
// a is x (d 2^l) - S 2^l (l = 31 - s or 0) in wrapping int32: equal to
// a modulo 2^32, and a fits int32, so equal. When d 2^l fits int16 (always
// for s > 31: l = 0 and d <= 16384) that is one VMLAL of x's int16 lanes (no
// widening to int32 first).
struct LnRow {
  int32_t d_l;          // d 2^l mod 2^32
  int32x4_t neg_sum_l;  // -S 2^l mod 2^32
  int32_t inv;
  int32x4_t neg_right;  // -(s - 31), s > 31 only
};

enum class LnForm { kRoundNarrow, kRoundWide, kShift };

inline LnForm ln_row(int d, int32_t sum, const LayerNormRowScale& rs, LnRow* r) {
  const int left = rs.shift <= 31 ? 31 - rs.shift : 0;
  r->d_l = static_cast<int32_t>(static_cast<uint32_t>(d) << left);
  r->neg_sum_l = vdupq_n_s32(static_cast<int32_t>(0u - (static_cast<uint32_t>(sum) << left)));
  r->inv = rs.inv;
  r->neg_right = vdupq_n_s32(rs.shift <= 31 ? 0 : 31 - rs.shift);
  if (rs.shift > 31) return LnForm::kShift;
  return (static_cast<uint64_t>(d) << left) <= 32767u ? LnForm::kRoundNarrow : LnForm::kRoundWide;
}

// y_q of 8 elements (x as int16) as int16: a from x's int16 lanes by VMLAL
// with d 2^l, or from x widened to int32 by VMLA.
template <LnForm F>
inline int32x4_t ln_yq4(const LnRow& r, int32x4_t a) {
  if (F == LnForm::kShift) return vrshlq_s32(vqdmulhq_n_s32(a, r.inv), r.neg_right);
  return vqrdmulhq_n_s32(a, r.inv);
}

template <LnForm F>
inline int16x8_t ln_yq8(const LnRow& r, int16x8_t x) {
  int32x4_t lo, hi;
  if (F == LnForm::kRoundWide) {
    lo = vmlaq_n_s32(r.neg_sum_l, vmovl_s16(vget_low_s16(x)), r.d_l);
#if defined(__aarch64__)
    hi = vmlaq_n_s32(r.neg_sum_l, vmovl_high_s16(x), r.d_l);
#else
    hi = vmlaq_n_s32(r.neg_sum_l, vmovl_s16(vget_high_s16(x)), r.d_l);
#endif
  } else {
    const int16_t dl = static_cast<int16_t>(r.d_l);
    lo = vmlal_n_s16(r.neg_sum_l, vget_low_s16(x), dl);
#if defined(__aarch64__)
    hi = vmlal_high_n_s16(r.neg_sum_l, x, dl);
#else
    hi = vmlal_n_s16(r.neg_sum_l, vget_high_s16(x), dl);
#endif
  }
  lo = ln_yq4<F>(r, lo);
  hi = ln_yq4<F>(r, hi);
#if defined(__aarch64__)  // the low int16 halves (exact: y_q fits int16)
  return vuzp1q_s16(vreinterpretq_s16_s32(lo), vreinterpretq_s16_s32(hi));
#else
  return vcombine_s16(vmovn_s32(lo), vmovn_s32(hi));
#endif
}

inline int32x4_t mlal_high(int32x4_t acc, int16x8_t a, int16x8_t b) {
#if defined(__aarch64__)
  return vmlal_high_s16(acc, a, b);
#else
  return vmlal_s16(acc, vget_high_s16(a), vget_high_s16(b));
#endif
}

// requantize(acc) (contract 1) in two instructions per 4 lanes, with
// n = 31 - shift:
//  - shift >= 0: SQRDMULH of acc 2^shift (SQSHL) by M is floor((acc M 2^shift
//    + 2^30) / 2^31) = floor((acc M + 2^(n-1)) / 2^n);
//  - shift < 0: SQDMULH by M, then VRSHL by shift (round half up), nested floors.
// A saturating SQSHL means |requantize(acc)| >= 2^30: the vector keeps the
// sign and |y| >= 2^30 - 1, and both clamp to the same int8.
struct LnRq {
  int32x4_t mult, shift;
};

template <bool kLeft>
inline int32x4_t ln_requant4(const LnRq& q, int32x4_t acc) {
  if (kLeft) return vqrdmulhq_s32(vqshlq_s32(acc, q.shift), q.mult);
  return vrshlq_s32(vqdmulhq_s32(acc, q.mult), q.shift);
}

// 8 elements: y_q gain + bias, requantized, + zp, saturated to int8.
template <LnForm F, bool kLeft>
inline int16x8_t ln_x8(const LnRow& r, const LnRq& q, int16x8_t x16, int16x8_t g, int32x4_t b0, int32x4_t b1) {
  const int16x8_t yq = ln_yq8<F>(r, x16);
  const int32x4_t a0 = vmlal_s16(b0, vget_low_s16(yq), vget_low_s16(g));
  const int32x4_t a1 = mlal_high(b1, yq, g);
  return vcombine_s16(vqmovn_s32(ln_requant4<kLeft>(q, a0)), vqmovn_s32(ln_requant4<kLeft>(q, a1)));
}

inline int16x8_t vmovl_high_s8_(int8x16_t v) {
#if defined(__aarch64__)
  return vmovl_high_s8(v);
#else
  return vmovl_s8(vget_high_s8(v));
#endif
}

// One row's elements; the last 1-15 through zero-padded copies.
template <LnForm F, bool kLeft>
void ln_row_elements(const LnRow& r, const LnRq& q, int16x8_t zp, int d, const int8_t* x, const int16_t* gain,
                     const int32_t* bias, int8_t* y) {
  auto x16_ = [&](const int8_t* xp, const int16_t* gp, const int32_t* bp) {
    const int8x16_t xv = vld1q_s8(xp);
    const int16x8_t lo = ln_x8<F, kLeft>(r, q, vmovl_s8(vget_low_s8(xv)), vld1q_s16(gp), vld1q_s32(bp), vld1q_s32(bp + 4));
    const int16x8_t hi = ln_x8<F, kLeft>(r, q, vmovl_high_s8_(xv), vld1q_s16(gp + 8), vld1q_s32(bp + 8),
                                         vld1q_s32(bp + 12));
    return vcombine_s8(vqmovn_s16(vqaddq_s16(lo, zp)), vqmovn_s16(vqaddq_s16(hi, zp)));
  };
  int i = 0;
  for (; i + 16 <= d; i += 16) vst1q_s8(y + i, x16_(x + i, gain + i, bias + i));
  if (i < d) {
    const int n = d - i;
    int8_t xb[16] = {}, yb[16];
    int16_t gb[16] = {};
    int32_t bb[16] = {};
    std::memcpy(xb, x + i, n);
    std::memcpy(gb, gain + i, n * sizeof(int16_t));
    std::memcpy(bb, bias + i, n * sizeof(int32_t));
    vst1q_s8(yb, x16_(xb, gb, bb));
    std::memcpy(y + i, yb, n);
  }
}

template <bool kLeft>
void ln_row_any(LnForm f, const LnRow& r, const LnRq& q, int16x8_t zp, int d, const int8_t* x,
                const int16_t* gain, const int32_t* bias, int8_t* y) {
  switch (f) {
    case LnForm::kRoundNarrow: ln_row_elements<LnForm::kRoundNarrow, kLeft>(r, q, zp, d, x, gain, bias, y); break;
    case LnForm::kRoundWide: ln_row_elements<LnForm::kRoundWide, kLeft>(r, q, zp, d, x, gain, bias, y); break;
    case LnForm::kShift: ln_row_elements<LnForm::kShift, kLeft>(r, q, zp, d, x, gain, bias, y); break;
  }
}

// The row scales of n <= 8 rows (layernorm_row.h): isqrt_u32_top's 15 steps
// on two vectors of 4 uint32 lanes (a >= t by VCGE), the rest per row.
void row_scales_x8(int n, int d, const int32_t* sum, const int32_t* sum_sq, int64_t eps_term, LayerNormRowScale* out) {
  LayerNormScaledVar v[8];
  uint32_t a[8] = {};
  for (int b = 0; b < n; ++b) {
    v[b] = layernorm_scaled_var(d, sum[b], sum_sq[b], eps_term);
    a[b] = static_cast<uint32_t>(v[b].x >> 32);
  }
  uint32x4_t va[2] = {vld1q_u32(a), vld1q_u32(a + 4)};
  uint32x4_t root[2] = {vdupq_n_u32(0), vdupq_n_u32(0)};
  for (uint32_t bit = uint32_t{1} << 28; bit != 0; bit >>= 2) {
    const uint32x4_t vb = vdupq_n_u32(bit);
    for (int h = 0; h < 2; ++h) {
      const uint32x4_t t = vaddq_u32(root[h], vb);
      const uint32x4_t take = vcgeq_u32(va[h], t);
      va[h] = vsubq_u32(va[h], vandq_u32(t, take));
      root[h] = vsraq_n_u32(vandq_u32(vb, take), root[h], 1);
    }
  }
  uint32_t roots[8];
  vst1q_u32(roots, root[0]);
  vst1q_u32(roots + 4, root[1]);
  for (int b = 0; b < n; ++b) out[b] = layernorm_row_scale_finish(d, v[b], roots[b]);
}

}  // namespace

// Rows in batches: sums and row scales first (independent long-latency
// chains: the square root and two divisions), then the elements.
void qs8_layernorm__neon(const QS8LayerNormArgs& a) {
  constexpr int kBatch = 8;
  const int d = a.dim;
  const LnRq q = {vdupq_n_s32(a.mult), vdupq_n_s32(a.shift)};
  const bool left = a.shift >= 0;
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(a.y_zp));
  const int16_t* const gain = a.gain;
  const int32_t* const bias = a.bias;
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch], sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    row_scales_x8(nb, d, sum, sum_sq, a.eps_term, rs);
    for (int b = 0; b < nb; ++b) {
      const int8_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y = a.y + static_cast<ptrdiff_t>(row0 + b) * a.y_stride;
      LnRow r;
      const LnForm f = ln_row(d, sum[b], rs[b], &r);
      if (left) {
        ln_row_any<true>(f, r, q, zp, d, x, gain, bias, y);
      } else {
        ln_row_any<false>(f, r, q, zp, d, x, gain, bias, y);
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
