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

void qs8_linear_acc__neondot(int rows, int blocks, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, int32_t* acc, int acc_stride);
void qs8_linear_acc_init__neondot(int rows, int blocks, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                                  int acc_stride);
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores);
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo,
                               int stride, const uint8_t* vb, uint32_t* acc);

namespace {

// Linear on the packed K4N16 weights (packed_weights.h; the layout is
// restated here because this file includes no project header): a 16-channel
// block is 16 * round_up(K, 4) bytes, a group of 4 inputs 64 bytes, four
// vectors of 4 channels x 4 inputs. SDOT by element,
// vdotq_laneq_s32(acc, w, x16, l), adds to each channel lane of acc the dot
// product of its 4 weight bytes with inputs 4l..4l+3 of x16: one instruction
// per 4 channels x 4 inputs, no horizontal reduction. A register tile of R
// rows x 16 channels holds 4R accumulators; one 16-byte input load per row
// covers four groups.
template <int L, int R>
inline void dot_group(int32x4_t (&a)[R][4], const int8x16_t (&xv)[R], const int8_t* wg) {
  int8x16_t wv[4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) wv[c] = vld1q_s8(wg + 16 * c);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdotq_laneq_s32(a[r][c], wv[c], xv[r], L);
  }
}

// tail[16 r ..] holds row r's inputs past 16 * (in_features / 16), zero
// padded; only the groups that exist in the block are read. (The pre-RA
// scheduler would hoist all 16 weight loads of a step and spill accumulators;
// keep the source order.)
template <int R>
__attribute__((optimize("no-schedule-insns"))) void tile_dot(int in_features, const int8_t* x,
                                                             int x_stride, const int8_t* tail,
                                                             const int8_t* wb, const int32_t* init,
                                                             int32_t* acc, int acc_stride) {
  const int steps = in_features / 16;
  int32x4_t a[R][4];
  int32x4_t a0[4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) a0[c] = init != nullptr ? vld1q_s32(init + 4 * c) : vdupq_n_s32(0);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = a0[c];
  }
  const int8_t* xp[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) xp[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  const int8_t* wg = wb;
  for (int s = 0; s < steps; ++s, wg += 256) {
    int8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      xv[r] = vld1q_s8(xp[r]);
      xp[r] += 16;
    }
    dot_group<0, R>(a, xv, wg);
    dot_group<1, R>(a, xv, wg + 64);
    dot_group<2, R>(a, xv, wg + 128);
    dot_group<3, R>(a, xv, wg + 192);
  }
  const int rem = in_features - 16 * steps;
  if (rem != 0) {
    int8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = vld1q_s8(tail + 16 * r);
    dot_group<0, R>(a, xv, wg);
    if (rem > 4) dot_group<1, R>(a, xv, wg + 64);
    if (rem > 8) dot_group<2, R>(a, xv, wg + 128);
    if (rem > 12) dot_group<3, R>(a, xv, wg + 192);
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) vst1q_s32(ar + 4 * c, a[r][c]);
  }
}

// 5 rows x 16 channels: 20 accumulators, 5 input and 4 weight vectors (6
// rows spill; 4 rows load the weights for fewer rows: 5 + 3 is ~7 % fewer
// instructions than 4 + 4 for the 8-row attention tiles).
constexpr int kDotTileRows = 5;
constexpr int kDotMaxRows = 10;  // kLinearAccMaxRows (neon_kernels.h)

}  // namespace

// init (may be null): per-channel starting values (16 per block), so that
// the tiled attention's key term costs nothing.
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
    const int32_t* ib = init != nullptr ? init + 16 * b : nullptr;
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

void qs8_linear_acc__neondot(int rows, int blocks, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, int32_t* acc, int acc_stride) {
  qs8_linear_acc_init__neondot(rows, blocks, in_features, x, x_stride, w, nullptr, acc, acc_stride);
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

// P.V of the tiled attention (attention_tile.cc): UDOT by lane on one K4N16
// block of unsigned values u = v + 128 (16 channels, K = keys), against the
// probability byte planes (p = 256 hi + lo, both unsigned). The hi plane is
// summed first, shifted left by 8, then the lo plane added into the same
// accumulators. Wrapping uint32; the caller subtracts (128 + zv) sum(p).
template <int L, int R>
inline void udot_group(uint32x4_t (&a)[R][4], const uint8x16_t (&xv)[R], const uint8_t* wg) {
  uint8x16_t wv[4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) wv[c] = vld1q_u8(wg + 16 * c);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) a[r][c] = vdotq_laneq_u32(a[r][c], wv[c], xv[r], L);
  }
}

template <int R>
inline void udot_plane(uint32x4_t (&a)[R][4], int groups, const uint8_t* x, int stride,
                       const uint8_t* vb) {
  const uint8_t* wg = vb;
  int g = 0;
  for (; g + 4 <= groups; g += 4, wg += 256) {
    uint8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = vld1q_u8(x + static_cast<ptrdiff_t>(r) * stride + 4 * g);
    udot_group<0, R>(a, xv, wg);
    udot_group<1, R>(a, xv, wg + 64);
    udot_group<2, R>(a, xv, wg + 128);
    udot_group<3, R>(a, xv, wg + 192);
  }
  if (g < groups) {  // the planes are zero up to the next 16 keys; the values stop at `groups`
    uint8x16_t xv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xv[r] = vld1q_u8(x + static_cast<ptrdiff_t>(r) * stride + 4 * g);
    udot_group<0, R>(a, xv, wg);
    if (groups - g > 1) udot_group<1, R>(a, xv, wg + 64);
    if (groups - g > 2) udot_group<2, R>(a, xv, wg + 128);
  }
}

template <int R>
__attribute__((optimize("no-schedule-insns"))) void pv_tile_udot(int groups, const uint8_t* p_hi,
                                                                 const uint8_t* p_lo, int stride,
                                                                 const uint8_t* vb, uint32_t* acc) {
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
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) vst1q_u32(acc + 16 * r + 4 * c, a[r][c]);
  }
}

}  // namespace

// acc[16 r + c] = sum_{j < keys} (256 p_hi[r][j] + p_lo[r][j]) * vb(c, j) for
// rows r < rows (1..8), planes of row r at p_hi + r * stride (zero from keys
// up to the next multiple of 16), vb one K4N16 block of unsigned bytes.
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo,
                               int stride, const uint8_t* vb, uint32_t* acc) {
  const int groups = (keys + 3) / 4;
  int r = 0;
  for (; r + 5 <= rows; r += 5) {
    pv_tile_udot<5>(groups, p_hi + static_cast<ptrdiff_t>(r) * stride,
                    p_lo + static_cast<ptrdiff_t>(r) * stride, stride, vb, acc + 16 * r);
  }
  const ptrdiff_t o = static_cast<ptrdiff_t>(r) * stride;
  switch (rows - r) {
    case 4: pv_tile_udot<4>(groups, p_hi + o, p_lo + o, stride, vb, acc + 16 * r); break;
    case 3: pv_tile_udot<3>(groups, p_hi + o, p_lo + o, stride, vb, acc + 16 * r); break;
    case 2: pv_tile_udot<2>(groups, p_hi + o, p_lo + o, stride, vb, acc + 16 * r); break;
    case 1: pv_tile_udot<1>(groups, p_hi + o, p_lo + o, stride, vb, acc + 16 * r); break;
    default: break;
  }
}

}  // namespace kernels
}  // namespace edgeattn
