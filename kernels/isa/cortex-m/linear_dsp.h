// qs8_linear with the Armv7E-M DSP extension on packed K4N16 weights
// (packed_weights.h). In a 64-byte group, channel n's 4 inputs are one 32-bit
// word at (n % 16) * 4, so a word of weights and a word of the activation row
// line up byte for byte: SXTB16 sign-extends bytes 0,2 (and, with a rotate by
// 8, bytes 1,3) into two halfwords, and SMLAD adds both 16x16 products to the
// channel's accumulator. A pass computes two rows x two channels: each
// extended weight word serves two rows, and the two rows' activations are
// sign-extended once (extend_rows, into a stack buffer) for all the channel
// pairs of a 16-channel block, so the group loop loads them extended: 16
// instructions per 16 multiply-accumulates (extending them in every pass
// took 21; one row x four channels 27). The sum is the reference's exact
// int32 dot product (|acc| < 2^31, see ref/linear.cc) in another order, so
// the result is bit-identical; summing it in chunks of inputs (below) only
// changes the order again.
//
// qs8_linear_res (contract 5b) is the same kernel with another epilogue
// (linear_dsp's Epi below): its passes take the same loop's sums, and each output
// requant_cm.h's residual forms.
//
// A partial last group of inputs is copied into a zeroed word before it is
// extended, so no load reads a row past in_features and the padding weights
// it meets are multiplied by zero. A pass computes 2 channels even past
// out_features (their weights are padding inside the block) but stores only
// real ones; an odd last row is computed twice (as both rows of a pass) and
// stored once.
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

// The group loop (operands a00..a11, x0: the extended rows, wq, w0, w1, wo0,
// wo1, xe, xo; END: the operand holding x0's end): both channels' weight
// words by one LDRD and extended once, then per row its two extended words
// by one LDRD (extend_rows' order) and four SMLAD: 15 instructions per
// group of 16 products, two groups per iteration with the loop test once
// (16 per group), entered at the second when the count is odd (16 bytes of
// x0 per group); at least one group.
#define EA_MAC_2X2_GROUP                            \
  "ldrd %[w0], %[w1], [%[wq]], #64\n\t"             \
  "sxtb16 %[wo0], %[w0], ror #8\n\t"                \
  "sxtb16 %[w0], %[w0]\n\t"                         \
  "sxtb16 %[wo1], %[w1], ror #8\n\t"                \
  "sxtb16 %[w1], %[w1]\n\t"                         \
  "ldrd %[xe], %[xo], [%[x0]], #8\n\t"              \
  "smlad %[a00], %[xe], %[w0], %[a00]\n\t"          \
  "smlad %[a00], %[xo], %[wo0], %[a00]\n\t"         \
  "smlad %[a01], %[xe], %[w1], %[a01]\n\t"          \
  "smlad %[a01], %[xo], %[wo1], %[a01]\n\t"         \
  "ldrd %[xe], %[xo], [%[x0]], #8\n\t"              \
  "smlad %[a10], %[xe], %[w0], %[a10]\n\t"          \
  "smlad %[a10], %[xo], %[wo0], %[a10]\n\t"         \
  "smlad %[a11], %[xe], %[w1], %[a11]\n\t"          \
  "smlad %[a11], %[xo], %[wo1], %[a11]\n\t"
#define EA_MAC_2X2_LOOP(END)                        \
  "sub %[w0], %[" END "], %[x0]\n\t"                \
  "tst %[w0], #16\n\t"                              \
  "bne 2f\n\t"                                      \
  "1:\n\t" EA_MAC_2X2_GROUP                         \
  "2:\n\t" EA_MAC_2X2_GROUP                         \
  "cmp %[x0], %[" END "]\n\t"                       \
  "bne 1b"

// Rows x0, x1 of `groups` whole groups and `rem` more inputs into xs as
// EA_MAC_2X2_LOOP reads them, per group the words {xe0, xo0, xe1, xo1} (row
// r's bytes 0,2 and 1,3 as halfword pairs; the partial group zero-padded,
// no load past the row); returns the end of what it wrote. The whole groups
// written out (10 instructions per group, GCC's loop took 14; LDR takes
// the rows' unaligned words).
__attribute__((noinline)) inline const uint32_t* extend_rows(const int8_t* x0, const int8_t* x1, int groups,
                                                             int rem, uint32_t* xs) {
  if (groups > 0) {
    const int8_t* x0_end = x0 + kPackK * groups;
    uint32_t t0, t1, u0, u1;
    __asm__ volatile(  // volatile: it writes memory the operands do not name
        "1:\n\t"
        "ldr %[t0], [%[x0]], #4\n\t"
        "ldr %[t1], [%[x1]], #4\n\t"
        "sxtb16 %[u0], %[t0], ror #8\n\t"
        "sxtb16 %[t0], %[t0]\n\t"
        "sxtb16 %[u1], %[t1], ror #8\n\t"
        "sxtb16 %[t1], %[t1]\n\t"
        "strd %[t0], %[u0], [%[xs]], #8\n\t"
        "strd %[t1], %[u1], [%[xs]], #8\n\t"
        "cmp %[x0], %[end]\n\t"
        "bne 1b"
        : [x0] "+r"(x0), [x1] "+r"(x1), [xs] "+r"(xs), [t0] "=&r"(t0), [u0] "=&r"(u0), [t1] "=&r"(t1),
          [u1] "=&r"(u1)
        : [end] "r"(x0_end)
        : "cc", "memory");
  }
  if (rem != 0) {
    uint32_t t0 = 0, t1 = 0;
    std::memcpy(&t0, x0, static_cast<size_t>(rem));
    std::memcpy(&t1, x1, static_cast<size_t>(rem));
    xs[0] = __sxtb16(t0), xs[1] = sxtb16_ror8(t0), xs[2] = __sxtb16(t1), xs[3] = sxtb16_ror8(t1);
    xs += 4;
  }
  return xs;
}

// A whole pass in one asm block for the common case (two channels, the last
// chunk of inputs, both channels' shift <= -2): EA_MAC_2X2_LOOP from the
// sums so far, then requantize_s8 of acc + bias in 32 bits for the four
// outputs (n = 31 - shift >= 33: requant_cm.h's SMMLA form, then the
// arithmetic shift by n - 32; the clamp to [-512, 512] before the zero point
// as SSAT #10, [-512, 511]: 511 + zp and 512 + zp saturate to the same int8,
// as zp >= -128), with the pass's values read from a PassCtx (LDRD) once
// the loop's registers are free (the loop and the context need all 14). In
// C around the loop, GCC -Os spent about 110 instructions per pass on
// reloads.
struct ChannelRequant {
  int32_t bias, mult, round, sh;  // round = 2^(-shift-2), sh = -shift-1
};
struct PassCtx {
  int8_t* y0;  // the outputs y0[0], y0[1], y0[dy], y0[dy + 1]; the pass
  int32_t dy;  // advances y0 by 2 dy, to the next row pair
  int32_t zp;
  ChannelRequant c0, c1;
};
static_assert(offsetof(PassCtx, y0) == 0 && offsetof(PassCtx, dy) == 4 && offsetof(PassCtx, zp) == 8 && offsetof(PassCtx, c0) == 12 &&
                  offsetof(PassCtx, c1) == 28,
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

// xp .. end: extend_rows' words; a: the sums of the earlier chunks.
__attribute__((always_inline)) inline void pass_2x2_fast(const uint32_t* xp, const uint32_t* end, const int8_t* wq,
                                                         Acc2x2 a, PassCtx* ctx) {
  int32_t a00 = a.a00, a01 = a.a01, a10 = a.a10, a11 = a.a11;
  uint32_t w0, w1, wo0, wo1, xe, xo;
  __asm__ volatile(  // volatile: its only effect is the stores
      EA_MAC_2X2_LOOP("x1") "\n\t"
      EA_REQUANT_PAIR("a00", "a10", "12")
      EA_REQUANT_PAIR("a01", "a11", "28")
      "ldrd %[x0], %[x1], [%[ctx]]\n\t"  // y0, dy
      "ldr %[wq], [%[ctx], #8]\n\t"      // zp
      "add %[w1], %[x0], %[x1]\n\t"      // y1
      "add %[a00], %[a00], %[wq]\n\t"
      "ssat %[a00], #8, %[a00]\n\t"
      "strb %[a00], [%[x0]]\n\t"
      "add %[a01], %[a01], %[wq]\n\t"
      "ssat %[a01], #8, %[a01]\n\t"
      "strb %[a01], [%[x0], #1]\n\t"
      "add %[a10], %[a10], %[wq]\n\t"
      "ssat %[a10], #8, %[a10]\n\t"
      "strb %[a10], [%[w1]]\n\t"
      "add %[a11], %[a11], %[wq]\n\t"
      "ssat %[a11], #8, %[a11]\n\t"
      "strb %[a11], [%[w1], #1]\n\t"
      "add %[w1], %[w1], %[x1]\n\t"  // y0 + 2 dy
      "str %[w1], [%[ctx]]"
      : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x0] "+r"(xp), [x1] "+r"(end),
        [wq] "+r"(wq), [ctx] "+r"(ctx), [w0] "=&r"(w0), [w1] "=&r"(w1), [wo0] "=&r"(wo0), [wo1] "=&r"(wo1),
        [xe] "=&r"(xe), [xo] "=&r"(xo)
      :
      : "cc", "memory");
}
#undef EA_REQUANT_PAIR

// The other passes: the same loop, its four sums out (a: the earlier
// chunks' sums).
__attribute__((always_inline)) inline Acc2x2 pass_2x2_sums(const uint32_t* xp, const uint32_t* end, const int8_t* wq,
                                                           Acc2x2 a) {
  int32_t a00 = a.a00, a01 = a.a01, a10 = a.a10, a11 = a.a11;
  uint32_t w0, w1, wo0, wo1, xe, xo;
  __asm__ volatile(  // volatile: it reads memory the operands do not name
      EA_MAC_2X2_LOOP("end")
      : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x0] "+r"(xp), [wq] "+r"(wq),
        [w0] "=&r"(w0), [w1] "=&r"(w1), [wo0] "=&r"(wo0), [wo1] "=&r"(wo1), [xe] "=&r"(xe), [xo] "=&r"(xo)
      : [end] "r"(end)
      : "cc", "memory");
  return Acc2x2{a00, a01, a10, a11};
}
#undef EA_MAC_2X2_LOOP
#undef EA_MAC_2X2_GROUP

// qs8_linear's epilogue: requantize_s8 with the zero point; its fast passes
// are pass_2x2_fast (both channels' shift <= -2).
struct StoreS8 {
  static constexpr bool kRequantInPass = true;  // ctx.c0, ctx.c1
  int32_t zp;
  static bool fast(const int32_t*, const int32_t* shift, int q0, int q1) { return shift[q0] <= -2 && shift[q1] <= -2; }
  __attribute__((always_inline)) void pass(const uint32_t* xp, const uint32_t* end, const int8_t* wq, Acc2x2 a,
                                           PassCtx* ctx, int, int, bool) const {
    pass_2x2_fast(xp, end, wq, a, ctx);
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
  __attribute__((always_inline)) void pass(const uint32_t* xp, const uint32_t* end, const int8_t* wq, Acc2x2 sums,
                                           PassCtx* ctx, int row, int n0, bool two) const {
    const Acc2x2 a = pass_2x2_sums(xp, end, wq, sums);
    const int q0 = per_channel ? n0 : 0, q1 = per_channel ? n0 + 1 : 0;
    const int32_t m0 = mult[q0], m1 = mult[q1], s0 = shift[q0] + 1, s1 = shift[q1] + 1;
    const int32_t b0 = bias[n0], b1 = bias[n0 + 1];
    const cm::ResidualConst t = k;  // in registers: the byte stores below may alias *this
    const int8_t* r0 = r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n0;
    const int8_t* r1 = r0 + r.res_stride;
    int8_t *y0 = ctx->y0, *y1 = y0 + ctx->dy;
    ctx->y0 = y1 + ctx->dy;  // the next row pair (as pass_2x2_fast)
    y0[0] = cm::residual_s8(cm::requantize_rmul(a.a00 + b0, m0, s0), r0[0], t);
    y0[1] = cm::residual_s8(cm::requantize_rmul(a.a01 + b1, m1, s1), r0[1], t);
    if (!two) return;
    y1[0] = cm::residual_s8(cm::requantize_rmul(a.a10 + b0, m0, s0), r1[0], t);
    y1[1] = cm::residual_s8(cm::requantize_rmul(a.a11 + b1, m1, s1), r1[1], t);
  }
};

// Blocks of 16 channels outer: each channel pair's pass context
// (requantization constants, and whether it takes the fast pass) set up once
// per block in a table. Then row pairs, and per row pair the inputs in
// chunks of kChunkInputs: the chunk of both rows extended (about 10
// instructions per group, once per block, against 4 saved per group in each
// of the block's 8 passes) and every channel pair's pass over it; the sums
// of a chunk that is not the last wait in the table (one chunk up to 256
// inputs: then none do). The last chunk's passes requantize and store: the
// fast ones in pass_2x2_fast, the rest (an odd last channel, a shift the
// fast form does not take) through Epi::one. The partial last group is in
// the buffer zero-padded, so ragged in_features stay on the fast passes.
// Stack: the 1 KiB buffer and the 8 pairs' table. Epi: the outputs'
// epilogue (StoreS8, StoreResidual).
constexpr int kChunkInputs = 256;

// One channel pair of a block: its pass context (outputs per row pair,
// requantization constants), weights and the sums of the chunks so far. The
// pass loop reads only this, so few of its values wait on the stack while
// the pass's asm holds every register.
struct PairPass {
  PassCtx ctx;
  const int8_t* wq;
  Acc2x2 sums;
  bool fast;
};

template <class Epi>
__attribute__((always_inline)) inline void linear_dsp(int rows, int out_features, int in_features, const int8_t* x,
                                                      int x_stride, const int8_t* w, const int32_t* bias,
                                                      const int32_t* mult, const int32_t* shift, int per_channel,
                                                      int32_t zp, const Epi& epi, int8_t* y, int y_stride) {
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  const ptrdiff_t xs = x_stride, ys = y_stride;
  uint32_t ext[kChunkInputs];  // 4 words per group of 2 rows x 4 inputs
  PairPass pair[kPackN / 2];   // the block's channel pairs
  int8_t scratch[2];
  for (int nb = 0; nb < out_features; nb += kPackN) {
    const int pairs = (out_features - nb < kPackN ? out_features - nb + 1 : kPackN) / 2;
    for (int p = 0; p < pairs; ++p) {
      const int n0 = nb + 2 * p;
      const int q0 = per_channel ? n0 : 0, q1 = per_channel ? n0 + 1 : 0;
      PairPass& pp = pair[p];
      pp.wq = w + (nb / kPackN) * block_bytes + p * 2 * kPackK;
      pp.ctx.zp = zp;
      pp.ctx.y0 = y + nb + 2 * p;  // advanced by the passes
      pp.ctx.dy = y_stride;
      pp.fast = n0 + 1 < out_features && Epi::fast(mult, shift, q0, q1);
      if (pp.fast && Epi::kRequantInPass) {
        pp.ctx.c0 = ChannelRequant{bias[n0], mult[q0], int32_t{1} << (-shift[q0] - 2), -shift[q0] - 1};
        pp.ctx.c1 = ChannelRequant{bias[n0 + 1], mult[q1], int32_t{1} << (-shift[q1] - 2), -shift[q1] - 1};
      }
    }
    for (int m = 0; m < rows; m += 2) {
      const bool two = rows - m >= 2;
      const int8_t* x0 = x + m * xs;
      const int8_t* x1 = two ? x0 + xs : x0;
      int8_t* y0 = y + m * ys + nb;
      if (!two) {  // the odd last row's copy to scratch
        for (int p = 0; p < pairs; ++p) pair[p].ctx.dy = static_cast<int32_t>(scratch - pair[p].ctx.y0);
      }
      for (int k0 = 0; k0 < in_features; k0 += kChunkInputs) {
        const int kc = in_features - k0 < kChunkInputs ? in_features - k0 : kChunkInputs;
        const bool last = k0 + kc == in_features;
        const uint32_t* end = extend_rows(x0 + k0, x1 + k0, kc / kPackK, kc % kPackK, ext);
        const ptrdiff_t wk = static_cast<ptrdiff_t>(k0) * kPackN;  // k0 / 4 groups of 64 bytes
        for (PairPass* pp = pair; pp != pair + pairs; ++pp) {
          const int n0 = nb + 2 * static_cast<int>(pp - pair);
          Acc2x2 sums{0, 0, 0, 0};  // (zeroing the table per row pair: a memset call per pair at -Os)
          if (k0 != 0) sums = pp->sums;
          if (last && pp->fast) {
            epi.pass(ext, end, pp->wq + wk, sums, &pp->ctx, m, n0, two);
            continue;
          }
          const Acc2x2 a = pass_2x2_sums(ext, end, pp->wq + wk, sums);  // rows 0, 1 x channels n0, n0 + 1
          if (!last) {
            pp->sums = a;
            continue;
          }
          const int32_t acc[4] = {a.a00, a.a01, a.a10, a.a11};
          const int cnt = n0 + 1 < out_features ? 2 : 1;
          for (int r = 0; r < (two ? 2 : 1); ++r) {
            for (int c = 0; c < cnt; ++c) {
              const int q = per_channel ? n0 + c : 0;
              y0[r * ys + (n0 - nb) + c] =
                  epi.one(acc[2 * r + c] + bias[n0 + c], mult[q], shift[q], m + r, n0 + c);
            }
          }
        }
      }
    }
  }
}

}  // namespace cm_linear_dsp

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_DSP_H_
