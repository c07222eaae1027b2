// qs16_layernorm (requant.h contract 4b: int16 rows, int8 and/or int16
// output) on NEON (Armv7-A and AArch64), bit-identical to
// kernels/ref/layernorm.cc. The element steps are qs8-layernorm-neon.cc's
// (the same three 32-bit-lane forms of y_q, which that file derives) on
// int16 lanes loaded as they are; the sums and the row scale are 4b's.
#include <arm_neon.h>

#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

namespace {

// S = sum x_i (VPADAL of int16 pairs into int32 lanes: |S| <= 2^29) and
// Q = sum x_i^2: VMULL.S16 squares (each <= 2^30, exact in int32), added in
// pairs into int64 lanes by VPADAL.S32 (Q <= 2^44).
void row_sums16(const int16_t* x, int d, int32_t* sum, int64_t* sum_sq) {
  int32x4_t vs = vdupq_n_s32(0);
  int64x2_t vq = vdupq_n_s64(0);
  int i = 0;
  for (; i + 8 <= d; i += 8) {
    const int16x8_t v = vld1q_s16(x + i);
    vs = vpadalq_s16(vs, v);
    vq = vpadalq_s32(vq, vmull_s16(vget_low_s16(v), vget_low_s16(v)));
    vq = vpadalq_s32(vq, vmull_s16(vget_high_s16(v), vget_high_s16(v)));
  }
  int32_t s = neon::hsum_s32(vs);
  int64_t q = vgetq_lane_s64(vq, 0) + vgetq_lane_s64(vq, 1);
  for (; i < d; ++i) {
    s += x[i];
    q += static_cast<int32_t>(x[i]) * x[i];
  }
  *sum = s;
  *sum_sq = q;
}

// Step 4 in 32-bit lanes (qs8-layernorm-neon.cc): s <= 31: SQRDMULH of
// a = c 2^(31-s) by inv; s > 31: SQDMULH of c by inv, then a rounding shift
// right by s - 31. c = d x - S fits int32 (|c| < 2^30, requant.h) and, as
// there, |y_q| <= 2^14 bounds a: |c 2^(31-s)| < 2^17 (so the wrapping
// a = x (d 2^l) - S 2^l is a), and y_q fits int16.
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
    hi = vmlaq_n_s32(r.neg_sum_l, vmovl_s16(vget_high_s16(x)), r.d_l);
  } else {
    const int16_t dl = static_cast<int16_t>(r.d_l);
    lo = vmlal_n_s16(r.neg_sum_l, vget_low_s16(x), dl);
    hi = vmlal_n_s16(r.neg_sum_l, vget_high_s16(x), dl);
  }
  return vcombine_s16(vmovn_s32(ln_yq4<F>(r, lo)), vmovn_s32(ln_yq4<F>(r, hi)));
}

// requantize(acc) in two instructions per 4 lanes (qs8-layernorm-neon.cc):
// shift >= 0: SQRDMULH of SQSHL(acc, shift) by M; shift < 0: SQDMULH by M,
// then VRSHL by shift. A saturating SQSHL means |requantize(acc)| >= 2^30:
// the lane keeps the sign and |y| >= 2^30 - 1, which saturates to the same
// int8 (after + zp) and the same int16 (VQMOVN) as the reference.
struct LnRq {
  int32x4_t mult, shift;
  bool left;
};

inline int32x4_t ln_requant4(const LnRq& q, int32x4_t acc) {
  if (q.left) return vqrdmulhq_s32(vqshlq_s32(acc, q.shift), q.mult);
  return vrshlq_s32(vqdmulhq_s32(acc, q.mult), q.shift);
}

struct LnOut {
  LnRq q8, q16;
  int16x8_t zp;
  bool out8, out16;
};

// 8 elements: y_q gain + bias, then each requested output.
template <LnForm F>
inline void ln_x8(const LnRow& r, const LnOut& o, const int16_t* x, const int16_t* g, const int32_t* b, int8_t* y8,
                  int16_t* y16) {
  const int16x8_t yq = ln_yq8<F>(r, vld1q_s16(x));
  const int16x8_t gv = vld1q_s16(g);
  const int32x4_t a0 = vmlal_s16(vld1q_s32(b), vget_low_s16(yq), vget_low_s16(gv));
  const int32x4_t a1 = vmlal_s16(vld1q_s32(b + 4), vget_high_s16(yq), vget_high_s16(gv));
  if (o.out8) {
    const int16x8_t v = vcombine_s16(vqmovn_s32(ln_requant4(o.q8, a0)), vqmovn_s32(ln_requant4(o.q8, a1)));
    vst1_s8(y8, vqmovn_s16(vqaddq_s16(v, o.zp)));
  }
  if (o.out16) {
    vst1q_s16(y16, vcombine_s16(vqmovn_s32(ln_requant4(o.q16, a0)), vqmovn_s32(ln_requant4(o.q16, a1))));
  }
}

// One row's elements (x is read before y16 at the same place is written:
// y16 may be x); the last 1-7 through zero-padded copies.
template <LnForm F>
void ln_row_elements(const LnRow& r, const LnOut& o, int d, const int16_t* x, const int16_t* gain,
                     const int32_t* bias, int8_t* y8, int16_t* y16) {
  int i = 0;
  for (; i + 8 <= d; i += 8) ln_x8<F>(r, o, x + i, gain + i, bias + i, y8 + (o.out8 ? i : 0), y16 + (o.out16 ? i : 0));
  if (i < d) {
    const int n = d - i;
    int16_t xb[8] = {}, gb[8] = {}, yb16[8];
    int32_t bb[8] = {};
    int8_t yb8[8];
    std::memcpy(xb, x + i, n * sizeof(int16_t));
    std::memcpy(gb, gain + i, n * sizeof(int16_t));
    std::memcpy(bb, bias + i, n * sizeof(int32_t));
    ln_x8<F>(r, o, xb, gb, bb, yb8, yb16);
    if (o.out8) std::memcpy(y8 + i, yb8, n);
    if (o.out16) std::memcpy(y16 + i, yb16, n * sizeof(int16_t));
  }
}

// The row scales of n <= 8 rows: isqrt_u32_top's 15 steps on two vectors of
// 4 uint32 lanes (as qs8-layernorm-neon.cc), the rest per row.
void row_scales16_x8(int n, int d, const int32_t* sum, const int64_t* sum_sq, int64_t eps_term,
                     LayerNormRowScale* out) {
  LayerNormScaledVar v[8];
  uint32_t a[8] = {};
  for (int b = 0; b < n; ++b) {
    v[b] = layernorm16_scaled_var(d, sum[b], sum_sq[b], eps_term);
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
  for (int b = 0; b < n; ++b) out[b] = layernorm16_row_scale_finish(d, v[b], roots[b]);
}

}  // namespace

void qs16_layernorm__neon(const QS16LayerNormArgs& a) {
  constexpr int kBatch = 8;
  const int d = a.dim;
  LnOut o;
  o.q8 = {vdupq_n_s32(a.mult), vdupq_n_s32(a.shift), a.shift >= 0};
  o.q16 = {vdupq_n_s32(a.mult16), vdupq_n_s32(a.shift16), a.shift16 >= 0};
  o.zp = vdupq_n_s16(static_cast<int16_t>(a.y_zp));
  o.out8 = a.y8 != nullptr;
  o.out16 = a.y16 != nullptr;
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch];
    int64_t sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums16(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    row_scales16_x8(nb, d, sum, sum_sq, a.eps_term, rs);
    for (int b = 0; b < nb; ++b) {
      const int16_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y8 = o.out8 ? a.y8 + static_cast<ptrdiff_t>(row0 + b) * a.y8_stride : nullptr;
      int16_t* y16 = o.out16 ? a.y16 + static_cast<ptrdiff_t>(row0 + b) * a.y16_stride : nullptr;
      LnRow r;
      switch (ln_row(d, sum[b], rs[b], &r)) {
        case LnForm::kRoundNarrow: ln_row_elements<LnForm::kRoundNarrow>(r, o, d, x, a.gain, a.bias, y8, y16); break;
        case LnForm::kRoundWide: ln_row_elements<LnForm::kRoundWide>(r, o, d, x, a.gain, a.bias, y8, y16); break;
        case LnForm::kShift: ln_row_elements<LnForm::kShift>(r, o, d, x, a.gain, a.bias, y8, y16); break;
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
