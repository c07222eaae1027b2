// NEON linear kernels (Armv7-A and AArch64). int8: four output channels per
// pass share one load of the activation block; int32 accumulation via
// vmull_s8 + vpadal; vector requantization (requantize_x4) matches
// requantize_s8() exactly. The dot-product flavour is a parameter so the
// Armv8.2 SDOT kernel (dotprod.cc) reuses the tail handling and requantization.
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "neon_common.h"
#include "neon_kernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

// (The pre-RA scheduler would hoist all products ahead of the accumulations
// and spill accumulators; keep the source order.)
template <int R, bool kNarrow>
__attribute__((optimize("no-schedule-insns"))) void linear_acc_rows(int n_out, int kblocks, const int8_t* const* x, const int8_t* const* xt,
                 const int8_t* w, int w_stride, int32_t* const* acc) {
  const int nb = xt != nullptr ? kblocks + 1 : kblocks;
  int n = 0;
  for (; n + 4 <= n_out; n += 4) {
    const int8_t* w0 = w + static_cast<ptrdiff_t>(n) * w_stride;
    int32x4_t a[R][4];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int c = 0; c < 4; ++c) a[r][c] = vdupq_n_s32(0);
    }
    const int8_t* wp[4];
    const int8_t* xp[R];
#pragma GCC unroll 8
    for (int c = 0; c < 4; ++c) wp[c] = w0 + static_cast<ptrdiff_t>(c) * w_stride;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) xp[r] = x[r];
    for (int b = 0; b < nb; ++b) {
      if (b == kblocks) {
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) xp[r] = xt[r];
      }
      int8x16_t wv[4];
#pragma GCC unroll 8
      for (int c = 0; c < 4; ++c) {
        wv[c] = vld1q_s8(wp[c]);
        wp[c] += 16;
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int8x16_t xv = vld1q_s8(xp[r]);
        xp[r] += 16;
#pragma GCC unroll 8
        for (int c = 0; c < 4; ++c) a[r][c] = dot16_s8_t<kNarrow>(a[r][c], xv, wv[c]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) vst1q_s32(acc[r] + n, hsum4_s32(a[r][0], a[r][1], a[r][2], a[r][3]));
  }
  for (; n < n_out; ++n) {
    const int8_t* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
    int32x4_t a[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) a[r] = vdupq_n_s32(0);
    for (int b = 0; b < nb; ++b) {
      const bool t = b == kblocks;
      const int8x16_t wv = vld1q_s8(wr + 16 * b);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) a[r] = dot16_s8_t<kNarrow>(a[r], vld1q_s8(t ? xt[r] : x[r] + 16 * b), wv);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][n] = hsum_s32(a[r]);
  }
}

}  // namespace

void qs8_linear_acc__neon(int rows, int n_out, int kblocks, const int8_t* const* x,
                          const int8_t* const* xt, const int8_t* w, int w_stride,
                          int32_t* const* acc, bool narrow16) {
  switch ((rows << 1) | (narrow16 ? 1 : 0)) {
    case 11: linear_acc_rows<5, true>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 10: linear_acc_rows<5, false>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 9: linear_acc_rows<4, true>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 8: linear_acc_rows<4, false>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 7: linear_acc_rows<3, true>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 6: linear_acc_rows<3, false>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 5: linear_acc_rows<2, true>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 4: linear_acc_rows<2, false>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    case 3: linear_acc_rows<1, true>(n_out, kblocks, x, xt, w, w_stride, acc); break;
    default: linear_acc_rows<1, false>(n_out, kblocks, x, xt, w, w_stride, acc); break;
  }
}

// Weights are read in whole 16-byte blocks up to round_up(in_features, 16)
// when the row stride allows it (canonical layout: zero padded to a multiple
// of 16); the activation tail is copied into a zeroed 16-byte block, so the
// padding lanes contribute w * 0 = 0 whatever the padding holds. With a
// shorter stride the tail is summed in scalar code. Activations are never read
// past in_features. Rows are processed in pairs (an odd last row is paired
// with itself).
void qs8_linear_with__neon(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                           const int8_t* x, int x_stride, const int8_t* w, int w_stride,
                           const int32_t* bias, const int32_t* mult, const int32_t* shift,
                           int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  constexpr int kChunk = 64;
  const int kblocks = in_features / 16;
  const int rem = in_features % 16;
  const bool vec_tail = rem != 0 && w_stride >= 16 * (kblocks + 1);
  const int scalar_from = vec_tail ? in_features : 16 * kblocks;
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(y_zp));
  const int32x4_t mult0 = vdupq_n_s32(mult[0]);
  const int64x2_t neg_n0 = neg_n_of(shift[0]);
  const int32x4_t k31 = vdupq_n_s32(31);
  // int16 pair accumulation is exact unless a -128 lane pair (has_min_pair_s8)
  // occurs in both a weight row and an activation row: checked once per call
  // for the weights (padding block included), else per pass of rows.
  const int nb = vec_tail ? kblocks + 1 : kblocks;
  bool w_has_min = false;
  for (int n = 0; n < out_features && !w_has_min; ++n) {
    w_has_min = has_min_pair_s8(w + static_cast<ptrdiff_t>(n) * w_stride, nb);
  }
  constexpr int kRows = 6;
  int32_t acc_buf[kRows][kChunk];
  int32_t* acc[kRows] = {acc_buf[0], acc_buf[1], acc_buf[2], acc_buf[3], acc_buf[4], acc_buf[5]};
  // Rows per pass: 5 for the NEON kernel (register bound), 6 for SDOT.
  const int max_rows = acc_fn == qs8_linear_acc__neon ? 5 : kRows;
  for (int m = 0; m < rows; m += max_rows) {
    const int nr = rows - m >= max_rows ? max_rows : rows - m;
    const int8_t* xr[kRows];
    int8_t xt_buf[kRows][16] = {};
    const int8_t* xt[kRows];
    bool x_has_min = false;
    for (int t = 0; t < nr; ++t) {
      xr[t] = x + static_cast<ptrdiff_t>(m + t) * x_stride;
      xt[t] = xt_buf[t];
      if (vec_tail) std::memcpy(xt_buf[t], xr[t] + 16 * kblocks, static_cast<size_t>(rem));
      if (w_has_min) {
        x_has_min = x_has_min || has_min_pair_s8(xr[t], kblocks) ||
                    (vec_tail && has_min_pair_s8(xt_buf[t], 1));
      }
    }
    const bool narrow16 = !w_has_min || !x_has_min;
    for (int n0 = 0; n0 < out_features; n0 += kChunk) {
      const int cnt = out_features - n0 < kChunk ? out_features - n0 : kChunk;
      const int8_t* wc = w + static_cast<ptrdiff_t>(n0) * w_stride;
      acc_fn(nr, cnt, kblocks, xr, vec_tail ? xt : nullptr, wc, w_stride, acc, narrow16);
      for (int t = 0; t < nr; ++t) {
        const int8_t* xrt = xr[t];
        int32_t* at = acc[t];
        if (scalar_from < in_features) {
          for (int i = 0; i < cnt; ++i) {
            const int8_t* wr = wc + static_cast<ptrdiff_t>(i) * w_stride;
            int32_t s = 0;
            for (int k = scalar_from; k < in_features; ++k) {
              s += static_cast<int32_t>(wr[k]) * xrt[k];
            }
            at[i] += s;
          }
        }
      }
      // Requantization, 8 channels at a time; the channel parameters are
      // loaded once for the rows of the pass.
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
                      const int8_t* w, int w_stride, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  qs8_linear_with__neon(qs8_linear_acc__neon, rows, out_features, in_features, x, x_stride, w,
                        w_stride, bias, mult, shift, per_channel, y_zp, y, y_stride);
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
