// AVX2 linear kernels. int8: two activation rows x four output channels per
// pass; int8 -> int16 widening loads (vpmovsxbw) and vpmaddwd into int32 (a
// pair of products is at most 2 * 128 * 128 = 32768, exact in int32); exact
// vector requantization (avx2_common.h). The dot-product flavour is a
// parameter so the AVX-VNNI file reuses tails and requantization.
#include <cstring>

#include "avx2_common.h"
#include "avx2_kernels.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

namespace {

// R rows x C output channels per pass: per 16-column block R + C widening
// loads and R * C vpmaddwd. The zero-padded tail block (if any) is the same
// step against xtail.
template <int R, int C>
__attribute__((always_inline)) inline void acc_rc(int kblocks, const int8_t* const* xr,
                                                  const int8_t* xtail, const int8_t* w, int w_stride,
                                                  int32_t* acc, int acc_stride) {
  // Register tile: R x C accumulators of 8 int32 partial sums each; the row
  // and channel pointers are locals so the loop keeps them in registers.
  const int8_t* xp[R];
  const int8_t* wp[C];
  for (int r = 0; r < R; ++r) xp[r] = xr[r];
  for (int c = 0; c < C; ++c) wp[c] = w + static_cast<ptrdiff_t>(c) * w_stride;
  __m256i a[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) a[r][c] = _mm256_setzero_si256();
#pragma GCC unroll 2  // two blocks per iteration: ~6 % faster on Zen 3 (fewer loop-carried moves)
  for (int b = 0; b < kblocks; ++b) {
    __m256i xv[R];
    for (int r = 0; r < R; ++r) xv[r] = load16_s16(xp[r] + 16 * b);
    for (int c = 0; c < C; ++c) {
      const __m256i wv = load16_s16(wp[c] + 16 * b);
      for (int r = 0; r < R; ++r) a[r][c] = _mm256_add_epi32(a[r][c], _mm256_madd_epi16(xv[r], wv));
    }
  }
  if (xtail != nullptr) {  // the zero-padded last block
    __m256i xv[R];
    for (int r = 0; r < R; ++r) xv[r] = load16_s16(xtail + 16 * r);
    for (int c = 0; c < C; ++c) {
      const __m256i wv = load16_s16(wp[c] + 16 * kblocks);
      for (int r = 0; r < R; ++r) a[r][c] = _mm256_add_epi32(a[r][c], _mm256_madd_epi16(xv[r], wv));
    }
  }
  for (int r = 0; r < R; ++r) {
    int32_t* ar = acc + static_cast<ptrdiff_t>(r) * acc_stride;
    if (C == 4) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(ar), hsum4_s32(a[r][0], a[r][C > 1 ? 1 : 0],
                                                                 a[r][C > 2 ? 2 : 0], a[r][C > 3 ? 3 : 0]));
    } else {
      for (int c = 0; c < C; ++c) ar[c] = hsum_s32(a[r][c]);
    }
  }
}

template <int R, int C>
void acc_block_avx2(int n_out, int kblocks, const int8_t* x, int x_stride, const int8_t* xtail,
                    const int8_t* w, int w_stride, int32_t* acc, int acc_stride) {
  const int8_t* xr[R];
  for (int r = 0; r < R; ++r) xr[r] = x + static_cast<ptrdiff_t>(r) * x_stride;
  int n = 0;
  for (; n + C <= n_out; n += C) {
    acc_rc<R, C>(kblocks, xr, xtail, w + static_cast<ptrdiff_t>(n) * w_stride, w_stride, acc + n, acc_stride);
  }
  for (; n < n_out; ++n) {
    acc_rc<R, 1>(kblocks, xr, xtail, w + static_cast<ptrdiff_t>(n) * w_stride, w_stride, acc + n, acc_stride);
  }
}

}  // namespace

void qs8_linear_acc__avx2(int rows, int n_out, int kblocks, const int8_t* x, int x_stride,
                          const int8_t* xtail, const int8_t* w, int w_stride, int32_t* acc,
                          int acc_stride) {
  // Rows in pairs, 2 rows x 4 channels (8 accumulators): on Zen 3 this beat
  // 4x2, 3x4 and 4x3 tiles (kernels_bench qs8_linear, 86 vs 70-83 GOPS at
  // 128x128x128) once the tile was inlined into its channel loop.
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    acc_block_avx2<2, 4>(n_out, kblocks, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride,
                         xtail != nullptr ? xtail + 16 * r : nullptr, w, w_stride,
                         acc + static_cast<ptrdiff_t>(r) * acc_stride, acc_stride);
  }
  if (r < rows) {
    acc_block_avx2<1, 4>(n_out, kblocks, x + static_cast<ptrdiff_t>(r) * x_stride, x_stride,
                         xtail != nullptr ? xtail + 16 * r : nullptr, w, w_stride,
                         acc + static_cast<ptrdiff_t>(r) * acc_stride, acc_stride);
  }
}

// Weights are read in whole 16-byte blocks up to round_up(in_features, 16)
// when the row stride allows it (canonical layout: zero padded to a multiple
// of 16); the activation tail is copied into a zeroed 16-byte block, so the
// padding lanes contribute w * 0 = 0 whatever the padding holds. With a
// shorter stride the tail is summed in scalar code. Activations are never read
// past in_features.
void qs8_linear_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                           const int8_t* x, int x_stride, const int8_t* w, int w_stride,
                           const int32_t* bias, const int32_t* mult, const int32_t* shift,
                           int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  constexpr int kChunk = 64;
  constexpr int kRowBlock = 4;
  const int kblocks = in_features / 16;
  const int rem = in_features % 16;
  const bool vec_tail = rem != 0 && w_stride >= 16 * (kblocks + 1);
  const int scalar_from = vec_tail ? in_features : 16 * kblocks;
  const __m128i zp16 = _mm_set1_epi16(static_cast<int16_t>(y_zp));
  const Rq8 rq0 = rq8_uniform(mult[0], shift[0]);
  alignas(32) int32_t acc[kRowBlock][kChunk];
  for (int m = 0; m < rows; m += kRowBlock) {
    const int nr = rows - m >= kRowBlock ? kRowBlock : rows - m;
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    alignas(16) int8_t xt[kRowBlock][16] = {};
    if (vec_tail) {
      for (int r = 0; r < nr; ++r) {
        std::memcpy(xt[r], xr + static_cast<ptrdiff_t>(r) * x_stride + 16 * kblocks,
                    static_cast<size_t>(rem));
      }
    }
    for (int n0 = 0; n0 < out_features; n0 += kChunk) {
      const int cnt = out_features - n0 < kChunk ? out_features - n0 : kChunk;
      const int8_t* wc = w + static_cast<ptrdiff_t>(n0) * w_stride;
      acc_fn(nr, cnt, kblocks, xr, x_stride, vec_tail ? &xt[0][0] : nullptr, wc, w_stride,
             &acc[0][0], kChunk);
      for (int r = 0; r < nr; ++r) {
        const int8_t* xrr = xr + static_cast<ptrdiff_t>(r) * x_stride;
        int8_t* yr = y + static_cast<ptrdiff_t>(m + r) * y_stride;
        int32_t* ar = acc[r];
        if (scalar_from < in_features) {
          for (int i = 0; i < cnt; ++i) {
            const int8_t* wr = wc + static_cast<ptrdiff_t>(i) * w_stride;
            int32_t s = 0;
            for (int k = scalar_from; k < in_features; ++k) s += static_cast<int32_t>(wr[k]) * xrr[k];
            ar[i] += s;
          }
        }
        int i = 0;
        for (; i + 8 <= cnt; i += 8) {
          const int nn = n0 + i;
          const __m256i s = _mm256_add_epi32(
              _mm256_load_si256(reinterpret_cast<const __m256i*>(ar + i)),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + nn)));
          const __m256i yq = per_channel ? requantize_x8(s, rq8_per_lane(mult + nn, shift + nn))
                                         : requantize_x8(s, rq0);
          store8(yr + nn, add_zp_sat8(yq, zp16));
        }
        for (; i < cnt; ++i) {
          const int nn = n0 + i;
          const int c = per_channel ? nn : 0;
          yr[nn] = requantize_s8(ar[i] + bias[nn], mult[c], shift[c], y_zp);
        }
      }
    }
  }
}

void qs8_linear__avx2(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, int w_stride, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  qs8_linear_with__avx2(qs8_linear_acc__avx2, rows, out_features, in_features, x, x_stride, w,
                        w_stride, bias, mult, shift, per_channel, y_zp, y, y_stride);
}

// Float: four output channels per pass, 8-wide FMA partial sums,
// scalar tail. Summation order differs from the reference; see simd_test.cc.
void f32_linear__avx2(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  const int k8 = in_features & ~7;
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    float* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    int n = 0;
    for (; n + 4 <= out_features; n += 4) {
      const float* w0 = w + static_cast<ptrdiff_t>(n) * w_stride;
      const float* w1 = w0 + w_stride;
      const float* w2 = w1 + w_stride;
      const float* w3 = w2 + w_stride;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int k = 0; k < k8; k += 8) {
        const __m256 xv = _mm256_loadu_ps(xr + k);
        a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + k), a0);
        a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + k), a1);
        a2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w2 + k), a2);
        a3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w3 + k), a3);
      }
      alignas(16) float r[4];
      _mm_store_ps(r, hsum4_f32(a0, a1, a2, a3));
      for (int k = k8; k < in_features; ++k) {
        r[0] += w0[k] * xr[k];
        r[1] += w1[k] * xr[k];
        r[2] += w2[k] * xr[k];
        r[3] += w3[k] * xr[k];
      }
      for (int i = 0; i < 4; ++i) yr[n + i] = (bias != nullptr ? bias[n + i] : 0.0f) + r[i];
    }
    for (; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      __m256 a = _mm256_setzero_ps();
      for (int k = 0; k < k8; k += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(xr + k), _mm256_loadu_ps(wr + k), a);
      float r = hsum_f32(a);
      for (int k = k8; k < in_features; ++k) r += wr[k] * xr[k];
      yr[n] = (bias != nullptr ? bias[n] : 0.0f) + r;
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
