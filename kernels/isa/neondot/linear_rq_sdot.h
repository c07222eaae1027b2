// The SDOT linear with the requantization fused into the register tiles,
// shared by qs8_linear_rq__neondot and qs8_linear_res_rq__neondot (and its
// requantization by qs8_attn_pv_tile__neondot). Same
// rules as sdot_tiles.h.
#ifndef EDGEATTN_KERNELS_ISA_NEONDOT_LINEAR_RQ_SDOT_H_
#define EDGEATTN_KERNELS_ISA_NEONDOT_LINEAR_RQ_SDOT_H_

#include "isa/neondot/sdot_tiles.h"

namespace edgeattn {
namespace kernels {

namespace {

// ------------------------------------------------- fused requantization --
// y = sat8(requantize(acc) + zp) as in requant.h (requantize_s8), in 32-bit
// lanes (the derivation is requantize32_x4's in neon_common.h, which this
// file may not include): SQSHL by L, SQDMULH by M (floor(x M / 2^31)),
// rounding shift right by R (SRSHL by -R), with L = s + 1, R = 1 for s >= 0
// and L = 0, R = -s for s < 0: floor((floor(x 2^L M / 2^31) + 2^(R-1)) / 2^R)
// = floor((x M + 2^(n-1)) / 2^n), n = 31 - s (nested floors). If x << L
// saturates, |requantize(x)| >= 2^29 and the vector result keeps the sign
// with |y| in [2^29, 2^30] (M >> 1 or (1 - M) >> 1, M in [2^30, 2^31)):
// both clamp to the same int8. Every lane has |y| <= 2^30. The clamp to +-512
// before adding zp is a saturation to int16 here: |zp| <= 128, so any |y| >
// 512 ends at -128 or 127 either way.
//
// Per 4-channel vector c of a block: {L, M, -R} as three int32x4 (one LD1 of
// three registers).
struct RqBlock {
  int32_t v[4][3][4];
};

// a[r][c] = requantize(a[r][c]) for every row (left L, multiplier M, -R);
// !kLeft: L = 0 in every lane, no SQSHL.
template <int R, bool kLeft>
__attribute__((always_inline)) inline void requant_col(int32x4_t (&a)[R][4], int c, int32x4_t left,
                                                       int32x4_t mult, int32x4_t neg_right) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int32x4_t x = kLeft ? vqshlq_s32(a[r][c], left) : a[r][c];
    a[r][c] = vrshlq_s32(vqdmulhq_s32(x, mult), neg_right);
  }
}

// The first cnt (1..15) bytes of b to y, without a library call (a call in
// the tile's block loop makes GCC keep its pointers on the stack).
__attribute__((always_inline)) inline void store_partial(int8_t* y, int8x16_t b, int cnt) {
  if (cnt & 8) {
    vst1_s8(y, vget_low_s8(b));
    y += 8;
    b = vextq_s8(b, b, 8);
  }
  if (cnt & 4) {
    const uint32_t w = vgetq_lane_u32(vreinterpretq_u32_s8(b), 0);
    std::memcpy(y, &w, 4);  // constant size: one STR, no call, any alignment
    y += 4;
    b = vextq_s8(b, b, 4);
  }
  if (cnt & 2) {
    const uint16_t h = vgetq_lane_u16(vreinterpretq_u16_s8(b), 0);
    std::memcpy(y, &h, 2);
    y += 2;
    b = vextq_s8(b, b, 2);
  }
  if (cnt & 1) vst1q_lane_s8(y, b, 0);
}

// Two int16x8 halves of a row's 16 outputs saturated to int8 and stored:
// all 16 bytes (kFull) or the first cnt (the layer's last block).
template <bool kFull>
__attribute__((always_inline)) inline void store_s8_row(int8_t* y, int16x8_t h0, int16x8_t h1, int cnt) {
  const int8x16_t b = vqmovn_high_s16(vqmovn_s16(h0), h1);
  if (kFull) {
    vst1q_s8(y, b);
  } else {
    store_partial(y, b, cnt);
  }
}

// Row r's 16 requantized lanes + zp, saturated to int8, stored to yr[r] + n
// (the first cnt of them: channels past the layer's are computed from
// padding and never stored).
template <int R>
__attribute__((always_inline)) inline void narrow_store(const int32x4_t (&a)[R][4], int16x8_t zp, int cnt,
                                                        int8_t* const (&yr)[R], ptrdiff_t n) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int16x8_t h0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a[r][0]), a[r][1]), zp);
    const int16x8_t h1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a[r][2]), a[r][3]), zp);
    const int8x16_t b = vqmovn_high_s16(vqmovn_s16(h0), h1);
    if (cnt == 16) {
      vst1q_s8(yr[r] + n, b);
    } else {
      store_partial(yr[r] + n, b, cnt);
    }
  }
}

// The same for rows y + r * y_stride.
template <int R>
__attribute__((always_inline)) inline void narrow_store(const int32x4_t (&a)[R][4], int16x8_t zp, int cnt,
                                                        int8_t* y, int y_stride) {
  int8_t* yr[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) yr[r] = y + static_cast<ptrdiff_t>(r) * y_stride;
  narrow_store<R>(a, zp, cnt, yr, 0);
}

// The 16 residual bytes at p (the first cnt of them, 1..16; the others 0).
__attribute__((always_inline)) inline int8x16_t load_residual(const int8_t* p, int cnt) {
  if (cnt == 16) return vld1q_s8(p);
  alignas(16) int8_t b[16] = {};
  int o = 0;
  if (cnt & 8) {
    std::memcpy(b, p, 8);  // constant sizes: loads and stores, no call
    o = 8;
  }
  if (cnt & 4) {
    std::memcpy(b + o, p + o, 4);
    o += 4;
  }
  if (cnt & 2) {
    std::memcpy(b + o, p + o, 2);
    o += 2;
  }
  if (cnt & 1) b[o] = p[o];
  return vld1q_s8(b);
}

// The epilogues of linear_tile: what becomes of a block's requantized lanes.
// Out::at(m, n0) is the epilogue for a tile whose first row is m and first
// channel n0, Out::Rows<R> its per-row state, set up once per tile.
//
// qs8_linear: + zp, saturated to int8 (narrow_store). A single vector, so it
// is passed in a register, as the bare zp was.
struct OutS8 {
  static constexpr bool kFusedRq = false;
  int16x8_t zp;
  OutS8 at(int, int) const { return *this; }
  template <int R>
  struct Rows {
    explicit Rows(const OutS8&) {}
  };
  template <int R>
  __attribute__((always_inline)) void store(const int32x4_t (&a)[R][4], const Rows<R>&, int cnt,
                                            int8_t* const (&yr)[R], ptrdiff_t n) const {
    narrow_store<R>(a, zp, cnt, yr, n);
  }
};

// The residual rows of the epilogues that add one (OutRes, OutRes16): at()
// moves to row m, column n0 of a tile, Rows<R> holds its R rows' pointers.
template <class Out>
struct ResidualRows {
  const int8_t* res;
  ptrdiff_t res_stride;
  Out at(int m, int n0) const {
    Out o = static_cast<const Out&>(*this);
    o.res += static_cast<ptrdiff_t>(m) * res_stride + n0;
    return o;
  }
  template <int R>
  struct Rows {
    const int8_t* r[R];
    explicit Rows(const ResidualRows& o) {
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) r[i] = o.res + static_cast<ptrdiff_t>(i) * o.res_stride;
    }
  };
};

// qs8_linear_res (residual_epilogue_s8 in requant.h, which this file may not
// include): sat8((y + A a + C) >> n) per lane, y the lane requantized as
// above, a the residual byte. The contract's clamp of y to +-2^29 is left
// out; it changes no result: y is requantize() exactly unless x << L
// saturated, and then both have the same sign and magnitude >= 2^29 (above;
// the loader checks M >= 2^30). A lane with |y| >= 2^29 saturates to the
// same int8 with or without the clamp, since |A a + C| < 2^28 + 2^24 (the
// contract's bound) leaves a sum beyond +-(2^28 - 2^24) and n <= 16; and
// |y| <= 2^30 keeps the sum inside int32. {A, C, -n} are loaded from the
// struct (one LD1) when a block is stored: three more registers held across
// the K loop would spill the 5-row tile's accumulators.
struct OutRes : ResidualRows<OutRes> {
  static constexpr bool kFusedRq = false;
  int32_t k[3][4];  // A, C, -n in every lane
  // Row r of a block: 16 lanes, or the first cnt (the layer's last block).
  template <bool kFull>
  __attribute__((always_inline)) static void store_row(const int32x4_t (&a)[4], const int8_t* res, int cnt,
                                                       int32x4_t mult, int32x4_t offset, int32x4_t neg_shift,
                                                       int8_t* y) {
    const int8x16_t av = kFull ? vld1q_s8(res) : load_residual(res, cnt);
    const int16x8_t lo = vmovl_s8(vget_low_s8(av)), hi = vmovl_high_s8(av);
    int32x4_t s[4];
    s[0] = vmlaq_s32(vaddq_s32(a[0], offset), vmovl_s16(vget_low_s16(lo)), mult);
    s[1] = vmlaq_s32(vaddq_s32(a[1], offset), vmovl_high_s16(lo), mult);
    s[2] = vmlaq_s32(vaddq_s32(a[2], offset), vmovl_s16(vget_low_s16(hi)), mult);
    s[3] = vmlaq_s32(vaddq_s32(a[3], offset), vmovl_high_s16(hi), mult);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) s[c] = vshlq_s32(s[c], neg_shift);
    store_s8_row<kFull>(y, vqmovn_high_s32(vqmovn_s32(s[0]), s[1]), vqmovn_high_s32(vqmovn_s32(s[2]), s[3]), cnt);
  }
  template <int R>
  __attribute__((always_inline)) void store(const int32x4_t (&a)[R][4], const Rows<R>& rows, int cnt,
                                            int8_t* const (&yr)[R], ptrdiff_t n) const {
    const int32x4x3_t k3 = vld1q_s32_x3(k[0]);
    const int32x4_t mult = k3.val[0], offset = k3.val[1], neg_shift = k3.val[2];
    if (cnt == 16) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) store_row<true>(a[r], rows.r[r] + n, 16, mult, offset, neg_shift, yr[r] + n);
    } else {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) store_row<false>(a[r], rows.r[r] + n, cnt, mult, offset, neg_shift, yr[r] + n);
    }
  }
};

// qs8_linear_res when n = 16 and every channel's s >= 0, with the term's
// int8 zero points: C = 2^15 + zp_y 2^16 - A zp_a, so
//   sat8((y + A a + C) >> 16) = sat8(sat16(sat16((y + A (a - zp_a) + 2^15) >> 16) + zp_y))
// exactly: a sum beyond int16 stays beyond int8 after adding |zp_y| <= 128.
// So a - zp_a comes from one SSUBL (as the SXTL it replaces), the rounding
// and the shift from one SQRSHRN #16 and zp_y from one SQADD per 8 lanes:
// no vector add of C. The requantization is fused too (kFusedRq): with every
// s >= 0, requantize(x) = floor((x 2^s M + 2^30) / 2^31), which is SQRDMULH
// of x << s (SQSHL by L = s) by M; SQRDMLAH adds it to A (a - zp_a) in one
// instruction, saturating, instead of SQDMULH, SRSHL and MLA. Saturation
// keeps the sign where x << s or the sum saturates, and both are then at
// least 2^28 in magnitude (|A (a - zp_a)| < 2^28): -128 or 127 as in the
// contract (see OutRes for the clamp). SQRDMLAH is Armv8.1 (RDM), which
// every core with the dot product (Armv8.2) has.
struct OutRes16 : ResidualRows<OutRes16> {
  static constexpr bool kFusedRq = true;
  int32_t k[3][4];  // A in every lane; zp_a in 16 bytes; zp_y in 8 halfwords
  // Row r of a block: a the lanes shifted left by L, m the blocks' M.
  template <bool kFull>
  __attribute__((always_inline)) static void store_row(const int32x4_t (&a)[4], const int32x4_t (&m)[4],
                                                       const int8_t* res, int cnt, int32x4_t mult, int8x16_t zpa,
                                                       int16x8_t zpy, int8_t* y) {
    const int8x16_t av = kFull ? vld1q_s8(res) : load_residual(res, cnt);
    const int16x8_t lo = vsubl_s8(vget_low_s8(av), vget_low_s8(zpa)), hi = vsubl_high_s8(av, zpa);
    int32x4_t s[4];
    s[0] = vmulq_s32(vmovl_s16(vget_low_s16(lo)), mult);
    s[1] = vmulq_s32(vmovl_high_s16(lo), mult);
    s[2] = vmulq_s32(vmovl_s16(vget_low_s16(hi)), mult);
    s[3] = vmulq_s32(vmovl_high_s16(hi), mult);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) s[c] = vqrdmlahq_s32(s[c], a[c], m[c]);
    const int16x8_t h0 = vqaddq_s16(vqrshrn_high_n_s32(vqrshrn_n_s32(s[0], 16), s[1], 16), zpy);
    const int16x8_t h1 = vqaddq_s16(vqrshrn_high_n_s32(vqrshrn_n_s32(s[2], 16), s[3], 16), zpy);
    store_s8_row<kFull>(y, h0, h1, cnt);
  }
  template <int R>
  __attribute__((always_inline)) void store(const int32x4_t (&a)[R][4], const int32x4_t (&m)[4],
                                            const Rows<R>& rows, int cnt, int8_t* const (&yr)[R],
                                            ptrdiff_t n) const {
    const int32x4x3_t k3 = vld1q_s32_x3(k[0]);
    const int32x4_t mult = k3.val[0];
    const int8x16_t zpa = vreinterpretq_s8_s32(k3.val[1]);
    const int16x8_t zpy = vreinterpretq_s16_s32(k3.val[2]);
    if (cnt == 16) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) store_row<true>(a[r], m, rows.r[r] + n, 16, mult, zpa, zpy, yr[r] + n);
    } else {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) store_row<false>(a[r], m, rows.r[r] + n, cnt, mult, zpa, zpy, yr[r] + n);
    }
  }
};

// Channels in chunks of 32 blocks: the chunk's biases (0 past out_features)
// and requantization vectors are laid out once, then every row tile runs
// over the chunk's blocks, its inputs packed (or its tails copied) once.
// 32 (8 KB of stack, with kPackMaxK's rows 11 KB) covers a d-128 block's
// 384- and 512-wide projections, so their row tiles are packed once.
constexpr int kChunkBlocks = 32;
// Tiles of 4 or 5 rows with in_features up to this pack their inputs
// (tile_k_loop_packed; 5 x 528 bytes on the stack); longer rows load each
// row's 16 bytes separately.
constexpr int kPackMaxK = 528;

struct LinearArgs {
  int in_features;
  const int8_t* x;
  int x_stride;
  const int8_t* w;
  ptrdiff_t block_bytes;
  int8_t* y;
  int y_stride;
};

// The int32 forms of ld1x4_post (64 bytes, four registers) and of three
// registers (48 bytes), p advanced past them: a block's requantization
// vectors (GCC 12 addresses each vld1q_s32_x3 of a block with an ADD).
__attribute__((always_inline)) inline int32x4x4_t ld1x4_post(const int32_t*& p) {
  int32x4x4_t v;
  __asm__("ld1 {%S0.4s - %V0.4s}, [%1], #64"
          : "=w"(v), "+r"(p)
          : "m"(*reinterpret_cast<const int32_t(*)[16]>(p)));
  return v;
}

__attribute__((always_inline)) inline int32x4x3_t ld1x3_post(const int32_t*& p) {
  int32x4x3_t v;
  __asm__("ld1 {%S0.4s - %U0.4s}, [%1], #48"
          : "=w"(v), "+r"(p)
          : "m"(*reinterpret_cast<const int32_t(*)[12]>(p)));
  return v;
}

// One row tile (R rows) over the chunk's blocks: accumulators from the bias,
// the K loop, requantization, int8 stores. The block loop is inside, so the
// tile's register saves and set-up are paid once per chunk. kLeft: some
// channel has s >= 0 (L > 0); without one the SQSHL by 0 is left out. Out:
// the epilogue (OutS8, OutRes). Aligned to 16 so that the K loop's
// alignment padding does not depend on where the function lands (at a start
// 4 past a 16-byte boundary GCC put an executed NOP before the loop of every
// block: 1.8 K instructions in the encoder block).
template <int R, bool kLeft, bool kPacked, class Out>
__attribute__((optimize("no-schedule-insns"), aligned(16))) void linear_tile(const LinearArgs& p,
                                                                            const int8_t* xm,
                                                                            const int8_t* tail, const int8_t* wb,
                                                                            const int32_t* cb, const RqBlock* cq,
                                                                            Out out, int cnt, int8_t* ym) {
  // Everything the block loop needs in registers, computed once.
  const int in_features = p.in_features;
  const int x_stride = p.x_stride;
  const ptrdiff_t block_bytes = p.block_bytes;
  int8_t* yr[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) yr[r] = ym + static_cast<ptrdiff_t>(r) * p.y_stride;
  const typename Out::template Rows<R> out_rows(out);
  const int32_t* qp = cq->v[0][0];  // the blocks' {L, M, -R} vectors, consecutive
  for (int n = 0; n < cnt; n += 16, wb += block_bytes, cb += 16) {
    int32x4_t a[R][4];
    load_init<R>(a, cb);  // the bias is the accumulators' start
    if constexpr (kPacked) {
      tile_k_loop_packed<R>(a, in_features, xm, wb);  // xm: the packed rows
    } else {
      tile_k_loop<R>(a, in_features, xm, x_stride, tail, wb);
    }
    if constexpr (Out::kFusedRq) {  // the epilogue multiplies by M (OutRes16)
      const int32x4x4_t l = ld1x4_post(qp);  // the fused layout: L of the 4 vectors, then M
      const int32x4x4_t mv = ld1x4_post(qp);
      const int32x4_t m[4] = {mv.val[0], mv.val[1], mv.val[2], mv.val[3]};
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) a[r][c] = vqshlq_s32(a[r][c], l.val[c]);
      }
      out.template store<R>(a, m, out_rows, cnt - n < 16 ? cnt - n : 16, yr, n);
    } else {
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const int32x4x3_t q = ld1x3_post(qp);
        requant_col<R, kLeft>(a, c, q.val[0], q.val[1], q.val[2]);
      }
      out.template store<R>(a, out_rows, cnt - n < 16 ? cnt - n : 16, yr, n);
    }
  }
}

template <int R, bool kPacked, class Out>
void linear_rows_as(const LinearArgs& p, const int8_t* xm, int n0, int cnt, const int32_t* cb, const RqBlock* cq,
                    bool left, Out out, const int8_t* tail, int8_t* ym) {
  const int8_t* wb = p.w + static_cast<ptrdiff_t>(n0 / 16) * p.block_bytes;
  if constexpr (Out::kFusedRq) {  // always shifts left (by s >= 0)
    linear_tile<R, true, kPacked>(p, xm, tail, wb, cb, cq, out, cnt, ym);
  } else if (left) {
    linear_tile<R, true, kPacked>(p, xm, tail, wb, cb, cq, out, cnt, ym);
  } else {
    linear_tile<R, false, kPacked>(p, xm, tail, wb, cb, cq, out, cnt, ym);
  }
}

// xpack: 16 * R * ceil(kPackMaxK / 16) bytes.
template <int R, class Out>
void linear_rows(const LinearArgs& p, int m, int n0, int cnt, const int32_t* cb, const RqBlock* cq,
                 bool left, Out out_all, int8_t* tail, int8_t* xpack) {
  const Out out = out_all.at(m, n0);
  const int8_t* xm = p.x + static_cast<ptrdiff_t>(m) * p.x_stride;
  int8_t* ym = p.y + static_cast<ptrdiff_t>(m) * p.y_stride + n0;
  if constexpr (R >= 4) {
    if (p.in_features <= kPackMaxK) {
      pack_rows<R>(xm, p.x_stride, p.in_features, xpack);
      linear_rows_as<R, true>(p, xpack, n0, cnt, cb, cq, left, out, tail, ym);
      return;
    }
  }
  const int k16 = p.in_features & ~15;
  if (k16 < p.in_features) {
    for (int r = 0; r < R; ++r) {
      std::memcpy(tail + 16 * r, xm + static_cast<ptrdiff_t>(r) * p.x_stride + k16,
                  static_cast<size_t>(p.in_features - k16));
    }
  }
  linear_rows_as<R, false>(p, xm, n0, cnt, cb, cq, left, out, tail, ym);
}

// The whole int8 linear of the dot-product path: register tiles of 5 rows x
// 16 channels whose accumulators start at the bias and are requantized and
// turned into int8 by the epilogue `out` straight from the registers.
template <class Out>
__attribute__((always_inline)) inline void linear_rq(int rows, int out_features, int in_features, const int8_t* x,
                                                     int x_stride, const int8_t* w, const int32_t* bias,
                                                     const int32_t* mult, const int32_t* shift, int per_channel,
                                                     Out out, int8_t* y, int y_stride) {
  const ptrdiff_t block_bytes = 16 * static_cast<ptrdiff_t>((in_features + 3) & ~3);
  const LinearArgs p{in_features, x, x_stride, w, block_bytes, y, y_stride};
  alignas(16) int32_t cb[16 * kChunkBlocks];
  RqBlock cq[kChunkBlocks];
  int8_t tail[16 * kDotTileRows] = {};
  alignas(16) int8_t xpack[16 * kDotTileRows * ((kPackMaxK + 15) / 16)];
  const int32x4_t one = vdupq_n_s32(1), minus1 = vdupq_n_s32(-1), zero = vdupq_n_s32(0);
  for (int n0 = 0; n0 < out_features; n0 += 16 * kChunkBlocks) {
    int32x4_t any_left = minus1;
    const int cnt = out_features - n0 < 16 * kChunkBlocks ? out_features - n0 : 16 * kChunkBlocks;
    for (int i = 0; i < ((cnt + 15) & ~15); i += 4) {
      int32x4_t b, m, s;
      if (i + 4 <= cnt) {
        b = vld1q_s32(bias + n0 + i);
        m = per_channel ? vld1q_s32(mult + n0 + i) : vdupq_n_s32(mult[0]);
        s = per_channel ? vld1q_s32(shift + n0 + i) : vdupq_n_s32(shift[0]);
      } else {  // the last block's padding lanes: bias 0, the last channel's (M, s)
        int32_t bt[4], mt[4], st[4];
        for (int l = 0; l < 4; ++l) {
          const int n = n0 + (i + l < cnt ? i + l : cnt - 1);
          bt[l] = i + l < cnt ? bias[n] : 0;
          mt[l] = mult[per_channel ? n : 0];
          st[l] = shift[per_channel ? n : 0];
        }
        b = vld1q_s32(bt);
        m = vld1q_s32(mt);
        s = vld1q_s32(st);
      }
      vst1q_s32(cb + i, b);
      if constexpr (Out::kFusedRq) {  // every s >= 0 (SQRDMULH): L = s; 32 values a block, L then M
        int32_t* f = cq[0].v[0][0] + 32 * (i / 16) + i % 16;
        vst1q_s32(f, s);
        vst1q_s32(f + 16, m);
      } else {
        int32_t(*q)[4] = cq[i / 16].v[(i % 16) / 4];
        vst1q_s32(q[0], vmaxq_s32(vaddq_s32(s, one), zero));  // L = max(s + 1, 0)
        vst1q_s32(q[1], m);
        vst1q_s32(q[2], vminq_s32(s, minus1));  // -R = min(s, -1)
      }
      any_left = vmaxq_s32(any_left, s);
    }
    const bool left = vmaxvq_s32(any_left) >= 0;  // some L > 0 in the chunk
    int m = 0;
    for (; m + kDotTileRows <= rows; m += kDotTileRows) {
      linear_rows<kDotTileRows>(p, m, n0, cnt, cb, cq, left, out, tail, xpack);
    }
    switch (rows - m) {
      case 4: linear_rows<4>(p, m, n0, cnt, cb, cq, left, out, tail, xpack); break;
      case 3: linear_rows<3>(p, m, n0, cnt, cb, cq, left, out, tail, xpack); break;
      case 2: linear_rows<2>(p, m, n0, cnt, cb, cq, left, out, tail, xpack); break;
      case 1: linear_rows<1>(p, m, n0, cnt, cb, cq, left, out, tail, xpack); break;
      default: break;
    }
  }
}

}  // namespace

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_NEONDOT_LINEAR_RQ_SDOT_H_
