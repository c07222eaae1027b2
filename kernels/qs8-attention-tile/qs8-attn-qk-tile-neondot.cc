// The Q.K^T stage of the neondot tiled attention (qs8_attention_tile_stages__neondot):
// SDOT with the query rows held in registers, or the linear's accumulation.
// Compiled with -march=armv8.2-a+dotprod (isa/neon/kernels.cmake) and reached
// only after HWCAP_ASIMDDP was seen (cpu_features_arm.cc). Deliberately
// self-contained: it includes no project header with inline functions
// (only isa/neondot/, which has none outside its own SDOT code), so no
// vague-linkage helper compiled with dotprod instructions can be shared
// with, and picked by the linker for, the baseline NEON path.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/neondot/sdot.h"
#include "isa/neondot/sdot_tiles.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

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

}  // namespace kernels
}  // namespace edgeattn
