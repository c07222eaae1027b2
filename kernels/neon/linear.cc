// NEON linear kernels (Armv7-A and AArch64). int8 weights are in the packed
// K4N16 layout (packed_weights.h): a 64-byte group holds 16 channels x 4
// inputs as four 16-byte vectors of 4 channels x 4 inputs. Baseline NEON has
// no int8 dot product, so each such vector is multiplied (vmull_s8, int16
// products) against the row's 4 inputs repeated, and the products are added
// pairwise into int32 (vpadal): every int32 lane holds one of two partial
// sums of one channel, added once after the K loop. Requantization is exact
// and vectorised (requantize_x4). The accumulation is a parameter so the
// Armv8.2 SDOT kernel (dotprod.cc) reuses the driver and requantization.
#include <cstring>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "neon_common.h"
#include "neon_kernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

// x[0..4) repeated in all four 32-bit lanes (unaligned 4-byte load).
inline int8x16_t x4_rep(const int8_t* p) {
  int32_t word;
  std::memcpy(&word, p, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(word));
}

// One 16-byte weight vector (channels 4j..4j+3 x 4 inputs) against the
// repeated inputs: lo gets {c0: w0x0+w1x1, w2x2+w3x3, c1: ..., ...} for the
// first two channels, hi the same for the last two. Each vmull_s8 product
// fits int16 (at most 128 * 128), and vpadal widens before adding, so no int16
// sum can overflow.
inline void mac4x4(int32x4_t& lo, int32x4_t& hi, int8x16_t w, int8x16_t x) {
  lo = vpadalq_s16(lo, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
#if defined(__aarch64__)
  hi = vpadalq_s16(hi, vmull_high_s8(w, x));
#else
  hi = vpadalq_s16(hi, vmull_s8(vget_high_s8(w), vget_low_s8(x)));
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

// R rows x 4V channels (V weight vectors of a group, starting at wb inside
// the block's groups) into acc[r * acc_stride + 0 .. 4V). tail[r] holds row
// r's last, partial group (in_features % 4 != 0) as a zero-padded word.
// (The pre-RA scheduler would hoist all products ahead of the accumulations
// and spill accumulators; keep the source order.)
template <int R, int V>
__attribute__((optimize("no-schedule-insns"))) void tile_neon(int in_features, const int8_t* x,
                                                              int x_stride, const int8_t* tail,
                                                              const int8_t* wb, int32_t* acc,
                                                              int acc_stride) {
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
  for (int g = 0; g < groups; ++g, wg += 64) {
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
    for (int j = 0; j < V; ++j) vst1q_s32(ar + 4 * j, pair_sums(a[r][2 * j], a[r][2 * j + 1]));
  }
}

// Register tiles: each row of a tile needs 2V int32 accumulators, plus V
// weight vectors and one input vector per row. AArch64 (32 q registers): 3
// rows x 16 channels (24 + 4 + 3). Armv7 (16 q registers): 3 rows x 8
// channels (12 + 2 + 3 d registers), the block in two halves.
#if defined(__aarch64__)
constexpr int kTileRows = 3;
constexpr int kTileVecs = 4;
#else
constexpr int kTileRows = 3;
constexpr int kTileVecs = 2;
#endif

template <int R>
void rows_neon(int in_features, const int8_t* x, int x_stride, const int8_t* tail,
               const int8_t* wb, int32_t* acc, int acc_stride) {
#pragma GCC unroll 4
  for (int h = 0; h < 4 / kTileVecs; ++h) {
    tile_neon<R, kTileVecs>(in_features, x, x_stride, tail, wb + 16 * kTileVecs * h,
                            acc + 4 * kTileVecs * h, acc_stride);
  }
}

}  // namespace

void qs8_linear_acc__neon(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, int32_t* acc, int acc_stride) {
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
    int r = 0;
    for (; r + kTileRows <= rows; r += kTileRows) {
      rows_neon<kTileRows>(in_features, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride,
                           tail + 4 * r, wb, ab + static_cast<ptrdiff_t>(r) * acc_stride,
                           acc_stride);
    }
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int32_t* ar = ab + static_cast<ptrdiff_t>(r) * acc_stride;
    switch (rows - r) {
      case 2: rows_neon<2>(in_features, xr, x_stride, tail + 4 * r, wb, ar, acc_stride); break;
      case 1: rows_neon<1>(in_features, xr, x_stride, tail + 4 * r, wb, ar, acc_stride); break;
      default: break;
    }
  }
}

// Rows in passes of kLinearAccMaxRows, channels in chunks of 64 (4 packed
// blocks): acc_fn fills a rows x 64 int32 tile (whole blocks: channels past
// out_features are computed from the padding and never stored), then each
// row is requantized 8 lanes at a time, the channel parameters loaded once for
// the rows of the pass, and the last < 8 channels in scalar code.
void qs8_linear_with__neon(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                           const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                           const int32_t* mult, const int32_t* shift, int per_channel,
                           int32_t y_zp, int8_t* y, int y_stride) {
  constexpr int kChunk = 64;
  constexpr int kRows = kLinearAccMaxRows;
  const size_t block_bytes = packed_block_bytes(in_features);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(y_zp));
  const int32x4_t mult0 = vdupq_n_s32(mult[0]);
  const int64x2_t neg_n0 = neg_n_of(shift[0]);
  const int32x4_t k31 = vdupq_n_s32(31);
  int32_t acc[kRows][kChunk];
  for (int m = 0; m < rows; m += kRows) {
    const int nr = rows - m >= kRows ? kRows : rows - m;
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n0 = 0; n0 < out_features; n0 += kChunk) {
      const int cnt = out_features - n0 < kChunk ? out_features - n0 : kChunk;
      const int blocks = (cnt + kPackN - 1) / kPackN;
      acc_fn(nr, blocks, in_features, xr, x_stride,
             w + static_cast<ptrdiff_t>(n0 / kPackN) * static_cast<ptrdiff_t>(block_bytes),
             &acc[0][0], kChunk);
      int i = 0;
      for (; i + 8 <= cnt; i += 8) {
        const int n = n0 + i;
        const int32x4_t b0 = vld1q_s32(bias + n);
        const int32x4_t b1 = vld1q_s32(bias + n + 4);
        int32x4_t m0 = mult0, m1 = mult0;
        int64x2_t n00 = neg_n0, n01 = neg_n0, n10 = neg_n0, n11 = neg_n0;
        if (per_channel) {
          const int32x4_t sh0 = vsubq_s32(vld1q_s32(shift + n), k31);
          const int32x4_t sh1 = vsubq_s32(vld1q_s32(shift + n + 4), k31);
          m0 = vld1q_s32(mult + n);
          m1 = vld1q_s32(mult + n + 4);
          n00 = vmovl_s32(vget_low_s32(sh0));
          n01 = vmovl_s32(vget_high_s32(sh0));
          n10 = vmovl_s32(vget_low_s32(sh1));
          n11 = vmovl_s32(vget_high_s32(sh1));
        }
        for (int t = 0; t < nr; ++t) {
          const int32x4_t y0 = requantize_x4(vaddq_s32(vld1q_s32(acc[t] + i), b0), m0, n00, n01);
          const int32x4_t y1 = requantize_x4(vaddq_s32(vld1q_s32(acc[t] + i + 4), b1), m1, n10, n11);
          vst1_s8(y + static_cast<ptrdiff_t>(m + t) * y_stride + n, add_zp_sat8(y0, y1, zp));
        }
      }
      for (; i < cnt; ++i) {
        const int n = n0 + i;
        const int c = per_channel ? n : 0;
        for (int t = 0; t < nr; ++t) {
          y[static_cast<ptrdiff_t>(m + t) * y_stride + n] =
              requantize_s8(acc[t][i] + bias[n], mult[c], shift[c], y_zp);
        }
      }
    }
  }
}

void qs8_linear__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                      int y_stride) {
  qs8_linear_with__neon(qs8_linear_acc__neon, rows, out_features, in_features, x, x_stride, w,
                        bias, mult, shift, per_channel, y_zp, y, y_stride);
}

// Float: four output channels per pass, four partial sums per channel (FMA on
// AArch64, multiply-add on Armv7), scalar tail. Summation order differs from
// the reference; see simd_test.cc for the tolerance.
void f32_linear__neon(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  const int k4 = in_features & ~3;
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    float* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    int n = 0;
    for (; n + 4 <= out_features; n += 4) {
      const float* w0 = w + static_cast<ptrdiff_t>(n) * w_stride;
      const float* w1 = w0 + w_stride;
      const float* w2 = w1 + w_stride;
      const float* w3 = w2 + w_stride;
      float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
      for (int k = 0; k < k4; k += 4) {
        const float32x4_t xv = vld1q_f32(xr + k);
        a0 = fma_f32(a0, xv, vld1q_f32(w0 + k));
        a1 = fma_f32(a1, xv, vld1q_f32(w1 + k));
        a2 = fma_f32(a2, xv, vld1q_f32(w2 + k));
        a3 = fma_f32(a3, xv, vld1q_f32(w3 + k));
      }
      float r[4];
      vst1q_f32(r, hsum4_f32(a0, a1, a2, a3));
      for (int k = k4; k < in_features; ++k) {
        r[0] += w0[k] * xr[k];
        r[1] += w1[k] * xr[k];
        r[2] += w2[k] * xr[k];
        r[3] += w3[k] * xr[k];
      }
      for (int i = 0; i < 4; ++i) yr[n + i] = (bias != nullptr ? bias[n + i] : 0.0f) + r[i];
    }
    for (; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      float32x4_t a = vdupq_n_f32(0.0f);
      for (int k = 0; k < k4; k += 4) a = fma_f32(a, vld1q_f32(xr + k), vld1q_f32(wr + k));
      float r = hsum_f32(a);
      for (int k = k4; k < in_features; ++k) r += wr[k] * xr[k];
      yr[n] = (bias != nullptr ? bias[n] : 0.0f) + r;
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
