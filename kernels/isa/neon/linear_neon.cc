// The building blocks of the NEON int8 linear (Armv7-A and AArch64):
// qs8_linear__neon, qs8_linear_res__neon and the neondot path's fallbacks
// call them (isa/neon/neon.h). int8 weights are in the packed
// K4N16 layout (packed_weights.h): a 64-byte group holds 16 channels x 4
// inputs as four 16-byte vectors of 4 channels x 4 inputs. Baseline NEON has
// no int8 dot product, so each such vector is multiplied (vmull_s8, int16
// products) against the row's 4 inputs repeated, and the products are added
// pairwise into int32 (vpadal): every int32 lane holds one of two partial
// sums of one channel, added once after the K loop.
//
// Two accumulations, chosen per pass of rows by the driver:
//  - widening (qs8_linear_acc__neon): smull + sadalp per 8 products, always
//    exact (each product fits int16: |w x| <= 128 * 128 = 16384).
//  - int16 pairs (qs8_linear_acc_pairs__neon): groups g and g+1 (inputs k and
//    k + 4) are multiplied into the same int16 lane (smull + smlal) before
//    one sadalp, 3 instructions per 16 products instead of 4. An int16 lane
//    then holds w[k] x[k] + w[k+4] x[k+4], which lies in [-32512, 32640]
//    unless both products are (-128) * (-128) = 16384: 32768 does not fit.
//    So it is exact unless, for some k in such a pair, x[k] = x[k+4] = -128
//    in an activation row and w[c][k] = w[c][k+4] = -128 for some channel c.
//    The driver checks the rows of each pass (cheap) and, only if one has
//    such a pair, the weights (once per call); the converter's weights lie
//    in [-127, 127], so in practice the pair kernel always runs.
// Requantization is vectorised (requantize32_x4); an epilogue makes the
// int8 outputs: the zero point (qs8_linear) or the residual (qs8_linear_res),
// both on the same accumulation loops. The accumulation is a parameter of
// the driver (qs8_linear_with__neon).
#include <cstring>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

// x[0..4) repeated in all four 32-bit lanes (unaligned 4-byte load, ld1r).
inline int8x16_t x4_rep(const int8_t* p) {
  int32_t word;
  std::memcpy(&word, p, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(word));
}

// One 16-byte weight vector (channels 4j..4j+3 x 4 inputs) against the
// repeated inputs: lo gets {c0: w0x0+w1x1, w2x2+w3x3, c1: ..., ...} for the
// first two channels, hi the same for the last two.
inline void mac4x4(int32x4_t& lo, int32x4_t& hi, int8x16_t w, int8x16_t x) {
  lo = vpadalq_s16(lo, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
#if defined(__aarch64__)
  hi = vpadalq_s16(hi, vmull_high_s8(w, x));
#else
  hi = vpadalq_s16(hi, vmull_s8(vget_high_s8(w), vget_low_s8(x)));
#endif
}

// The same vector of two consecutive groups (w0: inputs x0, w1: inputs x1),
// the two products of a lane added in int16 (see the top of the file).
inline void mac4x8(int32x4_t& lo, int32x4_t& hi, int8x16_t w0, int8x16_t w1, int8x16_t x0,
                   int8x16_t x1) {
  lo = vpadalq_s16(lo, vmlal_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(x0)), vget_low_s8(w1),
                                vget_low_s8(x1)));
#if defined(__aarch64__)
  hi = vpadalq_s16(hi, vmlal_high_s8(vmull_high_s8(w0, x0), w1, x1));
#else
  hi = vpadalq_s16(hi, vmlal_s8(vmull_s8(vget_high_s8(w0), vget_low_s8(x0)), vget_high_s8(w1),
                                vget_low_s8(x1)));
#endif
}

// {sum(a[0..2)), sum(a[2..4)), sum(b[0..2)), sum(b[2..4))}: the two partial
// sums of four channels.
inline int32x4_t pair_sums(int32x4_t a, int32x4_t b) {
#if defined(__aarch64__)
  return vpaddq_s32(a, b);
#else
  return vcombine_s32(vpadd_s32(vget_low_s32(a), vget_high_s32(a)),
                      vpadd_s32(vget_low_s32(b), vget_high_s32(b)));
#endif
}

inline bool any_min_s8(int8x8_t v) {  // some lane == -128
#if defined(__aarch64__)
  return vminv_s8(v) == -128;
#else
  v = vpmin_s8(v, v);
  v = vpmin_s8(v, v);
  v = vpmin_s8(v, v);
  return vget_lane_s8(v, 0) == -128;
#endif
}

// True if x[k] = x[k + 4] = -128 for some k < len (a multiple of 8) with
// k % 8 < 4: max(x[k], x[k + 4]) = -128 only if both are.
bool row_has_min_pair(const int8_t* x, int len) {
  int8x16_t lo = vdupq_n_s8(127);
  int i = 0;
  for (; i + 16 <= len; i += 16) {
    const int8x16_t v = vld1q_s8(x + i);
    const int8x16_t sw = vreinterpretq_s8_s32(vrev64q_s32(vreinterpretq_s32_s8(v)));
    lo = vminq_s8(lo, vmaxq_s8(v, sw));
  }
  int8x8_t m = vmin_s8(vget_low_s8(lo), vget_high_s8(lo));
  if (i < len) {
    const int8x8_t v = vld1_s8(x + i);
    m = vmin_s8(m, vmax_s8(v, vreinterpret_s8_s32(vrev64_s32(vreinterpret_s32_s8(v)))));
  }
  return any_min_s8(m);
}

// True if w = -128 at the same byte of groups 2p and 2p + 1 (p < pairs) of
// some block: the weight half of the pair condition. Padding channels are
// included (a false alarm only costs speed).
bool weights_have_min_pair(const int8_t* w, int blocks, int pairs, size_t block_bytes) {
  int8x16_t lo = vdupq_n_s8(127);
  for (int b = 0; b < blocks; ++b) {
    const int8_t* wg = w + static_cast<ptrdiff_t>(b) * static_cast<ptrdiff_t>(block_bytes);
    for (int p = 0; p < pairs; ++p, wg += 128) {
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        lo = vminq_s8(lo, vmaxq_s8(vld1q_s8(wg + 16 * j), vld1q_s8(wg + 64 + 16 * j)));
      }
    }
  }
  return any_min_s8(vmin_s8(vget_low_s8(lo), vget_high_s8(lo)));
}

// R rows x 4V channels (V weight vectors of a group, starting at wb inside
// the block's groups) into acc[r * acc_stride + 0 .. 4V). kPairs: whole
// pairs of groups with mac4x8, the rest (an odd group, the tail) with
// mac4x4. tail[4 r ..] holds row r's last, partial group (in_features % 4
// != 0) as a zero-padded word.
// (The pre-RA scheduler would hoist all products ahead of the accumulations
// and spill accumulators; keep the source order.)
template <int R, int V, bool kPairs>
__attribute__((optimize("no-schedule-insns"))) void tile_neon(int in_features, const int8_t* x,
                                                              int x_stride, const int8_t* tail,
                                                              const int8_t* wb, const int32_t* init,
                                                              int32_t* acc, int acc_stride) {
  const int groups = in_features / 4;
  int32x4_t a[R][2 * V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int j = 0; j < 2 * V; ++j) a[r][j] = vdupq_n_s32(0);
  }
  const int8_t* xp[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xp[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  const int8_t* wg = wb;
  int g = 0;
  if (kPairs) {
    for (; g + 2 <= groups; g += 2, wg += 128) {
      int8x16_t x0[R], x1[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
#if defined(__aarch64__)
        // Two post-incremented ld1r. (The empty asm keeps the loop
        // optimizer from rewriting the row pointers as one shared index,
        // which turns each ld1r into ldr + dup.)
        x0[r] = x4_rep(xp[r]);
        xp[r] += 4;
        __asm__("" : "+r"(xp[r]));
        x1[r] = x4_rep(xp[r]);
        xp[r] += 4;
        __asm__("" : "+r"(xp[r]));
#else
        // One 8-byte load, two lane broadcasts.
        const int32x2_t x8 = vreinterpret_s32_s8(vld1_s8(xp[r]));
        x0[r] = vreinterpretq_s8_s32(vdupq_lane_s32(x8, 0));
        x1[r] = vreinterpretq_s8_s32(vdupq_lane_s32(x8, 1));
        xp[r] += 8;
#endif
      }
#if defined(__aarch64__)
      // Weight vectors two at a time (adjacent: ldp).
#pragma GCC unroll 8
      for (int j = 0; j < V; j += 2) {
        const int8x16_t w0a = vld1q_s8(wg + 16 * j);
        const int8x16_t w0b = vld1q_s8(wg + 16 * j + 16);
        const int8x16_t w1a = vld1q_s8(wg + 64 + 16 * j);
        const int8x16_t w1b = vld1q_s8(wg + 64 + 16 * j + 16);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          mac4x8(a[r][2 * j], a[r][2 * j + 1], w0a, w1a, x0[r], x1[r]);
          mac4x8(a[r][2 * j + 2], a[r][2 * j + 3], w0b, w1b, x0[r], x1[r]);
        }
      }
#else
#pragma GCC unroll 8
      for (int j = 0; j < V; ++j) {
        const int8x16_t w0 = vld1q_s8(wg + 16 * j);
        const int8x16_t w1 = vld1q_s8(wg + 64 + 16 * j);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) mac4x8(a[r][2 * j], a[r][2 * j + 1], w0, w1, x0[r], x1[r]);
      }
#endif
    }
  }
  for (; g < groups; ++g, wg += 64) {
    int8x16_t wv[V];
#pragma GCC unroll 8
    for (int j = 0; j < V; ++j) wv[j] = vld1q_s8(wg + 16 * j);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const int8x16_t xv = x4_rep(xp[r]);
      xp[r] += 4;
#pragma GCC unroll 8
      for (int j = 0; j < V; ++j) mac4x4(a[r][2 * j], a[r][2 * j + 1], wv[j], xv);
    }
  }
  if (4 * groups < in_features) {
    int8x16_t wv[V];
#pragma GCC unroll 8
    for (int j = 0; j < V; ++j) wv[j] = vld1q_s8(wg + 16 * j);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const int8x16_t xv = x4_rep(tail + 4 * r);
#pragma GCC unroll 8
      for (int j = 0; j < V; ++j) mac4x4(a[r][2 * j], a[r][2 * j + 1], wv[j], xv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
#pragma GCC unroll 8
    for (int j = 0; j < V; ++j) {
      int32x4_t y = pair_sums(a[r][2 * j], a[r][2 * j + 1]);
      if (init != nullptr) y = vaddq_s32(y, vld1q_s32(init + 4 * j));
      vst1q_s32(ar + 4 * j, y);
    }
  }
}

// Register tiles: each row needs 2V int32 accumulators, the widening form V
// weight vectors and one input vector per row, the pair form 2 (Armv7) or 4
// (AArch64, ldp) weight vectors and 2 input vectors per row. AArch64 (32 q
// registers): 3 rows x 16 channels widening (24 + 4 + 3), 2 rows x 16
// channels in pairs (16 + 4 + 4 + products). Armv7 (16 q registers): 8
// channels (the block in two halves), 3 rows widening (12 + 2 + 3 d), 2 rows
// in pairs (8 + 2 + 4 + products).
template <bool kPairs>
struct Tile {
#if defined(__aarch64__)
  static constexpr int kRows = kPairs ? 2 : 3;
  static constexpr int kVecs = 4;
#else
  static constexpr int kRows = kPairs ? 2 : 3;
  static constexpr int kVecs = 2;
#endif
};

template <int R, bool kPairs>
void rows_neon(int in_features, const int8_t* x, int x_stride, const int8_t* tail,
               const int8_t* wb, const int32_t* init, int32_t* acc, int acc_stride) {
  constexpr int V = Tile<kPairs>::kVecs;
#pragma GCC unroll 4
  for (int h = 0; h < 4 / V; ++h) {
    tile_neon<R, V, kPairs>(in_features, x, x_stride, tail, wb + 16 * V * h,
                            init != nullptr ? init + 4 * V * h : nullptr, acc + 4 * V * h,
                            acc_stride);
  }
}

template <bool kPairs>
void linear_acc(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                const int8_t* w, const int32_t* init, int32_t* acc, int acc_stride) {
  constexpr int kRows = Tile<kPairs>::kRows;
  const size_t block_bytes = packed_block_bytes(in_features);
  // Each row's partial last group, zero padded (no load past in_features).
  const int k4 = in_features & ~3;
  int8_t tail[4 * kLinearAccMaxRows] = {};
  if (k4 < in_features) {
    for (int r = 0; r < rows; ++r) {
      std::memcpy(tail + 4 * r, x + static_cast<ptrdiff_t>(r) * x_stride + k4,
                  static_cast<size_t>(in_features - k4));
    }
  }
  for (int b = 0; b < blocks; ++b) {
    const int8_t* wb = w + static_cast<ptrdiff_t>(b) * static_cast<ptrdiff_t>(block_bytes);
    int32_t* ab = acc + 16 * b;
    const int32_t* ib = init != nullptr ? init + 16 * b : nullptr;
    int r = 0;
    for (; r + kRows <= rows; r += kRows) {
      rows_neon<kRows, kPairs>(in_features, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride,
                               tail + 4 * r, wb, ib, ab + static_cast<ptrdiff_t>(r) * acc_stride,
                               acc_stride);
    }
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int32_t* ar = ab + static_cast<ptrdiff_t>(r) * acc_stride;
    switch (rows - r) {
      case 2:
        rows_neon<2, kPairs>(in_features, xr, x_stride, tail + 4 * r, wb, ib, ar, acc_stride);
        break;
      case 1:
        rows_neon<1, kPairs>(in_features, xr, x_stride, tail + 4 * r, wb, ib, ar, acc_stride);
        break;
      default: break;
    }
  }
}

}  // namespace

bool qs8_row_has_min_pair__neon(const int8_t* x, int len) { return row_has_min_pair(x, len); }

bool qs8_weights_have_min_pair__neon(const int8_t* w, int blocks, int in_features) {
  return weights_have_min_pair(w, blocks, in_features / 8, packed_block_bytes(in_features));
}

void qs8_linear_acc__neon(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, int32_t* acc, int acc_stride) {
  linear_acc<false>(rows, blocks, in_features, x, x_stride, w, nullptr, acc, acc_stride);
}

void qs8_linear_acc_pairs__neon(int rows, int blocks, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, int32_t* acc, int acc_stride) {
  linear_acc<true>(rows, blocks, in_features, x, x_stride, w, nullptr, acc, acc_stride);
}

void qs8_linear_acc_init__neon(int rows, int blocks, int in_features, const int8_t* x,
                               int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                               int acc_stride) {
  linear_acc<false>(rows, blocks, in_features, x, x_stride, w, init, acc, acc_stride);
}

void qs8_linear_acc_pairs_init__neon(int rows, int blocks, int in_features, const int8_t* x,
                                     int x_stride, const int8_t* w, const int32_t* init,
                                     int32_t* acc, int acc_stride) {
  linear_acc<true>(rows, blocks, in_features, x, x_stride, w, init, acc, acc_stride);
}

namespace {

// The two epilogues of the driver below, per output row t and channel n:
// store8 gets channels n..n+7 requantized (requantize32_x4), store1 one
// tail channel's sum with its (M, s).
//
// qs8_linear: + zp, saturated to int8.
struct EpilogueS8 {
  int16x8_t zp;
  int32_t y_zp;
  int8_t* y;
  int y_stride;
  __attribute__((always_inline)) void store8(int t, int n, int32x4_t y0, int32x4_t y1) const {
    vst1_s8(y + static_cast<ptrdiff_t>(t) * y_stride + n, add_zp_sat8(y0, y1, zp));
  }
  __attribute__((always_inline)) void store1(int t, int n, int32_t acc, int32_t m, int32_t s) const {
    y[static_cast<ptrdiff_t>(t) * y_stride + n] = requantize_s8(acc, m, s, y_zp);
  }
};

// qs8_linear_res (requant.h, residual_epilogue_s8): sat8((y + A a + C) >> n)
// without the contract's +-2^29 clamp of y, which changes no result here: a
// lane it would clamp has |y| >= 2^29 both in requantize() and in
// requantize32_x4 (neon_common.h), with the same sign, and |A a + C| <
// 2^28 + 2^24 (the contract's bound) leaves a sum beyond +-(2^28 - 2^24),
// which saturates alike for every n <= 16; |y| <= 2^30 keeps the sum in int32.
struct EpilogueRes {
  int32x4_t mult, offset, neg_shift;  // A, C, -n in every lane
  const int8_t* res;
  int res_stride;
  ResidualTerm term;
  int32_t c;  // C
  int8_t* y;
  int y_stride;
  __attribute__((always_inline)) static int32x4_t add(int32x4_t y, int16x4_t a, int32x4_t mult,
                                                      int32x4_t offset, int32x4_t neg_shift) {
    return vshlq_s32(vmlaq_s32(vaddq_s32(y, offset), vmovl_s16(a), mult), neg_shift);
  }
  __attribute__((always_inline)) void store8(int t, int n, int32x4_t y0, int32x4_t y1) const {
    const int16x8_t a = vmovl_s8(vld1_s8(res + static_cast<ptrdiff_t>(t) * res_stride + n));
    const int32x4_t s0 = add(y0, vget_low_s16(a), mult, offset, neg_shift);
    const int32x4_t s1 = add(y1, vget_high_s16(a), mult, offset, neg_shift);
    vst1_s8(y + static_cast<ptrdiff_t>(t) * y_stride + n,
            vqmovn_s16(vcombine_s16(vqmovn_s32(s0), vqmovn_s32(s1))));
  }
  __attribute__((always_inline)) void store1(int t, int n, int32_t acc, int32_t m, int32_t s) const {
    const int32_t a = res[static_cast<ptrdiff_t>(t) * res_stride + n];
    y[static_cast<ptrdiff_t>(t) * y_stride + n] = residual_epilogue_s8(acc, m, s, a, term, c);
  }
};

// qs8_linear_res16 (requant.h contract 5c, residual_epilogue_s16):
// sat16((clamp(y, -2^29, 2^29) + A a + 2^(n-1)) >> n), int16 residual and
// output. The clamp is needed here (unlike EpilogueRes below, whose residual
// term is smaller) and makes requantize32_x4's saturated lanes exact: they
// hold a value in [2^29, 2^30] where requantize() is at least 2^29, of the
// same sign, and both clamp to the same +-2^29. A a + 2^(n-1) is one
// VMLAL.S16 (A and a both int16) onto the clamped y plus the rounding
// constant; the sum fits int32 (requant.h), the shift is VSHL by -n
// (arithmetic), VQMOVN.S32 is sat16.
struct EpilogueRes16 {
  int32x4_t rnd, neg_shift, lo, hi;  // 2^(n-1), -n, -2^29, 2^29 in every lane
  int16x4_t mult;                    // A
  const int16_t* res;
  int res_stride;
  Residual16Term term;
  int16_t* y;
  int y_stride;
  __attribute__((always_inline)) int32x4_t add(int32x4_t v, int16x4_t a) const {
    const int32x4_t c = vaddq_s32(vmaxq_s32(vminq_s32(v, hi), lo), rnd);
    return vshlq_s32(vmlal_s16(c, a, mult), neg_shift);
  }
  __attribute__((always_inline)) void store8(int t, int n, int32x4_t y0, int32x4_t y1) const {
    const int16x8_t a = vld1q_s16(res + static_cast<ptrdiff_t>(t) * res_stride + n);
    const int32x4_t s0 = add(y0, vget_low_s16(a));
    const int32x4_t s1 = add(y1, vget_high_s16(a));
    vst1q_s16(y + static_cast<ptrdiff_t>(t) * y_stride + n, vcombine_s16(vqmovn_s32(s0), vqmovn_s32(s1)));
  }
  __attribute__((always_inline)) void store1(int t, int n, int32_t acc, int32_t m, int32_t s) const {
    const int32_t a = res[static_cast<ptrdiff_t>(t) * res_stride + n];
    y[static_cast<ptrdiff_t>(t) * y_stride + n] = residual_epilogue_s16(acc, m, s, a, term);
  }
};

// Rows in passes of kLinearAccMaxRows, channels in chunks of 64 (4 packed
// blocks): the accumulation fills a rows x 64 int32 tile (whole blocks:
// channels past out_features are computed from the padding and never
// stored), then each row is requantized 8 lanes at a time, the channel
// parameters loaded once for the rows of the pass, and the last < 8 channels
// in scalar code; the epilogue makes the int8 outputs. pairs_fn (may be
// null) replaces acc_fn for a pass when the int16 pair sums are exact (top
// of the file): no row of the pass has a -128 pair, or the weights have
// none. The weights are scanned at most once per call, and only for calls
// of 2 or more rows (for one row the scan costs about what the pair kernel
// saves).
template <class Epilogue>
__attribute__((always_inline)) inline void linear_driver(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                                                         int out_features, int in_features, const int8_t* x,
                                                         int x_stride, const int8_t* w, const int32_t* bias,
                                                         const int32_t* mult, const int32_t* shift,
                                                         int per_channel, const Epilogue& epi) {
  constexpr int kChunk = 64;
  constexpr int kRows = kLinearAccMaxRows;
  const size_t block_bytes = packed_block_bytes(in_features);
  const Rq32 rq0 = rq32_of(mult[0], shift[0]);
  const int32x4_t one = vdupq_n_s32(1), minus1 = vdupq_n_s32(-1), zero = vdupq_n_s32(0);
  const int pair_len = 8 * (in_features / 8);  // inputs summed in int16 pairs
  int w_pairs = -1;  // the weights have a -128 pair: -1 not yet known, 0 no, 1 yes
  int32_t acc[kRows][kChunk];
  for (int m = 0; m < rows; m += kRows) {
    const int nr = rows - m >= kRows ? kRows : rows - m;
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    Qs8LinearAccFn fn = acc_fn;
    if (pairs_fn != nullptr) {
      bool x_pairs = false;
      for (int t = 0; t < nr && !x_pairs; ++t) {
        x_pairs = row_has_min_pair(xr + static_cast<ptrdiff_t>(t) * x_stride, pair_len);
      }
      if (x_pairs && w_pairs < 0 && rows >= 2) {
        w_pairs = weights_have_min_pair(w, (out_features + kPackN - 1) / kPackN, in_features / 8,
                                        block_bytes)
                      ? 1
                      : 0;
      }
      if (!x_pairs || w_pairs == 0) fn = pairs_fn;
    }
    for (int n0 = 0; n0 < out_features; n0 += kChunk) {
      const int cnt = out_features - n0 < kChunk ? out_features - n0 : kChunk;
      const int blocks = (cnt + kPackN - 1) / kPackN;
      fn(nr, blocks, in_features, xr, x_stride,
             w + static_cast<ptrdiff_t>(n0 / kPackN) * static_cast<ptrdiff_t>(block_bytes),
             &acc[0][0], kChunk);
      int i = 0;
      for (; i + 8 <= cnt; i += 8) {
        const int n = n0 + i;
        const int32x4_t b0 = vld1q_s32(bias + n);
        const int32x4_t b1 = vld1q_s32(bias + n + 4);
        Rq32 q0 = rq0, q1 = rq0;
        if (per_channel) {  // per lane: L = max(s + 1, 0), -R = min(s, -1) (requantize32_x4)
          const int32x4_t sh0 = vld1q_s32(shift + n), sh1 = vld1q_s32(shift + n + 4);
          q0.mult = vld1q_s32(mult + n);
          q1.mult = vld1q_s32(mult + n + 4);
          q0.left = vmaxq_s32(vaddq_s32(sh0, one), zero);
          q1.left = vmaxq_s32(vaddq_s32(sh1, one), zero);
          q0.neg_right = vminq_s32(sh0, minus1);
          q1.neg_right = vminq_s32(sh1, minus1);
        }
        for (int t = 0; t < nr; ++t) {
          const int32x4_t y0 = requantize32_x4(vaddq_s32(vld1q_s32(acc[t] + i), b0), q0);
          const int32x4_t y1 = requantize32_x4(vaddq_s32(vld1q_s32(acc[t] + i + 4), b1), q1);
          epi.store8(m + t, n, y0, y1);
        }
      }
      for (; i < cnt; ++i) {
        const int n = n0 + i;
        const int c = per_channel ? n : 0;
        for (int t = 0; t < nr; ++t) epi.store1(m + t, n, acc[t][i] + bias[n], mult[c], shift[c]);
      }
    }
  }
}

}  // namespace

void qs8_linear_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                           int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                           int y_stride) {
  const EpilogueS8 epi{vdupq_n_s16(static_cast<int16_t>(y_zp)), y_zp, y, y_stride};
  linear_driver(acc_fn, pairs_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                per_channel, epi);
}
void qs8_linear_res_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                           int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                           int y_stride) {
  const int32_t c = residual_offset(res.term);
  const EpilogueRes epi{vdupq_n_s32(res.term.mult), vdupq_n_s32(c), vdupq_n_s32(-res.term.shift),
                        res.res, res.res_stride, res.term, c, y, y_stride};
  linear_driver(acc_fn, pairs_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                per_channel, epi);
}

void qs8_linear_res16_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                                 int out_features, int in_features, const int8_t* x, int x_stride,
                                 const int8_t* w, const int32_t* bias, const int32_t* mult,
                                 const int32_t* shift, int per_channel, const QS16Residual& res,
                                 int16_t* y, int y_stride) {
  const EpilogueRes16 epi{vdupq_n_s32(int32_t{1} << (res.term.shift - 1)), vdupq_n_s32(-res.term.shift),
                          vdupq_n_s32(-kResidual16Clamp), vdupq_n_s32(kResidual16Clamp),
                          vdup_n_s16(static_cast<int16_t>(res.term.mult)), res.res, res.res_stride, res.term,
                          y, y_stride};
  linear_driver(acc_fn, pairs_fn, rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                per_channel, epi);
}

}  // namespace kernels
}  // namespace edgeattn
