// The SDOT register tiles of the int8 linear on packed K4N16 weights, shared
// by the SDOT files (kernels/*/*-neondot.cc compiled with dotprod). Only
// for files compiled with -march=armv8.2-a+dotprod; internal linkage
// (anonymous namespace, always-inline templates), so nothing compiled
// here reaches the baseline path.
#ifndef EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_TILES_H_
#define EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_TILES_H_

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

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
constexpr int kDotMaxRows = 10;  // kLinearAccMaxRows (isa/neon/neon.h)
alignas(16) const int32_t kZeroInit[16] = {};

}  // namespace

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_NEONDOT_SDOT_TILES_H_
