// qs16_layernorm (requant.h contract 4b: the 16-bit residual stream's
// LayerNorm) on Helium: qs8_layernorm__helium's structure with
// qs16_layernorm__dsp's arithmetic. Per row:
//  1. S and Q 8 elements per step, tail-predicated (WLSTP.16 / LETP: the
//     lanes past d are off, no load leaves the row): VADDVA.S16 into S
//     (int32) and VMLALDAVA.S16 of the row with itself into Q (64 bits, in
//     r4:r5: VMLALDAVA takes an even low and an odd high register, for which
//     GCC has no operand constraint), 4 instructions per 8 elements (the
//     intrinsics' loop took 12). Exact sums, as the reference's in another
//     order.
//  2-3. The row scale: layernorm_row.h's layernorm16_scaled_var, then
//     qs8_layernorm__helium's 32-bit finish (layernorm_row_scale_helium_finish:
//     Newton steps with UDIV, inv by long division; the same integers as
//     layernorm16_row_scale, kernel_test checks the finish at its ends).
//  4. y_q = floor((c inv + 2^(s-1)) / 2^s), c = d x - S, as one form for
//     every s in [2, 53]: c' = c 2^L with L = max(0, 33 - s), by VMLAS of x
//     with d 2^L and -S 2^L (wrapping int32 arithmetic; the true c' fits, so
//     the result is c'), then VMULH by inv and VRSHL by -(s + L - 32) (a
//     rounding shift right by R = s + L - 32 >= 1): nested floors,
//     floor((floor(c inv 2^L / 2^32) + 2^(R-1)) / 2^R) = floor((c inv 2^L +
//     2^(s+L-1)) / 2^(s+L)), which is step 4's. Why c' fits: for s >= 33,
//     L = 0 and |c| < 2^30; for s <= 32, |c inv 2^-s| <= 2^14 (1 + 2^-20)
//     (Samuelson's inequality with f, contract 4b's |y_q| <= 2^14, up to
//     inv's own rounding), inv >= 2^29, so |c 2^(33-s)| <= 2^18 + 2^-2.
//     For the same reason the clamp to +-32767 never binds and is left out
//     (as in qs8_layernorm__helium).
//  5. acc = y_q g + b (VMUL, VADD; int32 as the reference); the int8 output
//     by requant_cm.h's vector form (VMULH by M, VRSHL by shift + 1 = -(n -
//     32): n = 31 - shift >= 33, the same nested floors), VQMOVNB.S32,
//     VQADD.S16 zp, VQMOVNB.S16 (sat8(sat16(y) + zp) = requantize_s8's
//     sat8(clamp(y, +-512) + zp) for an int8 zp), VSTRB.32; the int16 one
//     by the same requantization with (M16, shift16), VQMOVNB.S32 (sat16)
//     and VSTRH.32. A loop per output set (int8, int16, both), 4 elements
//     per step, tail-predicated (WLSTP.32 / LETP). Each step reads its 4
//     inputs before it stores their outputs, and S and Q are complete
//     before the first store, so y16 may be x (in place, post-norm blocks).
// gain / bias not aligned to their element size (MVE loads would fault),
// an output's shift above -2 (n <= 32: a multiplier of 1/2 or more, which
// the converter's output scales do not give), or an int8 zero point
// outside int8 take the reference.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstdint>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {

// Step 4 and acc (step 5) of 4 elements into q0 (q1 scratch).
#define EA_LN16_ACC                            \
  "wlstp.32 lr, %[n], 2f\n"                    \
  "1:\n"                                       \
  "vldrh.s32 q0, [%[x]], #8\n"                 \
  "vldrh.s32 q1, [%[g]], #8\n"                 \
  "vmlas.s32 q0, %q[dl], %[nsl]\n"             \
  "vmulh.s32 q0, q0, %q[inv]\n"                \
  "vrshl.s32 q0, %[rs]\n"                      \
  "vmul.i32 q0, q0, q1\n"                      \
  "vldrw.u32 q1, [%[b]], #16\n"                \
  "vadd.i32 q0, q0, q1\n"
// The int8 output of q0 (q1).
#define EA_LN16_OUT8                           \
  "vmulh.s32 q1, q0, %q[m8]\n"                 \
  "vrshl.s32 q1, %[rq8]\n"                     \
  "vqmovnb.s32 q1, q1\n"                       \
  "vqadd.s16 q1, q1, %[zp]\n"                  \
  "vqmovnb.s16 q1, q1\n"                       \
  "vstrb.32 q1, [%[y8]], #4\n"
// The int16 output of q0.
#define EA_LN16_OUT16                          \
  "vmulh.s32 q0, q0, %q[m16]\n"                \
  "vrshl.s32 q0, %[rq16]\n"                    \
  "vqmovnb.s32 q0, q0\n"                       \
  "vstrh.32 q0, [%[y16]], #8\n"
#define EA_LN16_END                            \
  "letp lr, 1b\n"                              \
  "2:\n"

// What one row's loop reads besides its pointers.
struct Row16 {
  int32x4_t dl, inv, m8, m16;  // d 2^L, inv, M, M16 in every lane
  int32_t nsl, rs;             // -S 2^L, -(s + L - 32)
  int32_t rq8, zp, rq16;       // shift + 1, zp, shift16 + 1
};

__attribute__((noinline)) void ln16_row(const int16_t* x, const int16_t* g, const int32_t* b, int d, const Row16& r,
                                        int8_t* y8, int16_t* y16) {
  if (y8 != nullptr && y16 != nullptr) {
    __asm__ volatile(  // reads and writes memory the operands do not name
        EA_LN16_ACC EA_LN16_OUT8 EA_LN16_OUT16 EA_LN16_END
        : [x] "+l"(x), [g] "+l"(g), [b] "+r"(b), [y8] "+l"(y8), [y16] "+l"(y16)
        : [n] "r"(d), [dl] "w"(r.dl), [nsl] "r"(r.nsl), [inv] "w"(r.inv), [rs] "r"(r.rs), [m8] "w"(r.m8),
          [rq8] "r"(r.rq8), [zp] "r"(r.zp), [m16] "w"(r.m16), [rq16] "r"(r.rq16)
        : "q0", "q1", "lr", "memory");
  } else if (y8 != nullptr) {
    __asm__ volatile(  // reads and writes memory the operands do not name
        EA_LN16_ACC EA_LN16_OUT8 EA_LN16_END
        : [x] "+l"(x), [g] "+l"(g), [b] "+r"(b), [y8] "+l"(y8)
        : [n] "r"(d), [dl] "w"(r.dl), [nsl] "r"(r.nsl), [inv] "w"(r.inv), [rs] "r"(r.rs), [m8] "w"(r.m8),
          [rq8] "r"(r.rq8), [zp] "r"(r.zp)
        : "q0", "q1", "lr", "memory");
  } else {
    __asm__ volatile(  // reads and writes memory the operands do not name
        EA_LN16_ACC EA_LN16_OUT16 EA_LN16_END
        : [x] "+l"(x), [g] "+l"(g), [b] "+r"(b), [y16] "+l"(y16)
        : [n] "r"(d), [dl] "w"(r.dl), [nsl] "r"(r.nsl), [inv] "w"(r.inv), [rs] "r"(r.rs), [m16] "w"(r.m16),
          [rq16] "r"(r.rq16)
        : "q0", "q1", "lr", "memory");
  }
}
#undef EA_LN16_ACC
#undef EA_LN16_OUT8
#undef EA_LN16_OUT16
#undef EA_LN16_END

}  // namespace

void qs16_layernorm__helium(const QS16LayerNormArgs& a) {
  const bool y8 = a.y8 != nullptr, y16 = a.y16 != nullptr;
  if ((reinterpret_cast<uintptr_t>(a.gain) & 1) != 0 || (reinterpret_cast<uintptr_t>(a.bias) & 3) != 0 ||
      (y8 && (a.shift > -2 || a.y_zp < -128 || a.y_zp > 127)) || (y16 && a.shift16 > -2)) {
    qs16_layernorm__ref(a);
    return;
  }
  const int d = a.dim;
  const int shift_base = 60 - layernorm16_var_shift(d) - layernorm_frac_bits(d);
  Row16 r;
  r.m8 = vdupq_n_s32(a.mult);
  r.m16 = vdupq_n_s32(a.mult16);
  r.rq8 = a.shift + 1;
  r.zp = a.y_zp;
  r.rq16 = a.shift16 + 1;
  for (int row = 0; row < a.rows; ++row) {
    const int16_t* x = a.x + static_cast<ptrdiff_t>(row) * a.x_stride;
    const int16_t* xs = x;
    int32_t sum = 0;
    register int32_t lo asm("r4") = 0;  // VMLALDAVA: RdaLo even, RdaHi odd
    register int32_t hi asm("r5") = 0;
    __asm__(
        "wlstp.16 lr, %[n], 2f\n"
        "1:\n"
        "vldrh.u16 q0, [%[x]], #16\n"
        "vaddva.s16 %[s], q0\n"
        "vmlaldava.s16 %[lo], %[hi], q0, q0\n"
        "letp lr, 1b\n"
        "2:\n"
        : [x] "+r"(xs), [s] "+Te"(sum), [lo] "+r"(lo), [hi] "+r"(hi)
        : [n] "r"(d)
        : "q0", "lr", "memory");  // reads memory the operands do not name
    const int64_t sum_sq = static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32) |
                                                static_cast<uint32_t>(lo));
    const LayerNormScaledVar v = layernorm16_scaled_var(d, sum, sum_sq, a.eps_term);
    const LayerNormRowScale rs = layernorm_row_scale_helium_finish(v.x, shift_base - v.k);
    const int left = rs.shift <= 32 ? 33 - rs.shift : 0;
    r.dl = vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(d) << left));
    r.nsl = static_cast<int32_t>(0u - (static_cast<uint32_t>(sum) << left));
    r.inv = vdupq_n_s32(rs.inv);
    r.rs = 32 - rs.shift - left;
    ln16_row(x, a.gain, a.bias, d, r, y8 ? a.y8 + static_cast<ptrdiff_t>(row) * a.y8_stride : nullptr,
             y16 ? a.y16 + static_cast<ptrdiff_t>(row) * a.y16_stride : nullptr);
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
