// NEON kernels of the transformer blocks (Armv7-A and AArch64): the integer
// LayerNorm (requant.h contract 4) and the residual add (contract 5),
// bit-identical to kernels/ref/layernorm.cc and elementwise.cc.
#include <arm_neon.h>

#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "neon/neon_common.h"
#include "neon/neon_kernels.h"

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

// Step 4 of contract 4 in 32-bit lanes: y_q = floor((c inv + 2^(s-1)) / 2^s)
// as SQDMULH (floor(a inv / 2^31)) of a = c 2^L, then a rounding shift right
// by R (VRSHL: round half up, exact), with L - R = 31 - s, R >= 1:
// s <= 31: L = 32 - s, R = 1; s > 31: L = 0, R = s - 31 (nested floors).
// c 2^L fits int32: |y_q| <= 2^14 for every int8 row and E >= 1 (the proof
// is in kernels/avx2/block.cc), so |c| <= (2^14 + 1) 2^s / inv < 2^(s - 14),
// and |c 2^L| < 2^18. For the same reason the clamp to +-32767 never binds,
// and y_q fits int16 for the gain product (VMLAL). SQDMULH saturates only
// for INT32_MIN x INT32_MIN; inv > 0.
// c 2^L itself is computed as x (d 2^L) - S 2^L in wrapping int32: equal to
// c 2^L modulo 2^32, and c 2^L fits int32, so equal (one VMLA per 4 lanes).
struct LnRow {
  int32_t d_l;           // d 2^L mod 2^32
  int32x4_t neg_sum_l;   // -S 2^L mod 2^32
  int32_t inv;
  int32x4_t neg_right;
};

inline LnRow ln_row(int d, int32_t sum, const LayerNormRowScale& rs) {
  const int left = rs.shift <= 31 ? 32 - rs.shift : 0;
  LnRow r;
  r.d_l = static_cast<int32_t>(static_cast<uint32_t>(d) << left);
  r.neg_sum_l = vdupq_n_s32(static_cast<int32_t>(0u - (static_cast<uint32_t>(sum) << left)));
  r.inv = rs.inv;
  r.neg_right = vdupq_n_s32(rs.shift <= 31 ? -1 : 31 - rs.shift);
  return r;
}

inline int16x4_t ln_yq4(const LnRow& r, int16x4_t x) {
  const int32x4_t c_l = vmlaq_n_s32(r.neg_sum_l, vmovl_s16(x), r.d_l);
  return vmovn_s32(vrshlq_s32(vqdmulhq_n_s32(c_l, r.inv), r.neg_right));
}

// 8 elements: y_q gain + bias, requantized, + zp, saturated to int8.
inline int8x8_t ln_x8(const LnRow& r, const neon::Rq32& rq, int16x8_t zp, int8x8_t x,
                      const int16_t* gain, const int32_t* bias) {
  const int16x8_t x16 = vmovl_s8(x);
  const int16x8_t g = vld1q_s16(gain);
  const int32x4_t a0 = vmlal_s16(vld1q_s32(bias), ln_yq4(r, vget_low_s16(x16)), vget_low_s16(g));
  const int32x4_t a1 = vmlal_s16(vld1q_s32(bias + 4), ln_yq4(r, vget_high_s16(x16)), vget_high_s16(g));
  return neon::add_zp_sat8(neon::requantize32_x4(a0, rq), neon::requantize32_x4(a1, rq), zp);
}

}  // namespace

// Rows in batches: sums and row scales first (independent long-latency
// chains: the square root and two divisions), then the elements.
void qs8_layernorm__neon(const QS8LayerNormArgs& a) {
  constexpr int kBatch = 8;
  const int d = a.dim;
  const neon::Rq32 rq = neon::rq32_of(a.mult, a.shift);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(a.y_zp));
  for (int row0 = 0; row0 < a.rows; row0 += kBatch) {
    const int nb = a.rows - row0 < kBatch ? a.rows - row0 : kBatch;
    int32_t sum[kBatch], sum_sq[kBatch];
    LayerNormRowScale rs[kBatch];
    for (int b = 0; b < nb; ++b) row_sums(a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride, d, &sum[b], &sum_sq[b]);
    for (int b = 0; b < nb; ++b) rs[b] = layernorm_row_scale_fast(d, sum[b], sum_sq[b], a.eps_term);
    for (int b = 0; b < nb; ++b) {
      const int8_t* x = a.x + static_cast<ptrdiff_t>(row0 + b) * a.x_stride;
      int8_t* y = a.y + static_cast<ptrdiff_t>(row0 + b) * a.y_stride;
      const LnRow r = ln_row(d, sum[b], rs[b]);
      int i = 0;
      for (; i + 16 <= d; i += 16) {
        const int8x16_t xv = vld1q_s8(x + i);
        const int8x8_t lo = ln_x8(r, rq, zp, vget_low_s8(xv), a.gain + i, a.bias + i);
        const int8x8_t hi = ln_x8(r, rq, zp, vget_high_s8(xv), a.gain + i + 8, a.bias + i + 8);
        vst1q_s8(y + i, vcombine_s8(lo, hi));
      }
      for (; i + 8 <= d; i += 8) vst1_s8(y + i, ln_x8(r, rq, zp, vld1_s8(x + i), a.gain + i, a.bias + i));
      if (i < d) {  // the last 1-7 elements through zero-padded copies
        const int n = d - i;
        int8_t xb[8] = {}, yb[8];
        int16_t gb[8] = {};
        int32_t bb[8] = {};
        std::memcpy(xb, x + i, n);
        std::memcpy(gb, a.gain + i, n * sizeof(int16_t));
        std::memcpy(bb, a.bias + i, n * sizeof(int32_t));
        vst1_s8(yb, ln_x8(r, rq, zp, vld1_s8(xb), gb, bb));
        std::memcpy(y + i, yb, n);
      }
    }
  }
}

// Contract 5 in wrapping int32: a A + b B + (-zp_a A - zp_b B) is the
// reference's (a - zp_a) A + (b - zp_b) B modulo 2^32, and that sum fits
// int32 (A, B < 2^22, |a - zp_a| <= 255), so the two agree; VRSHL by -n then
// adds 2^(n-1) and shifts without overflow, as the reference does.
void qs8_add__neon(const QS8AddArgs& a) {
  const int32_t ma = a.a_mult, mb = a.b_mult;
  const int32x4_t c = vdupq_n_s32(static_cast<int32_t>(
      0u - static_cast<uint32_t>(a.a_zp) * static_cast<uint32_t>(ma) - static_cast<uint32_t>(a.b_zp) * static_cast<uint32_t>(mb)));
  const int32x4_t neg_n = vdupq_n_s32(-a.shift);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(a.y_zp));
  auto sum4 = [&](int16x4_t av, int16x4_t bv) {
    return vrshlq_s32(vmlaq_n_s32(vmlaq_n_s32(c, vmovl_s16(av), ma), vmovl_s16(bv), mb), neg_n);
  };
  auto add8 = [&](int8x8_t av, int8x8_t bv) {
    const int16x8_t a16 = vmovl_s8(av), b16 = vmovl_s8(bv);
    return neon::add_zp_sat8(sum4(vget_low_s16(a16), vget_low_s16(b16)), sum4(vget_high_s16(a16), vget_high_s16(b16)), zp);
  };
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* ar = a.a + static_cast<ptrdiff_t>(r) * a.a_stride;
    const int8_t* br = a.b + static_cast<ptrdiff_t>(r) * a.b_stride;
    int8_t* yr = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    int i = 0;
    for (; i + 16 <= a.n; i += 16) {
      const int8x16_t av = vld1q_s8(ar + i), bv = vld1q_s8(br + i);
      vst1q_s8(yr + i, vcombine_s8(add8(vget_low_s8(av), vget_low_s8(bv)), add8(vget_high_s8(av), vget_high_s8(bv))));
    }
    for (; i + 8 <= a.n; i += 8) vst1_s8(yr + i, add8(vld1_s8(ar + i), vld1_s8(br + i)));
    if (i < a.n) {
      const int n = a.n - i;
      int8_t ab[8] = {}, bb[8] = {}, yb[8];
      std::memcpy(ab, ar + i, n);
      std::memcpy(bb, br + i, n);
      vst1_s8(yb, add8(vld1_s8(ab), vld1_s8(bb)));
      std::memcpy(yr + i, yb, n);
    }
  }
}

// y = table[x + 128] with TBL/VTBL over the 256-byte table in 64-byte (AArch64: 4
// registers) or 32-byte (Armv7: VTBL's 4 d registers) slices: an index past a
// slice gives 0 (TBL) or leaves the lane (TBX), so each slice adds its bytes.
void qs8_lut__neon(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                   int y_stride) {
#if defined(__aarch64__)
  uint8x16x4_t t[4];
  for (int s = 0; s < 4; ++s) {
    for (int k = 0; k < 4; ++k) t[s].val[k] = vld1q_u8(reinterpret_cast<const uint8_t*>(table) + 64 * s + 16 * k);
  }
  const uint8x16_t step = vdupq_n_u8(64), bias = vdupq_n_u8(128);
  auto lut16 = [&](uint8x16_t v) {
    uint8x16_t idx = veorq_u8(v, bias);  // x + 128
    uint8x16_t out = vqtbl4q_u8(t[0], idx);
    for (int s = 1; s < 4; ++s) {
      idx = vsubq_u8(idx, step);
      out = vqtbx4q_u8(out, t[s], idx);
    }
    return out;
  };
#else
  uint8x8x4_t t[8];
  for (int s = 0; s < 8; ++s) {
    for (int k = 0; k < 4; ++k) t[s].val[k] = vld1_u8(reinterpret_cast<const uint8_t*>(table) + 32 * s + 8 * k);
  }
  const uint8x8_t step = vdup_n_u8(32), bias = vdup_n_u8(128);
  auto lut8 = [&](uint8x8_t v) {
    uint8x8_t idx = veor_u8(v, bias);
    uint8x8_t out = vtbl4_u8(t[0], idx);
    for (int s = 1; s < 8; ++s) {
      idx = vsub_u8(idx, step);
      out = vtbx4_u8(out, t[s], idx);
    }
    return out;
  };
  auto lut16 = [&](uint8x16_t v) { return vcombine_u8(lut8(vget_low_u8(v)), lut8(vget_high_u8(v))); };
#endif
  for (int r = 0; r < rows; ++r) {
    const uint8_t* xr = reinterpret_cast<const uint8_t*>(x) + static_cast<ptrdiff_t>(r) * x_stride;
    uint8_t* yr = reinterpret_cast<uint8_t*>(y) + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
    for (; i + 16 <= n; i += 16) vst1q_u8(yr + i, lut16(vld1q_u8(xr + i)));
    if (i < n) {
      uint8_t xb[16] = {}, yb[16];
      std::memcpy(xb, xr + i, n - i);
      vst1q_u8(yb, lut16(vld1q_u8(xb)));
      std::memcpy(yr + i, yb, n - i);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
