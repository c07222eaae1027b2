// qs8_layernorm on Helium; the integer steps are described in
// qs8-layernorm-dsp.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_acle.h>
#include <arm_mve.h>

#include <cstdint>
#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {

// Byte offsets of an 8-element step's outputs in 16-bit lanes: elements
// 0-3 narrowed into the even lanes, 4-7 into the odd ones.
alignas(16) constexpr uint16_t kOdd4[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// The square root's top for the finish below, a = x >> 32 in [2^28, 2^30):
// three Newton steps g' = floor((g + floor(a / g)) / 2) from c = 23170
// (about 2^14.5), 10 instructions with UDIV where isqrt_u32_top's 15 select
// steps took about 210 at -Os. Every step gives at least floor(sqrt(a))
// (AM-GM; the inner floor does not change the outer one), and a step from
// s (1 + e), s = sqrt(a), gives at most s (1 + e^2 / 2): from c at most
// 1.061 s (c / s is in (0.707, 1.415)), then s (1 + 0.0019), then below
// s + 0.06 (s < 2^15). So g is floor(sqrt(a)) or one more, and root 2^16 is
// within 2^16 of sqrt(x) either way (sqrt(a) 2^16 <= sqrt(x) < (floor(sqrt(a))
// + 1) 2^16), which is all isqrt_u64_top_finish's Newton step and its two
// corrections need (layernorm_row.h; its bound (sqrt(x) - r0)^2 / (2 r0) <=
// 2 holds from either side).
__attribute__((always_inline)) inline uint32_t isqrt_top_newton(uint32_t a) {
  uint32_t g = (23170u + a / 23170u) >> 1;
  g = (g + a / g) >> 1;
  return (g + a / g) >> 1;
}

// inv = floor((2^60 + (r >> 1)) / r) for r in [2^30, 2^31) without the call
// into libgcc's 64-bit division (about 60 instructions on these operands,
// this about 30): Knuth's algorithm D in 16-bit
// digits (Hacker's Delight's divlu) on u = 2^61 + (r & ~1) and v = 2r, the
// same quotient with v's top bit set. u's high word is 2^29 < v, so the
// quotient fits 32 bits; each digit's estimate from v's high half is at most
// two too large and is corrected against v's low half.
__attribute__((always_inline)) inline uint32_t recip_2p60(uint32_t r) {
  const uint32_t v = r << 1, vn1 = v >> 16, vn0 = v & 0xFFFFu;
  const uint32_t un1 = r >> 16, un0 = r & 0xFFFEu;  // u's low word, r & ~1, in digits
  uint32_t q1 = (1u << 29) / vn1, rhat = (1u << 29) - q1 * vn1;  // q1 <= 2^14
  while (q1 * vn0 > ((rhat << 16) | un1)) {
    --q1;
    rhat += vn1;
    if (rhat > 0xFFFFu) break;
  }
  // u's top three digits minus q1 v: 2^29 2^16 vanishes modulo 2^32, and the
  // true value is in [0, v).
  const uint32_t un21 = un1 - q1 * v;
  uint32_t q0 = un21 / vn1;
  rhat = un21 - q0 * vn1;
  while (q0 > 0xFFFFu || q0 * vn0 > ((rhat << 16) | un0)) {
    --q0;
    rhat += vn1;
    if (rhat > 0xFFFFu) break;
  }
  return (q1 << 16) + q0;
}

// Step 4 and the output for one row, 4 elements per vector:
//   c' = x d' - S'      VMLAS, d' = d 2^L, S' = S 2^L (wrapping; equal,
//                       since |c'| = |c| 2^L < 2^18, block comment at the top)
//   y_q, s <= 32:       VRMULH(c', inv) with L = 32 - s:
//                       floor((c inv 2^(32-s) + 2^31) / 2^32) = floor((c inv + 2^(s-1)) / 2^s)
//   y_q, s >= 33:       VMULH(c, inv) (L = 0), then VRSHL by -(s - 32): a
//                       rounding shift, floor((h + 2^(s-33)) / 2^(s-32)), nested floors
//   acc = y_q g + b     VMUL, VADD (fits int32, contract 4 step 5)
//   requantization      VMULH by M, VRSHL by -(n - 32) (n = 31 - shift >= 33;
//                       the same nested floors)
//   output              VQMOVNB.S32, VQADD.S16 zp, VQMOVNB.S16: sat8(sat16(y)
//                       + zp) = sat8(clamp(y, +-512) + zp) for |zp| <= 128
//                       (beyond +-512 both saturate to y's sign)
// For s <= 32 (every row of d <= 64 unless eps is large; wider rows with a
// large spread have s >= 33), 8 elements per step, 25 instructions: two
// vectors of 4, the second narrowed into the odd halfwords (VQMOVNT) and the
// 8 bytes stored by one byte scatter at offsets kOdd4. The rest (and the
// rows with s >= 33: an 8-element form for them cost the row loop more
// registers than it saved at d = 64) take a tail-predicated loop of 4 per
// step (WLSTP.32 / LETP: in its last step the lanes past d are off for every
// vector instruction, so no load or store leaves the row), 14 instructions
// (GCC's intrinsics: about 32 per 4). Registers: q0-q2; d', inv, M and the
// offsets in four more Q registers; pointers with writeback in r0-r7 (the
// widening loads and stores encode only low registers).
// The output of ln_row's 8-element step: q0 and q2 (4
// int32 each) saturated to int16 into the even and odd halfwords, the zero
// point added with saturation, saturated to int8, and the 8 bytes stored by
// one scatter at kOdd4's offsets.
#define EA_STORE_X8_ODD4                       \
  "vqmovnb.s32 q0, q0\n"                       \
  "vqmovnt.s32 q0, q2\n"                       \
  "vqadd.s16 q0, q0, %[zp]\n"                  \
  "vqmovnb.s16 q0, q0\n"                       \
  "vstrb.16 q0, [%[y], %q[odd4]]\n"            \
  "adds %[y], #8\n"
#define EA_LN_LOW_X4(Q)                        \
  "vldrb.s32 " Q ", [%[x]], #4\n"              \
  "vldrh.s32 q1, [%[g]], #8\n"                 \
  "vmlas.s32 " Q ", %q[dl], %[nsl]\n"          \
  "vrmulh.s32 " Q ", " Q ", %q[inv]\n"         \
  "vmul.i32 " Q ", " Q ", q1\n"                \
  "vldrw.u32 q1, [%[b]], #16\n"                \
  "vadd.i32 " Q ", " Q ", q1\n"                \
  "vmulh.s32 " Q ", " Q ", %q[m]\n"            \
  "vrshl.s32 " Q ", %[rq]\n"
#define EA_LN_LOAD_CENTER                      \
  "wlstp.32 lr, %[n], 2f\n"                    \
  "1:\n"                                       \
  "vldrb.s32 q0, [%[x]], #4\n"                 \
  "vldrh.s32 q1, [%[g]], #8\n"                 \
  "vmlas.s32 q0, %q[dl], %[nsl]\n"
#define EA_LN_AFFINE_OUTPUT                    \
  "vmul.i32 q0, q0, q1\n"                      \
  "vldrw.u32 q1, [%[b]], #16\n"                \
  "vadd.i32 q0, q0, q1\n"                      \
  "vmulh.s32 q0, q0, %q[m]\n"                  \
  "vrshl.s32 q0, %[rq]\n"                      \
  "vqmovnb.s32 q0, q0\n"                       \
  "vqadd.s16 q0, q0, %[zp]\n"                  \
  "vqmovnb.s16 q0, q0\n"                       \
  "vstrb.32 q0, [%[y]], #4\n"                  \
  "letp lr, 1b\n"                              \
  "2:\n"
template <bool kLow>
__attribute__((always_inline)) inline void ln_row(const int8_t* x, int8_t* y, int d, const int16_t* g,
                                                  const int32_t* b, int32x4_t dl, int32_t nsl, int32x4_t inv,
                                                  int32_t right, int32x4_t m, int32_t rq, int32_t zp,
                                                  uint16x8_t odd4) {
  if (kLow) {
    __asm__ volatile(  // reads and writes memory the operands do not name
        "wls lr, %[n8], 3f\n"
        "4:\n" EA_LN_LOW_X4("q0") EA_LN_LOW_X4("q2")
        EA_STORE_X8_ODD4
        "le lr, 4b\n"
        "3:\n" EA_LN_LOAD_CENTER "vrmulh.s32 q0, q0, %q[inv]\n" EA_LN_AFFINE_OUTPUT
        : [x] "+l"(x), [g] "+l"(g), [b] "+r"(b), [y] "+l"(y)
        : [n8] "r"(d >> 3), [n] "r"(d & 7), [dl] "w"(dl), [nsl] "r"(nsl), [inv] "w"(inv), [m] "w"(m), [rq] "r"(rq),
          [zp] "r"(zp), [odd4] "w"(odd4)
        : "q0", "q1", "q2", "lr", "memory");
  } else {
    __asm__ volatile(  // reads and writes memory the operands do not name
        EA_LN_LOAD_CENTER "vmulh.s32 q0, q0, %q[inv]\n"
                          "vrshl.s32 q0, %[right]\n" EA_LN_AFFINE_OUTPUT
        : [x] "+l"(x), [g] "+l"(g), [b] "+r"(b), [y] "+l"(y)
        : [n] "r"(d), [dl] "w"(dl), [nsl] "r"(nsl), [inv] "w"(inv), [right] "r"(right), [m] "w"(m), [rq] "r"(rq),
          [zp] "r"(zp)
        : "q0", "q1", "lr", "memory");
  }
}
#undef EA_STORE_X8_ODD4
#undef EA_LN_LOW_X4
#undef EA_LN_LOAD_CENTER
#undef EA_LN_AFFINE_OUTPUT

}  // namespace

// layernorm_row_scale_fast's steps with the square root's top from
// isqrt_top_newton, the Newton step's x / (root 2^16) as two 32-bit UDIVs
// (as row_scale_cm: root <= 2^15, q1 < 2^16, q2 < 2^16) and inv from recip_2p60;
// r = (root 2^16 + q1 2^16 + q2) >> 1 is below 2^31 + 2 and fits 32 bits.
// row_scale_finish: these steps from x = D 4^k in [2^60, 2^62) (both
// contracts' scaled variance), shift being step 4's s (52 - k - f; contract
// 4b: 60 - k - p - f). Inlined into layernorm_row_scale_helium (the int8
// LayerNorm's instructions as before) and out of line for
// qs16_layernorm__helium (layernorm_row_scale_helium_finish).
__attribute__((always_inline)) inline LayerNormRowScale row_scale_finish(uint64_t x, int shift) {
  const uint32_t high = static_cast<uint32_t>(x >> 32);
  const uint32_t root = isqrt_top_newton(high);
  const uint32_t q1 = high / root, rem = high - q1 * root;
  const uint32_t q2 = ((rem << 16) | (static_cast<uint32_t>(x) >> 16)) / root;
  uint32_t r = ((root + q1) << 15) + (q2 >> 1);
  r -= static_cast<uint64_t>(r) * r > x ? 1 : 0;
  r -= static_cast<uint64_t>(r) * r > x ? 1 : 0;
  return LayerNormRowScale{static_cast<int32_t>(recip_2p60(r)), shift};
}

LayerNormRowScale layernorm_row_scale_helium(int d, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  const LayerNormScaledVar v = layernorm_scaled_var(d, sum, sum_sq, eps_term);
  return row_scale_finish(v.x, 52 - v.k - layernorm_frac_bits(d));
}

LayerNormRowScale layernorm_row_scale_helium_finish(uint64_t x, int shift) { return row_scale_finish(x, shift); }

// Row sums on 16 bytes per step (VADDVA, VMLADAVA.S8, tail-predicated),
// layernorm_row_scale_helium, ln_row. gain / bias not aligned to their
// element size (MVE loads would fault), a multiplier of 1/4 or more, or a
// zero point outside int8 take the reference.
void qs8_layernorm__helium(const QS8LayerNormArgs& a) {
  if ((reinterpret_cast<uintptr_t>(a.gain) & 1) != 0 || (reinterpret_cast<uintptr_t>(a.bias) & 3) != 0 ||
      a.shift > -2 || a.y_zp < -128 || a.y_zp > 127) {
    qs8_layernorm__ref(a);
    return;
  }
  const int32_t rq = a.shift + 1;  // -(n - 32)
  const int d = a.dim;
  const int32x4_t m = vdupq_n_s32(a.mult);
  const uint16x8_t odd4 = vldrhq_u16(kOdd4);
  for (int r = 0; r < a.rows; ++r) {
    const int8_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    const int8_t* xs = x;
    int32_t sum = 0, sum_sq = 0;
    __asm__(
        "wlstp.8 lr, %[n], 2f\n"
        "1:\n"
        "vldrb.u8 q0, [%[x]], #16\n"
        "vaddva.s8 %[s], q0\n"
        "vmladava.s8 %[q], q0, q0\n"
        "letp lr, 1b\n"
        "2:\n"
        : [x] "+r"(xs), [s] "+Te"(sum), [q] "+Te"(sum_sq)
        : [n] "r"(d)
        : "q0", "lr", "memory");  // reads memory the operands do not name
    const LayerNormRowScale rs = layernorm_row_scale_helium(d, sum, sum_sq, a.eps_term);
    int8_t* y = a.y + static_cast<ptrdiff_t>(r) * a.y_stride;
    const int32x4_t inv = vdupq_n_s32(rs.inv);
    if (rs.shift <= 32) {
      const int left = 32 - rs.shift;
      ln_row<true>(x, y, d, a.gain, a.bias, vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(d) << left)),
                   static_cast<int32_t>(0u - (static_cast<uint32_t>(sum) << left)), inv, 0, m, rq, a.y_zp, odd4);
    } else {
      ln_row<false>(x, y, d, a.gain, a.bias, vdupq_n_s32(d), -sum, inv, 32 - rs.shift, m, rq, a.y_zp, odd4);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
