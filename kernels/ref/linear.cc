// Reference linear (fully connected) kernels: one dot product per output
// channel. Float weights are row-major [out][in]; int8 weights are in the
// packed K4N16 layout of packed_weights.h, read here by index.
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void f32_linear__ref(int rows, int out_features, int in_features, const float* x, int x_stride,
                     const float* w, int w_stride, const float* bias, float* y, int y_stride) {
  for (int m = 0; m < rows; ++m) {
    const float* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    for (int n = 0; n < out_features; ++n) {
      const float* wr = w + static_cast<ptrdiff_t>(n) * w_stride;
      float acc = bias != nullptr ? bias[n] : 0.0f;
      for (int k = 0; k < in_features; ++k) acc += wr[k] * xr[k];
      y[static_cast<ptrdiff_t>(m) * y_stride + n] = acc;
    }
  }
}

// The int32 accumulator is exact: |w| <= 127, |x| <= 128, so in_features up
// to 2^17 cannot overflow. The input zero point lives in the folded bias.
//
// The packed K4N16 weights (packed_weights.h) are read in storage order: for a
// block of 16 output channels, each group of 4 inputs holds one 4-byte word per
// channel, so the inner loops are "16 channels x 4 inputs" over contiguous
// bytes (indexing W[n][k] one element at a time through packed_offset() made
// this kernel 4-10x slower). Channels past out_features are not accumulated;
// the last partial group of inputs comes from a zero-padded copy of the row's
// tail, so no input is read past in_features.
namespace {

// The sums of qs8_linear__ref; `store(m, n, acc)` writes output (m, n).
template <class Store>
void qs8_linear_sums(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const Store& store) {
  const int full_groups = in_features / kPackK;
  const int groups = packed_k(in_features) / kPackK;
  const size_t block_bytes = packed_block_bytes(in_features);
  for (int m = 0; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    int8_t tail[kPackK] = {0, 0, 0, 0};
    for (int k = kPackK * full_groups; k < in_features; ++k) tail[k - kPackK * full_groups] = xr[k];
    for (int n0 = 0; n0 < out_features; n0 += kPackN) {
      const int count = out_features - n0 < kPackN ? out_features - n0 : kPackN;
      const int8_t* wb = w + static_cast<ptrdiff_t>(n0 / kPackN) * static_cast<ptrdiff_t>(block_bytes);
      int32_t acc[kPackN];
      for (int c = 0; c < count; ++c) acc[c] = bias[n0 + c];
      for (int g = 0; g < groups; ++g) {
        // The group's 4 inputs in locals, one channel's word after another:
        // at -Os (firmware) GCC neither unrolls nor hoists the inner loop
        // otherwise (12 instructions per multiply-add on Cortex-M4).
        const int8_t* xg = g < full_groups ? xr + kPackK * g : tail;
        const int32_t x0 = xg[0], x1 = xg[1], x2 = xg[2], x3 = xg[3];
        const int8_t* wg = wb + static_cast<ptrdiff_t>(g) * (kPackN * kPackK);
        for (int c = 0; c < count; ++c) {
          const int8_t* wc = wg + kPackK * c;
          acc[c] += wc[0] * x0 + wc[1] * x1 + wc[2] * x2 + wc[3] * x3;
        }
      }
      for (int c = 0; c < count; ++c) store(m, n0 + c, acc[c]);
    }
  }
}

}  // namespace

void qs8_linear__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  qs8_linear_sums(rows, out_features, in_features, x, x_stride, w, bias, [&](int m, int n, int32_t acc) {
    const int ch = per_channel ? n : 0;
    y[static_cast<ptrdiff_t>(m) * y_stride + n] = requantize_s8(acc, mult[ch], shift[ch], y_zp);
  });
}

void qs8_linear_res__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                         const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                         int y_stride) {
  const int32_t offset = residual_offset(res.term);
  qs8_linear_sums(rows, out_features, in_features, x, x_stride, w, bias, [&](int m, int n, int32_t acc) {
    const int ch = per_channel ? n : 0;
    const int32_t a = res.res[static_cast<ptrdiff_t>(m) * res.res_stride + n];
    y[static_cast<ptrdiff_t>(m) * y_stride + n] = residual_epilogue_s8(acc, mult[ch], shift[ch], a, res.term, offset);
  });
}

void qs8_linear_res16__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                           int y_stride) {
  qs8_linear_sums(rows, out_features, in_features, x, x_stride, w, bias, [&](int m, int n, int32_t acc) {
    const int ch = per_channel ? n : 0;
    const int32_t a = res.res[static_cast<ptrdiff_t>(m) * res.res_stride + n];
    y[static_cast<ptrdiff_t>(m) * y_stride + n] = residual_epilogue_s16(acc, mult[ch], shift[ch], a, res.term);
  });
}

}  // namespace kernels
}  // namespace edgeattn
