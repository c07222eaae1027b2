// Cortex-M kernels of the transformer blocks: the integer LayerNorm
// (requant.h contract 4) and the activation table (contract 6);
// bit-identical to kernels/ref/layernorm.cc
// and elementwise.cc. The DSP forms exist on DSP-only builds (M4, M7, M33;
// on Helium builds the cmsis-dsp table keeps the reference, as for the
// softmax, isa/cortex-m/cortexm.h).
//
// LayerNorm, per row: S and Q (SMLAD on sign-extended byte pairs, or
// VADDVA / VMLADAVA.S8 on 16 bytes), the row scale from row_scale_cm
// (layernorm_row_scale_fast's 15-step 32-bit square root instead of the
// reference's 31 64-bit steps) or, on Helium, layernorm_row_scale_helium
// (Newton steps with UDIV, no 64-bit division), then per element step 4 in
// 32 bits (the DSP form; the Helium one is at ln_row):
//   y_q = floor((c inv + 2^(s-1)) / 2^s) = SMMLA(c 2^L, inv, A) >> R
// with L = 33 - s, A = 1, R = 1 for s <= 32 (floor((X / 2^32 + 1) / 2) with
// X = c inv 2^L: nested floors) and L = 0, A = 2^(s-33), R = s - 32 for
// s >= 33 (the integer A inside the floor by 2^32 is the rounding 2^(s-1)).
// c 2^L fits int32 and the clamp to +-32767 never binds, because |y_q| <=
// 2^14 for every int8 row and E >= 1 (proof in kernels/qs8-layernorm/qs8-layernorm-avx2.cc): |c| <
// (2^14 + 1) 2^s / inv < 2^(s-14), so |c 2^L| < 2^19. c 2^L = x (d 2^L) -
// S 2^L is computed in wrapping 32 bits: equal modulo 2^32, and it fits.
// The output requantization is per tensor: requant_cm.h's one-SMMLA form
// (n = 31 - shift >= 33: a multiplier s_g 2^-f / s_out below 1/4); a
// larger multiplier, or a zero point outside int8, takes the reference.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"

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

}  // namespace kernels
}  // namespace edgeattn
#endif
