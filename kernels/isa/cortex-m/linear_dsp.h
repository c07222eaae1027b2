// qs8_linear with the Armv7E-M DSP extension on packed K4N16 weights
// (packed_weights.h): three rows x one 16-channel block per pass. The pass's
// 3 x 16 int32 sums live in a 192-byte tile on the stack, and the assembly
// loop of linear_dsp_tile.cc adds each group of 4 inputs to it: the rows'
// words sign-extended once per group (SXTB16, SXTB16 ROR 8), then per
// channel its weight word extended once and six SMLAD between one LDM and
// one STM of its three sums (10.5 instructions per 12 multiply-adds; the
// earlier 2 x 2 register pass took 21 per 16). Layers of 7 rows or more
// first widen each block's weights into a stack buffer once, and their
// passes then skip the weight extension (9 per 12; see kWideMinRows). The
// sums are the reference's exact int32 dot products in another order, so
// the results are bit-identical.
//
// qs8_linear_res (contract 5b) and qs8_linear_res16 (contract 5c) are the
// same passes with other epilogues (StoreResidual, StoreRes16 below), all
// three through one driver (linear_dsp_blocks).
//
// A partial last group of inputs is copied into zeroed words (the rows'
// three words side by side), so no load reads a row past in_features and
// the padding weights it meets are multiplied by zero. A pass computes all
// 16 channels of a block (the layout pads them) and stores only the real
// ones. Rows go in threes; a last one or two rows take the last three rows
// (the earlier ones computed again, not stored), and fewer than three rows
// in all take one pass: two rows as rows 0, 1, 1, a single row (decoding)
// ea_cm_linear_row_1x16's 1 x 4 register passes (23 instructions per 16
// multiply-adds) into row 0 of the tile.
//
// Header-only, included by the three variants; the functions they share have
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

extern "C" void ea_cm_linear_tile_3x16(int32_t* tile, const int8_t* x, int xs, const int8_t* wq, int groups,
                                       int zero, int xs2);
extern "C" void ea_cm_linear_tile_3x16_wide(int32_t* tile, const int8_t* x, int xs, const uint32_t* wide, int groups,
                                            int zero, int xs2);
extern "C" void ea_cm_linear_row_1x16(int32_t* tile, const int8_t* x, const int8_t* wq, int groups);
struct StoreArgs3x16 {
  const int32_t *bias, *mult, *shift;  // at the block's first channel
  int32_t zp, nc;
};
static_assert(sizeof(StoreArgs3x16) == 20, "linear_dsp_tile.cc reads StoreArgs3x16 at these offsets");
extern "C" void ea_cm_linear_store_3x16(const int32_t* tile, int8_t* y, int ys, const StoreArgs3x16* args);
struct StoreResArgs3x16 {
  const int32_t* bias;            // 0: at the block's first channel
  int32_t mult_off, shift_off;    // 4, 8: mult - bias, shift - bias in bytes
  const int8_t* res;              // 12: the pass's first row, first channel
  int32_t res_stride, a, c, n, nc;  // 16 .. 32: A, C, n of the term
};
static_assert(sizeof(StoreResArgs3x16) == 36, "linear_dsp_tile.cc reads StoreResArgs3x16 at these offsets");
extern "C" void ea_cm_linear_store_res_3x16(const int32_t* tile, int8_t* y, int ys, const StoreResArgs3x16* args);
struct StoreRes16Args3x16 {
  const int32_t* bias;            // 0: at the block's first channel
  int32_t mult_off, shift_off;    // 4, 8: mult - bias, shift - bias in bytes
  const int16_t* res;             // 12: the pass's first row, first channel
  int32_t res_stride, a, round, n, nc;  // 16 .. 32: stride in bytes, A, 2^(n-1), n of contract 5c
};
static_assert(sizeof(StoreRes16Args3x16) == 36, "linear_dsp_tile.cc reads StoreRes16Args3x16 at these offsets");
extern "C" void ea_cm_linear_store_res16_3x16(const int32_t* tile, int16_t* y, int ys_bytes,
                                              const StoreRes16Args3x16* args);

// qs8_linear's epilogue: requantize_s8 with the zero point. For shift <= -2
// (n = 31 - shift >= 33) requant_cm.h's SMMLA form inline: the high word of
// (acc + bias) M + 2^(n-1), then the arithmetic shift by n - 32 and
// to_s8; other shifts call cm::requantize_s8.
struct StoreS8 {
  // A single row's pass may store through the 3-row store with ys = 0 (it
  // reads nothing but the tile).
  static constexpr bool kOneRowPass = true;
  int32_t zp;
  // A block's channels all in ea_cm_linear_store_3x16's form (per channel,
  // every shift in [-23, -2]).
  bool block_fast(const int32_t* shift, int per_channel, int n0, int nc) const {
    if (!per_channel) return false;
    for (int c = 0; c < nc; ++c) {
      if (shift[n0 + c] > -2 || shift[n0 + c] < -23) return false;
    }
    return true;
  }
  // A whole pass of three rows (block_fast).
  void pass(const int32_t* tile, const int32_t* bias, const int32_t* mult, const int32_t* shift, int n0, int nc,
            int, int8_t* y, int ys) const {
    const StoreArgs3x16 a{bias + n0, mult + n0, shift + n0, zp, nc};
    ea_cm_linear_store_3x16(tile, y, ys, &a);
  }
  // Channel n's sums acc[r0 .. r1) (rows row + r, output y + r ys).
  __attribute__((always_inline)) void channel(const int32_t* acc, int r0, int r1, int32_t b, int32_t m, int32_t s,
                                              int, int, int8_t* y, ptrdiff_t ys) const {
    if (s <= -2) {
      const int32_t round = int32_t{1} << (-s - 2), sh = -s - 1;
      for (int r = r0; r < r1; ++r) {
        int32_t v;
        __asm__("smmla %0, %1, %2, %3" : "=r"(v) : "r"(acc[r] + b), "r"(m), "r"(round));
        y[r * ys] = cm::to_s8(v >> sh, zp);
      }
      return;
    }
    for (int r = r0; r < r1; ++r) y[r * ys] = cm::requantize_s8(acc[r] + b, m, s, zp);
  }
};

// Channels n0 .. n0 + nc - 1 all in requant_cm.h's residual_rmul_form (per
// channel): the residual epilogues' whole passes go to their assembly stores.
inline bool all_residual_rmul_form(const int32_t* mult, const int32_t* shift, int per_channel, int n0, int nc) {
  if (!per_channel) return false;
  for (int c = 0; c < nc; ++c) {
    if (!cm::residual_rmul_form(mult[n0 + c], shift[n0 + c])) return false;
  }
  return true;
}

// qs8_linear_res's epilogue (requant.h residual_epilogue_s8): channels in
// requant_cm.h's residual_rmul_form (the residual's usual shifts >= -1)
// requantize_rmul per output, the others requantize_residual_s8.
struct StoreResidual {
  // Not for a single row: y may be the residual itself (in place), which
  // the 3-row store would read after writing the same byte.
  static constexpr bool kOneRowPass = false;
  const QS8Residual& r;
  cm::ResidualConst k;  // A, C, n
  // A block's channels all in requant_cm.h's residual_rmul_form (per
  // channel; mult is read through shift's index as well).
  const int32_t* mult_;
  bool block_fast(const int32_t* shift, int per_channel, int n0, int nc) const {
    return all_residual_rmul_form(mult_, shift, per_channel, n0, nc);
  }
  // A whole pass of three rows (block_fast).
  void pass(const int32_t* tile, const int32_t* bias, const int32_t* mult, const int32_t* shift, int n0, int nc,
            int row, int8_t* y, int ys) const {
    const int32_t* b = bias + n0;
    const StoreResArgs3x16 a{b,
                             static_cast<int32_t>(reinterpret_cast<uintptr_t>(mult + n0) -
                                                  reinterpret_cast<uintptr_t>(b)),
                             static_cast<int32_t>(reinterpret_cast<uintptr_t>(shift + n0) -
                                                  reinterpret_cast<uintptr_t>(b)),
                             r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n0,
                             r.res_stride,
                             k.mult,
                             k.offset,
                             k.shift,
                             nc};
    ea_cm_linear_store_res_3x16(tile, y, ys, &a);
  }
  __attribute__((always_inline)) void channel(const int32_t* acc, int r0, int r1, int32_t b, int32_t m, int32_t s,
                                              int row, int n, int8_t* y, ptrdiff_t ys) const {
    const cm::ResidualConst t = k;  // in registers: the byte stores below may alias *this
    const int8_t* res = r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n;
    const ptrdiff_t rs = r.res_stride;
    if (cm::residual_rmul_form(m, s)) {
      for (int i = r0; i < r1; ++i) {
        y[i * ys] = cm::residual_s8(cm::requantize_rmul(acc[i] + b, m, s + 1), res[i * rs], t);
      }
      return;
    }
    for (int i = r0; i < r1; ++i) y[i * ys] = cm::requantize_residual_s8(acc[i] + b, m, s, res[i * rs], t);
  }
};

// qs8_linear_res16's epilogue (requant.h contract 5c: residual_epilogue_s16,
// int16 residual and output, zero point 0): a whole pass whose channels are
// all in residual_rmul_form (the converter's usual) by
// ea_cm_linear_store_res16_3x16 (assembly, linear_dsp_tile.cc); the other
// passes per output in C: requant_cm.h's
// 32-bit requantize, the clamp to +-2^29 as SSAT #30 ([-2^29, 2^29 - 1]: a
// term of 2^29 - 1 saturates like one of 2^29, 2^29 - 1 - 2^28 + 2^(n-1) >
// 32767 2^n for n <= 13, and SSAT #30 keeps -2^29), A a + 2^(n-1) by one
// MLA, the shift by n and SSAT #16.
struct StoreRes16 {
  static constexpr bool kOneRowPass = false;  // y may be the residual (in place)
  const QS16Residual& r;
  const int32_t* mult_;
  // A block's channels all in requant_cm.h's residual_rmul_form (per
  // channel): a whole pass by ea_cm_linear_store_res16_3x16.
  bool block_fast(const int32_t* shift, int per_channel, int n0, int nc) const {
    return all_residual_rmul_form(mult_, shift, per_channel, n0, nc);
  }
  void pass(const int32_t* tile, const int32_t* bias, const int32_t* mult, const int32_t* shift, int n0, int nc,
            int row, int16_t* y, int ys) const {
    const int32_t* b = bias + n0;
    const StoreRes16Args3x16 a{b,
                               static_cast<int32_t>(reinterpret_cast<uintptr_t>(mult + n0) -
                                                    reinterpret_cast<uintptr_t>(b)),
                               static_cast<int32_t>(reinterpret_cast<uintptr_t>(shift + n0) -
                                                    reinterpret_cast<uintptr_t>(b)),
                               r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n0,
                               r.res_stride * 2,
                               r.term.mult,
                               int32_t{1} << (r.term.shift - 1),
                               r.term.shift,
                               nc};
    ea_cm_linear_store_res16_3x16(tile, y, ys * 2, &a);
  }
  __attribute__((always_inline)) void channel(const int32_t* acc, int r0, int r1, int32_t b, int32_t m, int32_t s,
                                              int row, int n, int16_t* y, ptrdiff_t ys) const {
    const int32_t A = r.term.mult, sh = r.term.shift, round = int32_t{1} << (sh - 1);
    const int16_t* res = r.res + static_cast<ptrdiff_t>(row) * r.res_stride + n;
    const ptrdiff_t rs = r.res_stride;
    for (int i = r0; i < r1; ++i) {
      const int32_t t = __ssat(cm::requantize(acc[i] + b, m, s), 30);
      y[i * ys] = static_cast<int16_t>(__ssat((t + A * res[i * rs] + round) >> sh, 16));
    }
  }
};

// A block's weights sign-extended once for all its passes: per group of 4
// inputs and channel the two words the int8 loop makes of its weight word,
// SXTB16 (inputs 0, 2) and SXTB16 ROR 8 (inputs 1, 3), 128 bytes per group
// (ea_cm_linear_widen). They go to a stack buffer of at most
// EA_CM_DSP_WIDE_BYTES (a firmware may lower it to save stack; below 128,
// one group, turns widening off), so blocks of up to that many / 128
// groups (in_features <= 259 at the default 8 KiB) take
// ea_cm_linear_tile_3x16_wide's 9 instructions per 12 multiply-adds instead
// of 10.5; longer rows keep the int8 loop. Widening a group costs
// about two passes' saving, so only layers of three passes (kWideMinRows)
// or more widen (linear_cost at 6 and 7 rows: 85,200 vs 84,680 and 126,640
// vs 130,920 instructions, widened vs not).
#ifndef EA_CM_DSP_WIDE_BYTES
#define EA_CM_DSP_WIDE_BYTES 8192
#endif
constexpr int kWideWords = EA_CM_DSP_WIDE_BYTES / 4;
constexpr int kWideMinRows = 7;
extern "C" void ea_cm_linear_widen(uint32_t* wide, const int8_t* wq, int words);

// A layer call's arguments, and one pass's place in it.
struct LinearArgs {
  int rows, out_features, in_features;
  const int8_t* x;
  int x_stride;
  const int8_t* w;
  const int32_t *bias, *mult, *shift;
  int per_channel;
  void* y;  // int8_t or int16_t, as the epilogue writes
  int y_stride;
};
struct Pass {
  int n0, nc;      // the block's first channel and its real channels
  int first;       // the pass's first row (rows first .. first + 2 in the tile)
  int r0, r1;      // the tile rows it stores
  bool fast;       // the block's channels all in the epilogue's whole-pass form
};

// The epilogue behind two function pointers, so that the one driver below
// serves qs8_linear, qs8_linear_res and qs8_linear_res16 (one copy of its
// code instead of three): one indirect call per block and per pass.
struct PassStore {
  const void* epi;
  bool (*block_fast)(const void* epi, const LinearArgs& a, int n0, int nc);
  void (*store)(const void* epi, const LinearArgs& a, const int32_t* tile, const Pass& p);
};
template <class Epi, class Out>
struct PassStoreOf {
  static bool block_fast(const void* e, const LinearArgs& a, int n0, int nc) {
    return static_cast<const Epi*>(e)->block_fast(a.shift, a.per_channel, n0, nc);
  }
  // A pass's outputs: the epilogue's whole-pass store when it can take
  // them (a single row in all through the 3-row store with ys = 0: the
  // three stores of an output go to the same element, row 0's last), else
  // channel by channel.
  static void store(const void* e, const LinearArgs& a, const int32_t* tile, const Pass& p) {
    const Epi& epi = *static_cast<const Epi*>(e);
    const ptrdiff_t ys = a.y_stride;
    Out* yp = static_cast<Out*>(a.y) + p.first * ys + p.n0;
    if (p.fast && p.r0 == 0 && (p.r1 == 3 || (a.rows == 1 && Epi::kOneRowPass))) {
      epi.pass(tile, a.bias, a.mult, a.shift, p.n0, p.nc, p.first, yp, a.rows == 1 ? 0 : a.y_stride);
      return;
    }
    for (int c = 0; c < p.nc; ++c) {
      const int q = a.per_channel ? p.n0 + c : 0;
      epi.channel(tile + 3 * c, p.r0, p.r1, a.bias[p.n0 + c], a.mult[q], a.shift[q], p.first, p.n0 + c, yp + c, ys);
    }
  }
};

// Blocks of 16 channels outer, passes of three rows inner (the block's
// weights stream through the tile loop once per pass or, given wide, 32
// words per group, are widened into it first).
__attribute__((noinline)) inline void linear_dsp_blocks(const LinearArgs& a, const PassStore& s, uint32_t* wide) {
  const int rows = a.rows, groups = a.in_features / kPackK;
  const int rem = a.in_features - groups * kPackK;
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(a.in_features));
  int32_t tile[3 * kPackN];
  for (int n0 = 0; n0 < a.out_features; n0 += kPackN) {
    const int8_t* wb = a.w + (n0 / kPackN) * block_bytes;
    Pass p;  // set member by member: GCC -Os clears a brace-initialized one with memset
    p.n0 = n0;
    p.nc = a.out_features - n0 < kPackN ? a.out_features - n0 : kPackN;
    p.fast = s.block_fast(s.epi, a, n0, p.nc);
    if (wide != nullptr) ea_cm_linear_widen(wide, wb, groups * kPackN);
    for (int m = 0; m < rows;) {
      // This pass's rows: first, first + o1, first + o2; store [r0, r1).
      // Fewer than three rows in all: two as rows 0, 1, 1, one three times.
      int o1 = a.x_stride, o2 = 2 * a.x_stride;
      p.first = m, p.r0 = 0, p.r1 = 3;
      if (rows < 3) {
        p.r1 = rows, o1 = rows == 2 ? a.x_stride : 0, o2 = o1;
      } else if (rows - m < 3) {
        p.first = rows - 3, p.r0 = 3 - (rows - m);
      }
      const int8_t* x0 = a.x + static_cast<ptrdiff_t>(p.first) * a.x_stride;
      if (groups != 0 && rows == 1) {
        ea_cm_linear_row_1x16(tile, x0, wb, groups);  // row 0 only (o1 = o2 = 0: rows 1, 2 as row 0 below)
      } else if (wide != nullptr) {
        ea_cm_linear_tile_3x16_wide(tile, x0, o1, wide, groups, 1, o2);
      } else if (groups != 0) {
        ea_cm_linear_tile_3x16(tile, x0, o1, wb, groups, 1, o2);
      } else if (rem == 0) {
        std::memset(tile, 0, sizeof tile);  // no inputs: the outputs of the bias alone
      }
      if (rem != 0) {  // the partial group, zero-padded (no load past the row)
        uint32_t part[3] = {0, 0, 0};
        const int8_t* xr = x0 + groups * kPackK;
        std::memcpy(&part[0], xr, static_cast<size_t>(rem));
        std::memcpy(&part[1], xr + o1, static_cast<size_t>(rem));
        std::memcpy(&part[2], xr + o2, static_cast<size_t>(rem));
        ea_cm_linear_tile_3x16(tile, reinterpret_cast<const int8_t*>(part), 4, wb + groups * kPackN * kPackK, 1,
                               groups == 0, 8);
      }
      s.store(s.epi, a, tile, p);
      m = p.first + p.r1;
    }
  }
}

// The widening buffer on the stack, in a frame of its own so that layers
// that do not widen (and linear_dsp_blocks' register allocation) are as
// before: 32 words per group, only as large as the layer needs; the caller
// keeps it within EA_CM_DSP_WIDE_BYTES, so the stack bound is the build's
// constant, not the model's.
__attribute__((noinline)) inline void linear_dsp_widened(const LinearArgs& a, const PassStore& s, int wide_words) {
  uint32_t* const wide = static_cast<uint32_t*>(__builtin_alloca(static_cast<size_t>(wide_words) * 4));
  linear_dsp_blocks(a, s, wide);
}

// Epi: the outputs' epilogue (StoreS8, StoreResidual, StoreRes16; Out: the
// output's element type).
template <class Epi, class Out>
__attribute__((always_inline)) inline void linear_dsp(int rows, int out_features, int in_features, const int8_t* x,
                                                      int x_stride, const int8_t* w, const int32_t* bias,
                                                      const int32_t* mult, const int32_t* shift, int per_channel,
                                                      const Epi& epi, Out* y, int y_stride) {
  const LinearArgs a{rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, y, y_stride};
  const PassStore s{&epi, &PassStoreOf<Epi, Out>::block_fast, &PassStoreOf<Epi, Out>::store};
  const int wide_words = in_features / kPackK * 2 * kPackN;
  if (rows >= kWideMinRows && wide_words != 0 && wide_words <= kWideWords) {
    linear_dsp_widened(a, s, wide_words);
  } else {
    linear_dsp_blocks(a, s, nullptr);
  }
}

}  // namespace cm_linear_dsp

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_DSP_H_
