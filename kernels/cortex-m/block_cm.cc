// Cortex-M kernels of the transformer blocks: the integer LayerNorm
// (requant.h contract 4), the residual add (contract 5) and the activation
// table (contract 6); bit-identical to kernels/ref/layernorm.cc
// and elementwise.cc. The DSP forms exist on DSP-only builds (M4, M7, M33;
// on Helium builds the cmsis-dsp table keeps the reference, as for the
// softmax, cortexm_kernels.h).
//
// LayerNorm, per row: S and Q (SMLAD on sign-extended byte pairs, or
// VADDVA / VMLADAVA.S8 on 16 bytes), the row scale from row_scale_cm
// (layernorm_row_scale_fast's 15-step 32-bit square root instead of the
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
// (n = 31 - shift >= 33: a multiplier s_g 2^-f / s_out below 1/4); a
// larger multiplier, or a zero point outside int8, takes the reference.
//
// Residual add: (a - zp_a) A + (b - zp_b) B + 2^(n-1) is computed as
// a A + b B + C with C = 2^(n-1) - zp_a A - zp_b B in wrapping 32 bits: the
// reference's sum fits int32 (A, B < 2^22, |a - zp_a| <= 255), so the two
// are equal, and one arithmetic shift by n follows.
#include "cortex-m/cortexm_kernels.h"

#if (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#include <arm_acle.h>

#include <cstdint>
#include <cstring>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif

#include "cortex-m/dsp_common.h"
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

// layernorm_row_scale_fast() with its 64-bit division x / (root 2^16) as
// two 32-bit UDIVs (libgcc's 64-bit division costs about 190 instructions):
// x / (root 2^16) = floor(n / root), n = x >> 16 < 2^46, root in [2^14,
// 2^15) (x >> 32 in [2^28, 2^30)), by long division in 16-bit digits: the
// high part x >> 32 gives q1 < 2^16 and a remainder below root, and
// (remainder 2^16 + the low digit) < 2^31. The rest is
// isqrt_u64_top_finish() and layernorm_row_scale_finish().
inline LayerNormRowScale row_scale_cm(int d, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  const LayerNormScaledVar v = layernorm_scaled_var(d, sum, sum_sq, eps_term);
  const uint32_t high = static_cast<uint32_t>(v.x >> 32);
  const uint32_t root = isqrt_u32_top(high);
  const uint32_t q1 = high / root, rem = high - q1 * root;
  const uint32_t q2 = ((rem << 16) | static_cast<uint32_t>((v.x >> 16) & 0xFFFFu)) / root;
  uint64_t r = ((static_cast<uint64_t>(root) << 16) + (static_cast<uint64_t>(q1) << 16) + q2) >> 1;
  r -= r * r > v.x ? 1 : 0;
  r -= r * r > v.x ? 1 : 0;
  const int32_t inv = static_cast<int32_t>(((uint64_t{1} << 60) + (r >> 1)) / r);
  return LayerNormRowScale{inv, 52 - v.k - layernorm_frac_bits(d)};
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
    const LayerNormRowScale rs = row_scale_cm(d, sum, sum_sq, a.eps_term);
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

// Four bytes per word: each index sign-extended by SXTB (with its rotation)
// into the table's middle, table + 128, and the four results packed into
// one store (the reference reloads the table pointer per byte at -Os).
void qs8_lut__dsp(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y, int y_stride) {
  const uint8_t* const mid = reinterpret_cast<const uint8_t*>(table) + 128;
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      const uint32_t w = dsp::load4(xr + i);
      const uint32_t v = mid[static_cast<int8_t>(w)] | uint32_t{mid[static_cast<int8_t>(w >> 8)]} << 8 |
                         uint32_t{mid[static_cast<int8_t>(w >> 16)]} << 16 | uint32_t{mid[static_cast<int8_t>(w >> 24)]} << 24;
      std::memcpy(yr + i, &v, 4);
    }
    for (; i < n; ++i) yr[i] = static_cast<int8_t>(mid[xr[i]]);
  }
}
#endif  // EA_CM_DSP_ONLY

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
namespace {

// The int8 end of requant.h's requantize_s8 / saturate_s8 for 4 lanes of y
// when |zp| <= 128: sat8(sat16(y) + zp) (VQMOVNB, VQADD, VQMOVNB; the
// bottom byte of each 32-bit lane is the result, stored by VSTRB.32) equals
// sat8(clamp(y, -512, 512) + zp) and sat8(y + zp): beyond +-512 both sides
// saturate to y's sign.
template <bool kTail>
__attribute__((always_inline)) inline void store_s8_x4(int32x4_t y, int32_t zp, int8_t* out, mve_pred16_t p) {
  int16x8_t h = vqmovnbq_s32(vuninitializedq_s16(), y);
  h = vqaddq_n_s16(h, static_cast<int16_t>(zp));
  const int32x4_t b = vreinterpretq_s32_s8(vqmovnbq_s16(vuninitializedq_s8(), h));
  if (kTail) {
    vstrbq_p_s32(out, b, p);
  } else {
    vstrbq_s32(out, b);
  }
}

// Step 4 and the output for 4 elements: VMLAS (x d 2^L + -S 2^L), VMULH
// (SMMLA's high word, the accumulator added after), the per-tensor
// requantization of requant_cm.h's requant_x4 with scalar round and shift.
// kTail: the last 1-3 elements, predicated (VPST per load costs a third
// more instructions, so full vectors go without).
template <bool kTail>
__attribute__((always_inline)) inline void ln_x4(const int8_t* x, int8_t* y, const int16_t* gain, const int32_t* bias,
                                                 int32x4_t d_l, int32_t neg_sum_l, int32x4_t inv, int32_t round,
                                                 int32_t neg_right, int32x4_t m, int32_t rq_round, int32_t rq_shl,
                                                 int32_t zp, mve_pred16_t p) {
  const int32x4_t xv = kTail ? vldrbq_z_s32(x, p) : vldrbq_s32(x);
  const int32x4_t g = kTail ? vldrhq_z_s32(gain, p) : vldrhq_s32(gain);
  const int32x4_t b = kTail ? vldrwq_z_s32(bias, p) : vldrwq_s32(bias);
  const int32x4_t yq = vshlq_r_s32(vaddq_n_s32(vmulhq_s32(vmlasq_n_s32(xv, d_l, neg_sum_l), inv), round), neg_right);
  store_s8_x4<kTail>(vshlq_r_s32(vaddq_n_s32(vmulhq_s32(vaddq_s32(b, vmulq_s32(yq, g)), m), rq_round), rq_shl), zp, y, p);
}

// One row, out of line with scalar arguments: all constants fit the 8 Q
// registers.
__attribute__((noinline)) void ln_row_helium(const int8_t* x, int8_t* y, int d, const int16_t* gain,
                                             const int32_t* bias, const LnStep4& st, int32_t mult,
                                             int32_t rq_round, int32_t rq_shl, int32_t zp) {
  const int32x4_t d_l = vdupq_n_s32(st.d_l), inv = vdupq_n_s32(st.inv), m = vdupq_n_s32(mult);
  const int32_t neg_sum_l = st.neg_sum_l, round = st.round, neg_right = -st.right;
  int i = 0;
  for (; i + 4 <= d; i += 4) {
    ln_x4<false>(x + i, y + i, gain + i, bias + i, d_l, neg_sum_l, inv, round, neg_right, m, rq_round, rq_shl, zp, 0);
  }
  if (i < d) {
    ln_x4<true>(x + i, y + i, gain + i, bias + i, d_l, neg_sum_l, inv, round, neg_right, m, rq_round, rq_shl, zp,
                vctp32q(static_cast<uint32_t>(d - i)));
  }
}

}  // namespace

// Row sums on 16 bytes per step (VADDVA, VMLADAVA.S8). gain / bias not
// aligned to their element size (MVE loads would fault), a multiplier of 1/4
// or more, or a zero point outside int8 take the reference.
void qs8_layernorm__helium(const QS8LayerNormArgs& a) {
  if ((reinterpret_cast<uintptr_t>(a.gain) & 1) != 0 || (reinterpret_cast<uintptr_t>(a.bias) & 3) != 0 ||
      a.shift > -2 || a.y_zp < -128 || a.y_zp > 127) {
    qs8_layernorm__ref(a);
    return;
  }
  const int32_t rq_round = int32_t{1} << (-2 - a.shift), rq_shl = a.shift + 1;  // 2^(n-33), 32 - n
  const int d = a.dim;
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int32_t sum = 0, sum_sq = 0;
    for (int i = 0; i < d; i += 16) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(d - i));
      const int8x16_t v = vldrbq_z_s8(x + i, p);
      sum = vaddvaq_p_s8(sum, v, p);
      sum_sq = vmladavaq_p_s8(sum_sq, v, v, p);
    }
    const LnStep4 st = ln_step4(d, sum, row_scale_cm(d, sum, sum_sq, a.eps_term));
    ln_row_helium(x, a.y + static_cast<ptrdiff_t>(r) * a.y_stride, d, a.gain, a.bias, st, a.mult, rq_round, rq_shl,
                  a.y_zp);
  }
}

// 4 lanes of 32 bits (A, B < 2^22 need them): VMLAS and VMLA, VSHL by -n
// (the arithmetic shift), store_s8_x4 (a zero point outside int8 takes the
// reference).
void qs8_add__helium(const QS8AddArgs& a) {
  if (a.y_zp < -128 || a.y_zp > 127) {
    qs8_add__ref(a);
    return;
  }
  const int32_t c = add_offset(a), neg_n = -a.shift, mb = a.b_mult, zp = a.y_zp, len = a.n;
  const int32x4_t ma = vdupq_n_s32(a.a_mult);
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* ar = a.a + static_cast<ptrdiff_t>(r) * a.a_stride;
    const int8_t* br = a.b + static_cast<ptrdiff_t>(r) * a.b_stride;
    int8_t* yr = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    int i = 0;
    for (; i + 4 <= len; i += 4) {
      const int32x4_t s = vmlaq_n_s32(vmlasq_n_s32(vldrbq_s32(ar + i), ma, c), vldrbq_s32(br + i), mb);
      store_s8_x4<false>(vshlq_r_s32(s, neg_n), zp, yr + i, 0);
    }
    if (i < len) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(len - i));
      const int32x4_t s = vmlaq_n_s32(vmlasq_n_s32(vldrbq_z_s32(ar + i, p), ma, c), vldrbq_z_s32(br + i, p), mb);
      store_s8_x4<true>(vshlq_r_s32(s, neg_n), zp, yr + i, p);
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
