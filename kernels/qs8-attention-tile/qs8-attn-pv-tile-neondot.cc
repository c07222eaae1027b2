// The P.V stage of the neondot tiled attention (qs8_attention_tile_stages__neondot):
// UDOT on the probability byte planes, requantized.
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
#include "isa/neondot/linear_rq_sdot.h"  // requant_col, narrow_store

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

namespace {

// P.V of the tiled attention (isa/neon/attention_tile_neon.h): UDOT by lane on one K4N16
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
