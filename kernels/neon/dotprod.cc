// Armv8.2-A dot-product (SDOT) int8 inner loops, AArch64 only. This file alone
// is compiled with -march=armv8.2-a+dotprod (kernels.cmake); the baseline
// files call into it only after HWCAP_ASIMDDP was seen (cpu_features_arm.cc).
//
// Deliberately self-contained: it includes no project header with inline
// functions (not neon_common.h, not requant.h, not ref.h), so no vague-linkage
// helper compiled with dotprod instructions can be shared with, and picked by
// the linker for, the baseline NEON path.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if !defined(__ARM_FEATURE_DOTPROD)
#error "dotprod.cc must be compiled with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

void qs8_linear_acc_init__neondot(int rows, int blocks, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                                  int acc_stride);
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores);
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo, int stride,
                               const uint8_t* vb, const uint32_t* corr, int32_t pv_mult, int32_t pv_shift,
                               int32_t out_zp, int cnt, int8_t* out, int out_stride);
void qs8_attn_qk_tile__neondot(int rows, int blocks, int head_dim, const int8_t* q, int q_stride,
                               const int8_t* keys, const int32_t* init, int32_t* scores, int stride);
void qs8_linear_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            int per_channel, int32_t y_zp, int8_t* y, int y_stride);
void qs8_linear_res_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                                const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                int per_channel, const int8_t* res, int res_stride, int32_t res_mult,
                                int32_t res_shift, int32_t res_a_zp, int32_t res_y_zp, int32_t res_offset,
                                int8_t* y, int y_stride);

namespace {

// Linear on the packed K4N16 weights (packed_weights.h; the layout is
// restated here because this file includes no project header): a 16-channel
// block is 16 * round_up(K, 4) bytes, a group of 4 inputs 64 bytes, four
// vectors of 4 channels x 4 inputs, loaded by one LD1 of four registers.
// SDOT by element, vdotq_laneq_s32(acc, w, x16, l), adds to each channel lane
// of acc the dot product of its 4 weight bytes with inputs 4l..4l+3 of x16:
// one instruction per 4 channels x 4 inputs, no horizontal reduction. A
// register tile of R rows x 16 channels holds 4R accumulators; one 16-byte
// input load per row covers four groups.

// The 64 bytes at p into four registers, p advanced past them: one LD1 with
// post-increment. (LD1 of four registers has no immediate offset; from
// vld1q_s8_x4 GCC 12 addresses each group from a recomputed base, an ADD per
// group.)
__attribute__((always_inline)) inline int8x16x4_t ld1x4_post(const int8_t*& p) {
  int8x16x4_t v;
  __asm__("ld1 {%S0.16b - %V0.16b}, [%1], #64"
          : "=w"(v), "+r"(p)
          : "m"(*reinterpret_cast<const int8_t(*)[64]>(p)));
  return v;
}

__attribute__((always_inline)) inline uint8x16x4_t ld1x4_post(const uint8_t*& p) {
  uint8x16x4_t v;
  __asm__("ld1 {%S0.16b - %V0.16b}, [%1], #64"
          : "=w"(v), "+r"(p)
          : "m"(*reinterpret_cast<const uint8_t(*)[64]>(p)));
  return v;
}

// wg advances past the group.
template <int L, int R>
__attribute__((always_inline)) inline void dot_group(int32x4_t (&a)[R][4], const int8x16_t (&xv)[R],
                                                     const int8_t*& wg) {
  const int8x16x4_t wv = ld1x4_post(wg);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdotq_laneq_s32(a[r][c], wv.val[c], xv[r], L);
  }
}

// a[r][0..3] = init[0..16) for every row, two LDP per row (the empty asm
// keeps GCC from loading once and copying 4R registers; LD1 of four
// registers would need four consecutive accumulators, which costs moves).
template <int R>
__attribute__((always_inline)) inline void load_init(int32x4_t (&a)[R][4], const int32_t* init) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __asm__("" : "+r"(init));
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vld1q_s32(init + 4 * c);
  }
}

// acc[r * stride + 0..16) = a[r][0..3] (STP pairs).
template <int R>
__attribute__((always_inline)) inline void store_acc(const int32x4_t (&a)[R][4], int32_t* acc, int stride) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) vst1q_s32(acc + static_cast<ptrdiff_t>(r) * stride + 4 * c, a[r][c]);
  }
}

// 16 bytes at p into a register, p advanced past them (LDR post-index).
__attribute__((always_inline)) inline int8x16_t ld1_post(const int8_t*& p) {
  int8x16_t v;
  __asm__("ldr %q0, [%1], #16" : "=w"(v), "+r"(p) : "m"(*reinterpret_cast<const int8_t(*)[16]>(p)));
  return v;
}

// One 16-input step of a register tile: R input vectors (each row pointer
// advanced by 16) against the four 64-byte weight groups at wg.
template <int R>
__attribute__((always_inline)) inline void k_step(int32x4_t (&a)[R][4], const int8_t* (&xp)[R],
                                                  const int8_t*& wg) {
  int8x16_t xv[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xv[r] = ld1_post(xp[r]);
  dot_group<0, R>(a, xv, wg);
  dot_group<1, R>(a, xv, wg);
  dot_group<2, R>(a, xv, wg);
  dot_group<3, R>(a, xv, wg);
}

// The K loop of one register tile: a += the products of R rows (x, rows
// x_stride apart) with one 16-channel block wb. tail[16 r ..] holds row r's
// inputs past 16 * (in_features / 16), zero padded; only the groups that
// exist in the block are read.
template <int R>
__attribute__((always_inline)) inline void tile_k_loop(int32x4_t (&a)[R][4], int in_features,
                                                       const int8_t* x, int x_stride, const int8_t* tail,
                                                       const int8_t* wb) {
  const int steps = in_features / 16;
  const int8_t* xp[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xp[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  const int8_t* wg = wb;
  // Two steps per iteration, the loop ended by the weight pointer and the
  // inputs loaded with post-increment: no index or counter updates.
  const int8_t* const pairs_end = wb + static_cast<ptrdiff_t>(steps & ~1) * 256;
  while (wg != pairs_end) {
    k_step<R>(a, xp, wg);
    k_step<R>(a, xp, wg);
  }
  if (steps & 1) k_step<R>(a, xp, wg);
  const int rem = in_features - 16 * steps;
  if (rem != 0) {
    int8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = vld1q_s8(tail + 16 * r);
    dot_group<0, R>(a, xv, wg);
    if (rem > 4) dot_group<1, R>(a, xv, wg);
    if (rem > 8) dot_group<2, R>(a, xv, wg);
    if (rem > 12) dot_group<3, R>(a, xv, wg);
  }
}

// The K loop on packed inputs (pack_rows): step s of the R rows is 16 R
// bytes at x + 16 R s, row r's 16 inputs at +16 r, so a step's rows come in
// LDP pairs: 3 loads a step for 5 rows instead of 5. (LD1 of four registers
// would need four consecutive ones and makes GCC spill accumulators; a pair
// straddling two steps costs register moves.) The last partial step is
// packed zero padded like the full ones.
__attribute__((always_inline)) inline void ldp_post(int8x16_t& v0, int8x16_t& v1, const int8_t*& p) {
  __asm__("ldp %q0, %q1, [%2], #32"
          : "=w"(v0), "=w"(v1), "+r"(p)
          : "m"(*reinterpret_cast<const int8_t(*)[32]>(p)));
}

template <int R>
__attribute__((always_inline)) inline void dot_step(int32x4_t (&a)[R][4], const int8x16_t (&xv)[R],
                                                    const int8_t*& wg) {
  dot_group<0, R>(a, xv, wg);
  dot_group<1, R>(a, xv, wg);
  dot_group<2, R>(a, xv, wg);
  dot_group<3, R>(a, xv, wg);
}

// One step: the R rows' vectors by LDP pairs (and an LDR for odd R).
template <int R>
__attribute__((always_inline)) inline void k_step_packed(int32x4_t (&a)[R][4], const int8_t*& xq,
                                                         const int8_t*& wg) {
  int8x16_t xv[R];
#pragma GCC unroll 4
  for (int r = 0; r + 2 <= R; r += 2) ldp_post(xv[r], xv[r + 1], xq);
  if (R % 2 != 0) xv[R - 1] = ld1_post(xq);
  dot_step<R>(a, xv, wg);
}

template <int R>
__attribute__((always_inline)) inline void tile_k_loop_packed(int32x4_t (&a)[R][4], int in_features,
                                                              const int8_t* xq, const int8_t* wb) {
  const int steps = in_features / 16;
  const int8_t* wg = wb;
  const int8_t* const pairs_end = wb + static_cast<ptrdiff_t>(steps & ~1) * 256;
  while (wg != pairs_end) {
    k_step_packed<R>(a, xq, wg);
    k_step_packed<R>(a, xq, wg);
  }
  if (steps & 1) k_step_packed<R>(a, xq, wg);
  const int rem = in_features - 16 * steps;
  if (rem != 0) {
    int8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = ld1_post(xq);
    dot_group<0, R>(a, xv, wg);
    if (rem > 4) dot_group<1, R>(a, xv, wg);
    if (rem > 8) dot_group<2, R>(a, xv, wg);
    if (rem > 12) dot_group<3, R>(a, xv, wg);
  }
}

// Rows x[0, R) (x_stride apart) into xq in the layout of tile_k_loop_packed.
template <int R>
__attribute__((noinline)) void pack_rows(const int8_t* x, int x_stride, int in_features, int8_t* xq) {
  const int k16 = in_features & ~15;
  int k = 0;
  for (; k + 32 <= k16; k += 32, xq += 32 * R) {  // two steps: 32 bytes of each row (LDP, STP)
    int8x16_t v0[R], v1[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      v0[r] = vld1q_s8(x + static_cast<ptrdiff_t>(r) * x_stride + k);
      v1[r] = vld1q_s8(x + static_cast<ptrdiff_t>(r) * x_stride + k + 16);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) vst1q_s8(xq + 16 * r, v0[r]);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) vst1q_s8(xq + 16 * (R + r), v1[r]);
  }
  if (k < k16) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) vst1q_s8(xq + 16 * r, vld1q_s8(x + static_cast<ptrdiff_t>(r) * x_stride + k));
    xq += 16 * R;
  }
  if (k16 < in_features) {
    std::memset(xq, 0, 16 * R);
    for (int r = 0; r < R; ++r) {
      std::memcpy(xq + 16 * r, x + static_cast<ptrdiff_t>(r) * x_stride + k16, static_cast<size_t>(in_features - k16));
    }
  }
}

// acc = init + products, stored (qs8_linear_acc_init__neondot). (The pre-RA
// scheduler would hoist all 16 weight loads of a step and spill
// accumulators; keep the source order.)
template <int R>
__attribute__((optimize("no-schedule-insns"))) void tile_dot(int in_features, const int8_t* x,
                                                             int x_stride, const int8_t* tail,
                                                             const int8_t* wb, const int32_t* init,
                                                             int32_t* acc, int acc_stride) {
  int32x4_t a[R][4];
  load_init<R>(a, init);
  tile_k_loop<R>(a, in_features, x, x_stride, tail, wb);
  store_acc<R>(a, acc, acc_stride);
}

// 5 rows x 16 channels: 20 accumulators, 5 input and 4 weight vectors (6
// rows spill; 4 rows load the weights for fewer rows).
constexpr int kDotTileRows = 5;
constexpr int kDotMaxRows = 10;  // kLinearAccMaxRows (neon_kernels.h)
alignas(16) const int32_t kZeroInit[16] = {};

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

void qs8_linear_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  const OutS8 out{vdupq_n_s16(static_cast<int16_t>(y_zp))};
  linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
}

void qs8_linear_res_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                                const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                int per_channel, const int8_t* res, int res_stride, int32_t res_mult,
                                int32_t res_shift, int32_t res_a_zp, int32_t res_y_zp, int32_t res_offset,
                                int8_t* y, int y_stride) {
  int32_t any_neg = 0;  // sign bit: some s < 0 (an OR, which GCC vectorizes)
  for (int i = 0; i < (per_channel ? out_features : 1); ++i) any_neg |= shift[i];
  if (res_shift == 16 && any_neg >= 0) {
    OutRes16 out;
    for (int l = 0; l < 4; ++l) out.k[0][l] = res_mult;
    for (int l = 0; l < 16; ++l) reinterpret_cast<int8_t*>(out.k[1])[l] = static_cast<int8_t>(res_a_zp);
    for (int l = 0; l < 8; ++l) reinterpret_cast<int16_t*>(out.k[2])[l] = static_cast<int16_t>(res_y_zp);
    out.res = res;
    out.res_stride = res_stride;
    linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
    return;
  }
  OutRes out;
  for (int l = 0; l < 4; ++l) {
    out.k[0][l] = res_mult;
    out.k[1][l] = res_offset;
    out.k[2][l] = -res_shift;
  }
  out.res = res;
  out.res_stride = res_stride;
  linear_rq(rows, out_features, in_features, x, x_stride, w, bias, mult, shift, per_channel, out, y, y_stride);
}

// init (may be null): per-channel starting values (16 per block). The Q.K^T
// tile for head dims above 64 (qs8_attn_qk_tile__neondot).
void qs8_linear_acc_init__neondot(int rows, int blocks, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                                  int acc_stride) {
  const ptrdiff_t block_bytes = 16 * static_cast<ptrdiff_t>((in_features + 3) & ~3);
  // Each row's last in_features % 16 inputs, zero padded (no load past
  // in_features), copied once for all blocks.
  const int k16 = in_features & ~15;
  int8_t tail[16 * kDotMaxRows] = {};
  if (k16 < in_features) {
    for (int r = 0; r < rows; ++r) {
      std::memcpy(tail + 16 * r, x + static_cast<ptrdiff_t>(r) * x_stride + k16,
                  static_cast<size_t>(in_features - k16));
    }
  }
  for (int b = 0; b < blocks; ++b) {
    const int8_t* wb = w + b * block_bytes;
    const int32_t* ib = init != nullptr ? init + 16 * b : kZeroInit;
    int32_t* ab = acc + 16 * b;
    int r = 0;
    for (; r + kDotTileRows <= rows; r += kDotTileRows) {
      tile_dot<kDotTileRows>(in_features, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride,
                             tail + 16 * r, wb, ib, ab + static_cast<ptrdiff_t>(r) * acc_stride,
                             acc_stride);
    }
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int32_t* ar = ab + static_cast<ptrdiff_t>(r) * acc_stride;
    switch (rows - r) {
      case 4: tile_dot<4>(in_features, xr, x_stride, tail + 16 * r, wb, ib, ar, acc_stride); break;
      case 3: tile_dot<3>(in_features, xr, x_stride, tail + 16 * r, wb, ib, ar, acc_stride); break;
      case 2: tile_dot<2>(in_features, xr, x_stride, tail + 16 * r, wb, ib, ar, acc_stride); break;
      case 1: tile_dot<1>(in_features, xr, x_stride, tail + 16 * r, wb, ib, ar, acc_stride); break;
      default: break;
    }
  }
}

// scores[j] = sum (q - zq)(k_j - zk) = sum q k - zk sum q - zq sum k + D zq zk
// over the 16-wide blocks (wrapping 32-bit arithmetic, equal to the exact sum
// whenever that fits int32), plus the ragged tail summed directly.
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores) {
  const int kblocks = dim / 16;
  const int d = 16 * kblocks;
  uint32_t sum_q = 0;
  for (int i = 0; i < d; ++i) sum_q += static_cast<uint32_t>(static_cast<int32_t>(q[i]));
  const uint32_t base = static_cast<uint32_t>(d) * static_cast<uint32_t>(q_zp) *
                            static_cast<uint32_t>(k_zp) -
                        static_cast<uint32_t>(k_zp) * sum_q;
  const int32x4_t vbase = vdupq_n_s32(static_cast<int32_t>(base));
  const int8x16_t ones = vdupq_n_s8(1);
  const bool sum_k = q_zp != 0;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    int32x4_t r;
    if (sum_k) {
      int32x4_t s0 = a0, s1 = a0, s2 = a0, s3 = a0;
      for (int b = 0; b < kblocks; ++b) {
        const int8x16_t qv = vld1q_s8(q + 16 * b);
        const int8x16_t kv0 = vld1q_s8(k0 + 16 * b);
        const int8x16_t kv1 = vld1q_s8(k1 + 16 * b);
        const int8x16_t kv2 = vld1q_s8(k2 + 16 * b);
        const int8x16_t kv3 = vld1q_s8(k3 + 16 * b);
        a0 = vdotq_s32(a0, qv, kv0);
        a1 = vdotq_s32(a1, qv, kv1);
        a2 = vdotq_s32(a2, qv, kv2);
        a3 = vdotq_s32(a3, qv, kv3);
        s0 = vdotq_s32(s0, ones, kv0);
        s1 = vdotq_s32(s1, ones, kv1);
        s2 = vdotq_s32(s2, ones, kv2);
        s3 = vdotq_s32(s3, ones, kv3);
      }
      const int32x4_t ks = vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
      r = vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3));
      r = vmlsq_n_s32(vaddq_s32(r, vbase), ks, q_zp);
    } else {
      for (int b = 0; b < kblocks; ++b) {
        const int8x16_t qv = vld1q_s8(q + 16 * b);
        a0 = vdotq_s32(a0, qv, vld1q_s8(k0 + 16 * b));
        a1 = vdotq_s32(a1, qv, vld1q_s8(k1 + 16 * b));
        a2 = vdotq_s32(a2, qv, vld1q_s8(k2 + 16 * b));
        a3 = vdotq_s32(a3, qv, vld1q_s8(k3 + 16 * b));
      }
      r = vaddq_s32(vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3)), vbase);
    }
    vst1q_s32(scores + j, r);
    if (d < dim) {
      for (int t = 0; t < 4; ++t) {
        const int8_t* kr = k0 + static_cast<ptrdiff_t>(t) * k_stride;
        int32_t acc = 0;
        for (int i = d; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
        scores[j + t] += acc;
      }
    }
  }
  for (; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32x4_t a = vdupq_n_s32(0), s = a;
    for (int b = 0; b < kblocks; ++b) {
      const int8x16_t kv = vld1q_s8(kr + 16 * b);
      a = vdotq_s32(a, vld1q_s8(q + 16 * b), kv);
      s = vdotq_s32(s, ones, kv);
    }
    uint32_t acc = static_cast<uint32_t>(vaddvq_s32(a)) + base -
                   static_cast<uint32_t>(q_zp) * static_cast<uint32_t>(vaddvq_s32(s));
    int32_t tail = 0;
    for (int i = d; i < dim; ++i) tail += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = static_cast<int32_t>(acc + static_cast<uint32_t>(tail));
  }
}

namespace {

// Q.K^T of the tiled attention: the query rows stay in registers (S 16-byte
// vectors each, head_dim <= 64) while the packed keys stream past, one
// 16-key block after another. Same sums as tile_dot, but the per-block work
// is only the 16-key init (two LDP per row), the SDOTs (one LD1 of weights
// per group) and four stores per row; tile_dot reloaded the queries for every
// block.
// kRagged: head_dim % 16 != 0, so the last step has `last` (1..4) groups.
template <int L, int R, int S, int kS>
__attribute__((always_inline)) inline void dot_group_q(int32x4_t (&a)[R][4], const int8x16_t (&xv)[R][S],
                                                       const int8_t*& wg) {
  const int8x16x4_t wv = ld1x4_post(wg);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdotq_laneq_s32(a[r][c], wv.val[c], xv[r][kS], L);
  }
}

template <int R, int S, int kS, bool kRagged>
__attribute__((always_inline)) inline void qk_steps(int32x4_t (&a)[R][4], const int8x16_t (&xv)[R][S],
                                                    const int8_t*& wg, int last) {
  if constexpr (kS < S) {
    const bool full = !kRagged || kS + 1 < S;
    dot_group_q<0, R, S, kS>(a, xv, wg);
    if (full || last > 1) dot_group_q<1, R, S, kS>(a, xv, wg);
    if (full || last > 2) dot_group_q<2, R, S, kS>(a, xv, wg);
    if (full || last > 3) dot_group_q<3, R, S, kS>(a, xv, wg);
    qk_steps<R, S, kS + 1, kRagged>(a, xv, wg, last);
  }
}

// Row r's 16 scores to sr[r], sr[r] advanced past them: two STP, the second
// post-indexed (GCC would address rows 1.. with register offsets, one STR
// per vector and no pairs).
template <int R>
__attribute__((always_inline)) inline void store_rows_post(const int32x4_t (&a)[R][4], int32_t* (&sr)[R]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __asm__("stp %q2, %q3, [%1, #32]\n\tstp %q4, %q5, [%1], #64"
            : "=m"(*reinterpret_cast<int32_t(*)[16]>(sr[r])), "+r"(sr[r])
            : "w"(a[r][2]), "w"(a[r][3]), "w"(a[r][0]), "w"(a[r][1]));
  }
}

// R rows (q, 16 * S readable bytes each, zero past head_dim) against every
// block; init advances by init_step (16, or 0 for the zero block).
template <int R, int S, bool kRagged>
__attribute__((optimize("no-schedule-insns"))) void qk_rows(int blocks, int groups, const int8_t* q,
                                                            int q_stride, const int8_t* keys,
                                                            const int32_t* init, int init_step,
                                                            int32_t* scores, int stride) {
  int8x16_t xv[R][S];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int k = 0; k < S; ++k) xv[r][k] = vld1q_s8(q + static_cast<ptrdiff_t>(r) * q_stride + 16 * k);
  }
  const int last = groups - 4 * (S - 1);
  const int8_t* kg = keys;  // the blocks are consecutive: the groups run on
  int32_t* sr[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) sr[r] = scores + static_cast<ptrdiff_t>(r) * stride;
  for (int b = 0; b < blocks; ++b, init += init_step) {
    int32x4_t a[R][4];
    load_init<R>(a, init);
    qk_steps<R, S, 0, kRagged>(a, xv, kg, last);
    store_rows_post<R>(a, sr);
  }
}

// Rows in register tiles of 4 (S <= 2: 16 accumulators, 4S query and 4
// weight registers) or 3 (S = 3, 4), the rest in one smaller tile.
template <int S, bool kRagged>
void qk_tile(int rows, int blocks, int groups, const int8_t* q, int q_stride, const int8_t* keys,
             const int32_t* init, int init_step, int32_t* scores, int stride) {
  constexpr int kR = S <= 2 ? 4 : 3;
  int r = 0;
  for (; r + kR <= rows; r += kR) {
    qk_rows<kR, S, kRagged>(blocks, groups, q + static_cast<ptrdiff_t>(r) * q_stride, q_stride, keys, init,
                            init_step, scores + static_cast<ptrdiff_t>(r) * stride, stride);
  }
  const int8_t* qr = q + static_cast<ptrdiff_t>(r) * q_stride;
  int32_t* sr = scores + static_cast<ptrdiff_t>(r) * stride;
  switch (rows - r) {
    case 3: qk_rows<3, S, kRagged>(blocks, groups, qr, q_stride, keys, init, init_step, sr, stride); break;
    case 2: qk_rows<2, S, kRagged>(blocks, groups, qr, q_stride, keys, init, init_step, sr, stride); break;
    case 1: qk_rows<1, S, kRagged>(blocks, groups, qr, q_stride, keys, init, init_step, sr, stride); break;
    default: break;
  }
}

template <bool kRagged>
void qk_tile_s(int s, int rows, int blocks, int groups, const int8_t* q, int q_stride, const int8_t* keys,
               const int32_t* init, int init_step, int32_t* scores, int stride) {
  const int st = stride;
  switch (s) {
    case 1: qk_tile<1, kRagged>(rows, blocks, groups, q, q_stride, keys, init, init_step, scores, st); break;
    case 2: qk_tile<2, kRagged>(rows, blocks, groups, q, q_stride, keys, init, init_step, scores, st); break;
    case 3: qk_tile<3, kRagged>(rows, blocks, groups, q, q_stride, keys, init, init_step, scores, st); break;
    default: qk_tile<4, kRagged>(rows, blocks, groups, q, q_stride, keys, init, init_step, scores, st); break;
  }
}

}  // namespace

// scores[r * stride + j] = init[j] (0 if init is null) + sum_{i < head_dim}
// q_r[i] k_j[i] for keys j < 16 * blocks (K4N16 blocks of K = head_dim) and
// rows r < rows (1..8). Head dims above 64 take the linear's accumulation.
void qs8_attn_qk_tile__neondot(int rows, int blocks, int head_dim, const int8_t* q, int q_stride,
                               const int8_t* keys, const int32_t* init, int32_t* scores, int stride) {
  const int s = (head_dim + 15) / 16;
  if (s > 4 || rows > 8) {
    qs8_linear_acc_init__neondot(rows, blocks, head_dim, q, q_stride, keys, init, scores, stride);
    return;
  }
  const int groups = (head_dim + 3) / 4;
  const int32_t* in = init != nullptr ? init : kZeroInit;
  const int init_step = init != nullptr ? 16 : 0;
  if (head_dim % 16 == 0) {
    qk_tile_s<false>(s, rows, blocks, groups, q, q_stride, keys, in, init_step, scores, stride);
    return;
  }
  // Whole 16-byte query vectors, zero past head_dim (never read past a row).
  alignas(16) int8_t qbuf[8 * 64] = {};
  for (int r = 0; r < rows; ++r) {
    std::memcpy(qbuf + 64 * r, q + static_cast<ptrdiff_t>(r) * q_stride, static_cast<size_t>(head_dim));
  }
  qk_tile_s<true>(s, rows, blocks, groups, qbuf, 64, keys, in, init_step, scores, stride);
}

namespace {

// P.V of the tiled attention (attention_tile.cc): UDOT by lane on one K4N16
// block of unsigned values u = v + 128 (16 channels, K = keys), against the
// probability byte planes (p = 256 hi + lo, both unsigned). The hi plane is
// summed first, shifted left by 8, then the lo plane added into the same
// accumulators. Wrapping uint32; the caller subtracts (128 + zv) sum(p).
template <int L, int R>
__attribute__((always_inline)) inline void udot_group(uint32x4_t (&a)[R][4], const uint8x16_t (&xv)[R],
                                                      const uint8_t*& wg) {
  const uint8x16x4_t wv = ld1x4_post(wg);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdotq_laneq_u32(a[r][c], wv.val[c], xv[r], L);
  }
}

__attribute__((always_inline)) inline uint8x16_t ld1_post(const uint8_t*& p) {
  uint8x16_t v;
  __asm__("ldr %q0, [%1], #16" : "=w"(v), "+r"(p) : "m"(*reinterpret_cast<const uint8_t(*)[16]>(p)));
  return v;
}

// The loop ended by the value pointer, the planes' rows loaded with
// post-increment (as tile_k_loop).
template <int R>
__attribute__((always_inline)) inline void udot_plane(uint32x4_t (&a)[R][4], int groups, const uint8_t* x,
                                                      int stride, const uint8_t* vb) {
  const uint8_t* wg = vb;
  const uint8_t* xp[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xp[r] = x + static_cast<ptrdiff_t>(r) * stride;
  const uint8_t* const steps_end = vb + static_cast<ptrdiff_t>(groups / 4) * 256;
  while (wg != steps_end) {
    uint8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = ld1_post(xp[r]);
    udot_group<0, R>(a, xv, wg);
    udot_group<1, R>(a, xv, wg);
    udot_group<2, R>(a, xv, wg);
    udot_group<3, R>(a, xv, wg);
  }
  const int rest = groups % 4;
  if (rest != 0) {  // the planes are zero up to the next 16 keys; the values stop at `groups`
    uint8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = vld1q_u8(xp[r]);
    udot_group<0, R>(a, xv, wg);
    if (rest > 1) udot_group<1, R>(a, xv, wg);
    if (rest > 2) udot_group<2, R>(a, xv, wg);
  }
}

// The P.V outputs of one 16-channel block: requantize_s8(acc - corr[r]) with
// one (M, s) for the layer (the requantization of linear_tile).
struct PvOut {
  const uint32_t* corr;
  int32x4_t left, mult, neg_right;
  int16x8_t zp;
  int cnt;
  int8_t* out;
  int out_stride;
};

template <int R, bool kLeft>
__attribute__((optimize("no-schedule-insns"))) void pv_tile_udot(int groups, const uint8_t* p_hi,
                                                                 const uint8_t* p_lo, int stride,
                                                                 const uint8_t* vb, const PvOut& o) {
  uint32x4_t a[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdupq_n_u32(0);
  }
  udot_plane<R>(a, groups, p_hi, stride, vb);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vshlq_n_u32(a[r][c], 8);
  }
  udot_plane<R>(a, groups, p_lo, stride, vb);
  int32x4_t y[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const uint32x4_t corr = vdupq_n_u32(o.corr[r]);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) y[r][c] = vreinterpretq_s32_u32(vsubq_u32(a[r][c], corr));
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    if (kLeft) {
      requant_col<R, true>(y, c, o.left, o.mult, o.neg_right);
    } else {
      requant_col<R, false>(y, c, o.left, o.mult, o.neg_right);
    }
  }
  narrow_store<R>(y, o.zp, o.cnt, o.out, o.out_stride);
}

// Rows in register tiles of 5 (20 accumulators), the rest in one smaller tile.
template <bool kLeft>
void pv_tiles(int rows, int groups, const uint8_t* p_hi, const uint8_t* p_lo, int stride, const uint8_t* vb,
              PvOut o) {
  int r = 0;
  for (; r + 5 <= rows; r += 5) {
    pv_tile_udot<5, kLeft>(groups, p_hi + static_cast<ptrdiff_t>(r) * stride,
                           p_lo + static_cast<ptrdiff_t>(r) * stride, stride, vb, o);
    o.corr += 5;
    o.out += 5 * static_cast<ptrdiff_t>(o.out_stride);
  }
  const ptrdiff_t off = static_cast<ptrdiff_t>(r) * stride;
  switch (rows - r) {
    case 4: pv_tile_udot<4, kLeft>(groups, p_hi + off, p_lo + off, stride, vb, o); break;
    case 3: pv_tile_udot<3, kLeft>(groups, p_hi + off, p_lo + off, stride, vb, o); break;
    case 2: pv_tile_udot<2, kLeft>(groups, p_hi + off, p_lo + off, stride, vb, o); break;
    case 1: pv_tile_udot<1, kLeft>(groups, p_hi + off, p_lo + off, stride, vb, o); break;
    default: break;
  }
}

}  // namespace

// out[r * out_stride + c] = requantize_s8(sum_{j < keys} (256 p_hi[r][j] +
// p_lo[r][j]) * vb(c, j) - corr[r]) for c < cnt, rows r < rows (1..8), planes
// of row r at p_hi + r * stride (zero from keys up to the next multiple of
// 16), vb one K4N16 block of unsigned bytes. The uint32 sums wrap; the
// difference is the exact int32 P.V sum.
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo, int stride,
                               const uint8_t* vb, const uint32_t* corr, int32_t pv_mult, int32_t pv_shift,
                               int32_t out_zp, int cnt, int8_t* out, int out_stride) {
  const int groups = (keys + 3) / 4;
  const PvOut o{corr,
                vdupq_n_s32(pv_shift >= 0 ? pv_shift + 1 : 0),
                vdupq_n_s32(pv_mult),
                vdupq_n_s32(pv_shift >= 0 ? -1 : pv_shift),
                vdupq_n_s16(static_cast<int16_t>(out_zp)),
                cnt,
                out,
                out_stride};
  if (pv_shift >= 0) {
    pv_tiles<true>(rows, groups, p_hi, p_lo, stride, vb, o);
  } else {
    pv_tiles<false>(rows, groups, p_hi, p_lo, stride, vb, o);
  }
}

}  // namespace kernels
}  // namespace edgeattn
