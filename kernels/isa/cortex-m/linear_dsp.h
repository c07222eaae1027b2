// qs8_linear with the Armv7E-M DSP extension on packed K4N16 weights
// (packed_weights.h). In a 64-byte group, channel n's 4 inputs are one 32-bit
// word at (n % 16) * 4, so a word of weights and a word of the activation row
// line up byte for byte: SXTB16 sign-extends bytes 0,2 (and, with a rotate by
// 8, bytes 1,3) into two halfwords, and SMLAD adds both 16x16 products to the
// channel's accumulator. A pass computes two rows x two channels: each
// extended activation word serves two channels and each extended weight word
// two rows (21 instructions per 16 multiply-accumulates; one row x four
// channels took 27). The sum is the reference's exact int32 dot product
// (|acc| < 2^31, see ref/linear.cc) in another order, so the result is
// bit-identical.
//
// qs8_linear_res (contract 5b) is the same kernel with another epilogue
// (linear_dsp's Epi below): its passes take the same loop's sums, and each output
// requant_cm.h's residual forms.
//
// A partial last group of inputs is copied into a zeroed word, so no load
// reads a row past in_features and the padding weights it meets are
// multiplied by zero. A pass computes 2 channels even past out_features
// (their weights are padding inside the block) but stores only real ones; an
// odd last row is computed twice (as both rows of a pass) and stored once.
//
// Header-only, included by the two variants; the functions they share have
// external linkage (inline, named namespace), so the link keeps one copy.
#ifndef EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_DSP_H_
#define EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_DSP_H_

#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

namespace cm_linear_dsp {

using dsp::load4;
using dsp::sxtb16_ror8;

// Row r, channel c's accumulator of a pass.
struct Acc2x2 {
  int32_t a00, a01, a10, a11;
};

// The group loop of pass_2x2_fast (operands a00..a11, x0, x1, wq, w0, w1,
// wo0, wo1, xe, xo; END: the operand holding x0's end): both channels' weight
// words by one LDRD and extended once, then per row the activation word
// extended and four SMLAD: 21 instructions per group of 16 products.
#define EA_MAC_2X2_LOOP(END)                        \
  "1:\n\t"                                          \
  "ldrd %[w0], %[w1], [%[wq]], #64\n\t"             \
  "sxtb16 %[wo0], %[w0], ror #8\n\t"                \
  "sxtb16 %[w0], %[w0]\n\t"                         \
  "sxtb16 %[wo1], %[w1], ror #8\n\t"                \
  "sxtb16 %[w1], %[w1]\n\t"                         \
  "ldr %[xo], [%[x0]], #4\n\t"                      \
  "sxtb16 %[xe], %[xo]\n\t"                         \
  "sxtb16 %[xo], %[xo], ror #8\n\t"                 \
  "smlad %[a00], %[xe], %[w0], %[a00]\n\t"          \
  "smlad %[a00], %[xo], %[wo0], %[a00]\n\t"         \
  "smlad %[a01], %[xe], %[w1], %[a01]\n\t"          \
  "smlad %[a01], %[xo], %[wo1], %[a01]\n\t"         \
  "ldr %[xo], [%[x1]], #4\n\t"                      \
  "sxtb16 %[xe], %[xo]\n\t"                         \
  "sxtb16 %[xo], %[xo], ror #8\n\t"                 \
  "smlad %[a10], %[xe], %[w0], %[a10]\n\t"          \
  "smlad %[a10], %[xo], %[wo0], %[a10]\n\t"         \
  "smlad %[a11], %[xe], %[w1], %[a11]\n\t"          \
  "smlad %[a11], %[xo], %[wo1], %[a11]\n\t"         \
  "cmp %[x0], %[" END "]\n\t"                       \
  "bne 1b"
// a += one group: the rows' words t0, t1 (a partial group zero-padded),
// channels wq, wq + 4. Out of line: the partial group's and the slow passes'
// one copy.
__attribute__((noinline)) inline void mac_tail_2x2(uint32_t t0, uint32_t t1, const int8_t* wq, Acc2x2& a) {
  const uint32_t xe0 = __sxtb16(t0), xo0 = sxtb16_ror8(t0), xe1 = __sxtb16(t1), xo1 = sxtb16_ror8(t1);
  uint32_t w = load4(wq), we = __sxtb16(w), wo = sxtb16_ror8(w);
  a.a00 = __smlad(wo, xo0, __smlad(we, xe0, a.a00));
  a.a10 = __smlad(wo, xo1, __smlad(we, xe1, a.a10));
  w = load4(wq + 4), we = __sxtb16(w), wo = sxtb16_ror8(w);
  a.a01 = __smlad(wo, xo0, __smlad(we, xe0, a.a01));
  a.a11 = __smlad(wo, xo1, __smlad(we, xe1, a.a11));
}

// A whole pass in one asm block for the common case (two channels, whole
// groups only, both channels' shift <= -2): EA_MAC_2X2_LOOP, then
// requantize_s8 of acc + bias in 32 bits for the four outputs (n = 31 -
// shift >= 33: requant_cm.h's SMMLA form, then the arithmetic shift by
// n - 32; the clamp to [-512, 512] before the zero point as SSAT #10,
// [-512, 511]: 511 + zp and 512 + zp saturate to the same int8, as
// zp >= -128), with the pass's
// values read from a PassCtx (LDRD) once the loop's registers are free
// (the loop needs all 14; the context pointer waits on the stack). In C
// around the loop, GCC -Os spent about 110 instructions per pass on reloads.
struct ChannelRequant {
  int32_t bias, mult, round, sh;  // round = 2^(-shift-2), sh = -shift-1
};
struct PassCtx {
  const int8_t* x0_end;
  int8_t *y0, *y1;  // the outputs y0[0], y0[1], y1[0], y1[1]
  int32_t zp;
  ChannelRequant c0, c1;
};
static_assert(offsetof(PassCtx, y0) == 4 && offsetof(PassCtx, zp) == 12 && offsetof(PassCtx, c0) == 16 &&
                  offsetof(PassCtx, c1) == 32,
              "the asm below reads PassCtx at these offsets");

#define EA_REQUANT_PAIR(A0, A1, OFF)                      \
  "ldrd %[x0], %[x1], [%[ctx], #" OFF "]\n\t"              \
  "ldrd %[wq], %[w0], [%[ctx], #" OFF "+8]\n\t"            \
  "add %[" A0 "], %[" A0 "], %[x0]\n\t"                    \
  "smmla %[" A0 "], %[" A0 "], %[x1], %[wq]\n\t"           \
  "asr %[" A0 "], %[" A0 "], %[w0]\n\t"                    \
  "ssat %[" A0 "], #10, %[" A0 "]\n\t"                     \
  "add %[" A1 "], %[" A1 "], %[x0]\n\t"                    \
  "smmla %[" A1 "], %[" A1 "], %[x1], %[wq]\n\t"           \
  "asr %[" A1 "], %[" A1 "], %[w0]\n\t"                    \
  "ssat %[" A1 "], #10, %[" A1 "]\n\t"

__attribute__((always_inline)) inline void pass_2x2_fast(const int8_t* x0, const int8_t* x1, const int8_t* wq,
                                                         PassCtx* ctx) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  uint32_t w0, w1, wo0, wo1, xe, xo;
  __asm__ volatile(  // volatile: its only effect is the stores
      "push {%[ctx]}\n\t"
      "ldr %[ctx], [%[ctx]]\n\t"  // x0_end
      EA_MAC_2X2_LOOP("ctx") "\n\t"
      "pop {%[ctx]}\n\t"
      EA_REQUANT_PAIR("a00", "a10", "16")
      EA_REQUANT_PAIR("a01", "a11", "32")
      "ldrd %[x0], %[x1], [%[ctx], #4]\n\t"  // y0, y1
      "ldr %[wq], [%[ctx], #12]\n\t"         // zp
      "add %[a00], %[a00], %[wq]\n\t"
      "ssat %[a00], #8, %[a00]\n\t"
      "strb %[a00], [%[x0]]\n\t"
      "add %[a01], %[a01], %[wq]\n\t"
      "ssat %[a01], #8, %[a01]\n\t"
      "strb %[a01], [%[x0], #1]\n\t"
      "add %[a10], %[a10], %[wq]\n\t"
      "ssat %[a10], #8, %[a10]\n\t"
      "strb %[a10], [%[x1]]\n\t"
      "add %[a11], %[a11], %[wq]\n\t"
      "ssat %[a11], #8, %[a11]\n\t"
      "strb %[a11], [%[x1], #1]"
      : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x0] "+r"(x0), [x1] "+r"(x1),
        [wq] "+r"(wq), [ctx] "+r"(ctx), [w0] "=&r"(w0), [w1] "=&r"(w1), [wo0] "=&r"(wo0), [wo1] "=&r"(wo1),
        [xe] "=&r"(xe), [xo] "=&r"(xo)
      :
      : "cc", "memory");
}
#undef EA_REQUANT_PAIR

// qs8_linear_res's pass: the same loop, its four sums out (the residual
// epilogue requantizes them in C; the context pointer now only gives x0_end).
__attribute__((always_inline)) inline Acc2x2 pass_2x2_sums(const int8_t* x0, const int8_t* x1, const int8_t* wq,
                                                           const int8_t* x0_end) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  uint32_t w0, w1, wo0, wo1, xe, xo;
  __asm__ volatile(  // volatile: it reads memory the operands do not name
      EA_MAC_2X2_LOOP("end")
      : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x0] "+r"(x0), [x1] "+r"(x1),
        [wq] "+r"(wq), [w0] "=&r"(w0), [w1] "=&r"(w1), [wo0] "=&r"(wo0), [wo1] "=&r"(wo1), [xe] "=&r"(xe),
        [xo] "=&r"(xo)
      : [end] "r"(x0_end)
      : "cc", "memory");
  return Acc2x2{a00, a01, a10, a11};
}
#undef EA_MAC_2X2_LOOP

// qs8_linear's epilogue: requantize_s8 with the zero point; its fast passes
// are pass_2x2_fast (both channels' shift <= -2).
struct StoreS8 {
  static constexpr bool kRequantInPass = true;  // ctx.c0, ctx.c1
  int32_t zp;
  static bool fast(const int32_t*, const int32_t* shift, int q0, int q1) { return shift[q0] <= -2 && shift[q1] <= -2; }
  __attribute__((always_inline)) void pass(const int8_t* x0, const int8_t* x1, const int8_t* wq, PassCtx* ctx, int,
                                           int, bool) const {
    pass_2x2_fast(x0, x1, wq, ctx);
  }
  // One output of the other passes: acc + bias.
  int8_t one(int32_t acc, int32_t mult, int32_t shift, int, int) const {
    return cm::requantize_s8(acc, mult, shift, zp);
  }
};

// qs8_linear_res's epilogue (requant.h residual_epilogue_s8). Its fast
// passes (both channels in requant_cm.h's residual_rmul_form, the
// residual's usual shifts >= -1) take the loop's sums and requantize_rmul
// per output; the other passes requantize_residual_s8.
struct StoreResidual {
  static constexpr bool kRequantInPass = false;
  const QS8Residual& r;
  cm::ResidualConst k;  // A, C, n
  const int32_t *bias, *mult, *shift;
  int per_channel;
  static bool fast(const int32_t* mult, const int32_t* shift, int q0, int q1) {
    return cm::residual_rmul_form(mult[q0], shift[q0]) && cm::residual_rmul_form(mult[q1], shift[q1]);
  }
  int8_t one(int32_t acc, int32_t m, int32_t s, int row, int n) const {
    return cm::requantize_residual_s8(acc, m, s, r.res[static_cast<ptrdiff_t>(row) * r.res_stride + n], k);
  }
  __attribute__((always_inline)) void pass(const int8_t* x0, const int8_t* x1, const int8_t* wq, PassCtx* ctx,
                                           int row, int n0, bool two) const {
    const Acc2x2 a = pass_2x2_sums(x0, x1, wq, ctx->x0_end);
    const int q0 = per_channel ? n0 : 0, q1 = per_channel ? n0 + 1 : 0;
    const int32_t m0 = mult[q0], m1 = mult[q1], s0 = shift[q0] + 1, s1 = shift[q1] + 1;
    const int32_t b0 = bias[n0], b1 = bias[n0 + 1];
    const cm::ResidualConst t = k;  // in registers: the byte stores below may alias *this
    const int8_t* r0 = r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n0;
    const int8_t* r1 = r0 + r.res_stride;
    int8_t *y0 = ctx->y0, *y1 = ctx->y1;
    y0[0] = cm::residual_s8(cm::requantize_rmul(a.a00 + b0, m0, s0), r0[0], t);
    y0[1] = cm::residual_s8(cm::requantize_rmul(a.a01 + b1, m1, s1), r0[1], t);
    if (!two) return;
    y1[0] = cm::residual_s8(cm::requantize_rmul(a.a10 + b0, m0, s0), r1[0], t);
    y1[1] = cm::residual_s8(cm::requantize_rmul(a.a11 + b1, m1, s1), r1[1], t);
  }
};

// Channel pairs outer, row pairs inner: a channel pair's requantization
// constants are set up once, and most passes are pass_2x2_fast (an odd last
// row computed twice, its copy stored to a scratch pair); the rest (an odd
// last channel, a partial last group of inputs, a shift above -2) take
// mac_tail_2x2 per group and requant_cm.h's requantization. Epi: the
// outputs' epilogue (StoreS8, StoreResidual).
template <class Epi>
__attribute__((always_inline)) inline void linear_dsp(int rows, int out_features, int in_features, const int8_t* x,
                                                      int x_stride, const int8_t* w, const int32_t* bias,
                                                      const int32_t* mult, const int32_t* shift, int per_channel,
                                                      int32_t zp, const Epi& epi, int8_t* y, int y_stride) {
  const int groups = in_features / kPackK;
  const int rem = in_features - groups * kPackK;
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  const ptrdiff_t xs = x_stride, ys = y_stride;
  PassCtx ctx;
  ctx.zp = zp;
  int8_t scratch[2];
  for (int n0 = 0; n0 < out_features; n0 += 2) {
    const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
    const int cnt = out_features - n0 < 2 ? 1 : 2;
    const int q0 = per_channel ? n0 : 0, q1 = per_channel ? n0 + cnt - 1 : 0;
    const bool fast = cnt == 2 && rem == 0 && Epi::fast(mult, shift, q0, q1);
    if (fast && Epi::kRequantInPass) {
      ctx.c0 = ChannelRequant{bias[n0], mult[q0], int32_t{1} << (-shift[q0] - 2), -shift[q0] - 1};
      ctx.c1 = ChannelRequant{bias[n0 + 1], mult[q1], int32_t{1} << (-shift[q1] - 2), -shift[q1] - 1};
    }
    const int8_t* x0 = x;
    int8_t* y0 = y + n0;
    for (int m = 0; m < rows; m += 2, x0 += 2 * xs, y0 += 2 * ys) {
      const bool two = rows - m >= 2;
      const int8_t* x1 = two ? x0 + xs : x0;
      if (fast) {
        ctx.x0_end = x0 + groups * kPackK;
        ctx.y0 = y0;
        ctx.y1 = two ? y0 + ys : scratch;
        epi.pass(x0, x1, wq, &ctx, m, n0, two);
        continue;
      }
      Acc2x2 a{0, 0, 0, 0};  // rows 0, 1 x channels n0, n0 + 1
      for (int g = 0; g < groups; ++g) mac_tail_2x2(load4(x0 + 4 * g), load4(x1 + 4 * g), wq + g * kPackN * kPackK, a);
      if (rem != 0) {  // the partial group, zero-padded (no load past the row)
        uint32_t t0 = 0, t1 = 0;
        std::memcpy(&t0, x0 + groups * kPackK, static_cast<size_t>(rem));
        std::memcpy(&t1, x1 + groups * kPackK, static_cast<size_t>(rem));
        mac_tail_2x2(t0, t1, wq + groups * kPackN * kPackK, a);
      }
      const int32_t acc[4] = {a.a00, a.a01, a.a10, a.a11};
      for (int r = 0; r < (two ? 2 : 1); ++r) {
        for (int c = 0; c < cnt; ++c) {
          const int q = per_channel ? n0 + c : 0;
          y0[r * ys + c] = epi.one(acc[2 * r + c] + bias[n0 + c], mult[q], shift[q], m + r, n0 + c);
        }
      }
    }
  }
}

}  // namespace cm_linear_dsp

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_DSP_H_
