// Cortex-M kernels of the transformer blocks: the integer LayerNorm
// (requant.h contract 4), the residual add (contract 5) and, on Helium, the
// activation table (contract 6); bit-identical to kernels/ref/layernorm.cc
// and elementwise.cc. The DSP forms exist on DSP-only builds (M4, M7, M33;
// on Helium builds the cmsis-dsp table keeps the reference, as for the
// softmax, cortexm_kernels.h).
//
// LayerNorm, per row: S and Q (SMLAD on sign-extended byte pairs, or
// VADDVA / VMLADAVA.S8 on 16 bytes), the row scale from
// layernorm_row_scale_fast (a 15-step 32-bit square root instead of the
// reference's 31 64-bit steps), then per element step 4 in 32 bits:
//   y_q = floor((c inv + 2^(s-1)) / 2^s) = SMMLA(c 2^L, inv, A) >> R
// with L = 33 - s, A = 1, R = 1 for s <= 32 (floor((X / 2^32 + 1) / 2) with
// X = c inv 2^L: nested floors) and L = 0, A = 2^(s-33), R = s - 32 for
// s >= 33 (the integer A inside the floor by 2^32 is the rounding 2^(s-1)).
// c 2^L fits int32 and the clamp to +-32767 never binds, because |y_q| <=
// 2^14 for every int8 row and E >= 1 (proof in kernels/avx2/block.cc): |c| <
// (2^14 + 1) 2^s / inv < 2^(s-14), so |c 2^L| < 2^19. c 2^L = x (d 2^L) -
// S 2^L is computed in wrapping 32 bits: equal modulo 2^32, and it fits.
// The output requantization is per tensor: requant_cm.h's one-SMMLA form
// (n = 31 - shift >= 33, every real LayerNorm's s_g 2^-f / s_out < 1/4);
// a larger multiplier takes the reference kernel.
//
// Residual add: (a - zp_a) A + (b - zp_b) B + 2^(n-1) is computed as
// a A + b B + C with C = 2^(n-1) - zp_a A - zp_b B in wrapping 32 bits: the
// reference's sum fits int32 (A, B < 2^22, |a - zp_a| <= 255), so the two
// are equal, and one arithmetic shift by n follows.
#include "cortex-m/cortexm_kernels.h"

#if (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#include <arm_acle.h>

#include <cstdint>

#include "cortex-m/dsp_common.h"
#include "cortex-m/requant_cm.h"
#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace {

// Step 4's per-row constants (comment at the top).
struct LnStep4 {
  int32_t d_l, neg_sum_l, inv, round;
  int right;
};

inline LnStep4 ln_step4(int d, int32_t sum, const LayerNormRowScale& rs) {
  const bool low = rs.shift <= 32;
  const int left = low ? 33 - rs.shift : 0;
  LnStep4 st;
  st.d_l = static_cast<int32_t>(static_cast<uint32_t>(d) << left);
  st.neg_sum_l = static_cast<int32_t>(0u - (static_cast<uint32_t>(sum) << left));
  st.inv = rs.inv;
  st.round = low ? 1 : int32_t{1} << (rs.shift - 33);
  st.right = low ? 1 : rs.shift - 32;
  return st;
}

// C of the residual add (comment at the top).
inline int32_t add_offset(const QS8AddArgs& a) {
  return static_cast<int32_t>((uint32_t{1} << (a.shift - 1)) -
                              static_cast<uint32_t>(a.a_zp) * static_cast<uint32_t>(a.a_mult) -
                              static_cast<uint32_t>(a.b_zp) * static_cast<uint32_t>(a.b_mult));
}

}  // namespace

#if EA_CM_DSP_ONLY
namespace {

inline int32_t smmla(int32_t a, int32_t b, int32_t acc) {
  int32_t r;
  __asm__("smmla %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
}

// S and Q of one row: two SMLADs per byte pair (by 1 and by itself).
void row_sums(const int8_t* x, int d, int32_t* sum, int32_t* sum_sq) {
  int32_t s = 0, q = 0;
  int i = 0;
  for (; i + 4 <= d; i += 4) {
    const uint32_t w = dsp::load4(x + i);
    const uint32_t lo = __sxtb16(w), hi = dsp::sxtb16_ror8(w);
    s = __smlad(__sadd16(lo, hi), 0x00010001u, s);  // |x_i + x_j| <= 256 fits int16
    q = __smlad(lo, lo, q);
    q = __smlad(hi, hi, q);
  }
  for (; i < d; ++i) {
    s += x[i];
    q += x[i] * x[i];
  }
  *sum = s;
  *sum_sq = q;
}

// Step 4 and the output for one row's elements. Pointers and locals only
// (the int8 stores may alias anything, so fields of a struct would be
// reloaded per element); kLow fixes A = R = 1 (s <= 32, most rows of d <=
// 256). Out of line, so that the row loop's values do not take the
// registers of the element loop (-Os spilled five of them into it).
template <bool kLow>
__attribute__((noinline)) void ln_elements(const int8_t* x, int8_t* y, int d, const int16_t* gain,
                                                       const int32_t* bias, const LnStep4& st, int32_t mult,
                                                       int32_t rq_round, int32_t rq_right, int32_t zp) {
  const uint32_t d_l = static_cast<uint32_t>(st.d_l), neg_sum_l = static_cast<uint32_t>(st.neg_sum_l);
  const int32_t inv = st.inv, round = kLow ? 1 : st.round, right = kLow ? 1 : st.right;
  for (const int8_t* const end = x + d; x != end;) {
    const int32_t c_l = static_cast<int32_t>(static_cast<uint32_t>(*x++) * d_l + neg_sum_l);
    const int32_t yq = smmla(c_l, inv, round) >> right;
    const int32_t v = smmla(yq * *gain++ + *bias++, mult, rq_round) >> rq_right;
    *y++ = static_cast<int8_t>(__ssat(__ssat(v, 10) + zp, 8));
  }
}

}  // namespace

void qs8_layernorm__dsp(const QS8LayerNormArgs& a) {
  // The one-SMMLA requantization needs n = 31 - shift >= 33; the SSAT pair
  // equals requant.h's clamp to +-512, + zp, saturation for |zp| <= 128.
  if (a.shift > -2 || a.y_zp < -128 || a.y_zp > 127) {
    qs8_layernorm__ref(a);
    return;
  }
  const int32_t rq_round = int32_t{1} << (-2 - a.shift), rq_right = -1 - a.shift;  // 2^(n-33), n - 32
  const int d = a.dim;
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int8_t* y = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    int32_t sum, sum_sq;
    row_sums(x, d, &sum, &sum_sq);
    const LayerNormRowScale rs = layernorm_row_scale_fast(d, sum, sum_sq, a.eps_term);
    const LnStep4 st = ln_step4(d, sum, rs);
    if (rs.shift <= 32) {
      ln_elements<true>(x, y, d, a.gain, a.bias, st, a.mult, rq_round, rq_right, a.y_zp);
    } else {
      ln_elements<false>(x, y, d, a.gain, a.bias, st, a.mult, rq_round, rq_right, a.y_zp);
    }
  }
}

void qs8_add__dsp(const QS8AddArgs& a) {
  const uint32_t ma = static_cast<uint32_t>(a.a_mult), mb = static_cast<uint32_t>(a.b_mult);
  const uint32_t c = static_cast<uint32_t>(add_offset(a));
  const int32_t n = a.shift, zp = a.y_zp;
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* ar = a.a + static_cast<ptrdiff_t>(r) * a.a_stride;
    const int8_t* br = a.b + static_cast<ptrdiff_t>(r) * a.b_stride;
    int8_t* yr = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    for (const int8_t* const end = ar + a.n; ar != end;) {
      const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(*ar++) * ma + static_cast<uint32_t>(*br++) * mb + c);
      *yr++ = static_cast<int8_t>(__ssat((s >> n) + zp, 8));
    }
  }
}
#endif  // EA_CM_DSP_ONLY

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
// Row sums on 16 bytes per step, step 4 and the output in 4 lanes of 32
// bits (VMULH is SMMLA's high word without the accumulator), the output
// through requant_cm.h's requant_x4_store. gain / bias not aligned to their
// element size (MVE loads would fault) take the reference, as a multiplier
// of 1/4 or more does.
void qs8_layernorm__helium(const QS8LayerNormArgs& a) {
  cm::RequantX4 rq;
  if ((reinterpret_cast<uintptr_t>(a.gain) & 1) != 0 || (reinterpret_cast<uintptr_t>(a.bias) & 3) != 0 ||
      !cm::requant_x4_setup(vdupq_n_s32(a.mult), vdupq_n_s32(a.shift), vctp32q(4), &rq)) {
    qs8_layernorm__ref(a);
    return;
  }
  const int d = a.dim;
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int8_t* y = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    int32_t sum = 0, sum_sq = 0;
    for (int i = 0; i < d; i += 16) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(d - i));
      const int8x16_t v = vldrbq_z_s8(x + i, p);
      sum = vaddvaq_p_s8(sum, v, p);
      sum_sq = vmladavaq_p_s8(sum_sq, v, v, p);
    }
    const LnStep4 st = ln_step4(d, sum, layernorm_row_scale_fast(d, sum, sum_sq, a.eps_term));
    const int32x4_t neg_sum_l = vdupq_n_s32(st.neg_sum_l), inv = vdupq_n_s32(st.inv);
    const int32x4_t neg_right = vdupq_n_s32(-st.right);
    for (int i = 0; i < d; i += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(d - i));
      const int32x4_t c_l = vmlaq_n_s32(neg_sum_l, vldrbq_z_s32(x + i, p), st.d_l);
      const int32x4_t yq = vshlq_s32(vaddq_n_s32(vmulhq_s32(c_l, inv), st.round), neg_right);
      const int32x4_t acc = vaddq_s32(vldrwq_z_s32(a.bias + i, p), vmulq_s32(yq, vldrhq_z_s32(a.gain + i, p)));
      cm::requant_x4_store(acc, rq, a.y_zp, y + i, p);
    }
  }
}

// 4 lanes of 32 bits (A, B < 2^22 need them); VSHL by -n is the arithmetic
// shift, two saturating narrows the int8 saturation (as requant_x4_store).
void qs8_add__helium(const QS8AddArgs& a) {
  const int32x4_t c = vdupq_n_s32(add_offset(a)), neg_n = vdupq_n_s32(-a.shift);
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* ar = a.a + static_cast<ptrdiff_t>(r) * a.a_stride;
    const int8_t* br = a.b + static_cast<ptrdiff_t>(r) * a.b_stride;
    int8_t* yr = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    for (int i = 0; i < a.n; i += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(a.n - i));
      int32x4_t s = vmlaq_n_s32(c, vldrbq_z_s32(ar + i, p), a.a_mult);
      s = vmlaq_n_s32(s, vldrbq_z_s32(br + i, p), a.b_mult);
      const int32x4_t v = vaddq_n_s32(vshlq_s32(s, neg_n), a.y_zp);
      const int16x8_t h = vqmovnbq_s32(vreinterpretq_s16_s32(v), v);
      vstrbq_p_s32(yr + i, vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s16(h), h)), p);
    }
  }
}

// 16 bytes per step: x + 128 as a byte offset is x XOR 0x80, then one byte
// gather from the table.
void qs8_lut__helium(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                     int y_stride) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* xr = reinterpret_cast<const uint8_t*>(x) + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    for (int i = 0; i < n; i += 16) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
      const uint8x16_t offs = veorq_u8(vldrbq_z_u8(xr + i, p), flip);
      vstrbq_p_s8(yr + i, vldrbq_gather_offset_z_s8(table, offs, p), p);
    }
  }
}
#endif  // __ARM_FEATURE_MVE

}  // namespace kernels
}  // namespace edgeattn

#endif  // DSP or MVE
