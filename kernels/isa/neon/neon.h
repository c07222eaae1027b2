// What the NEON variants (kernels/<family>/*-neon.cc, and the neondot ones
// built on them) share beyond the lists' prototypes (microkernels.h): the
// int8 linear's building blocks (isa/neon/linear_neon.cc), the tile's
// multi-row P.V and the tiled attention entry points.
#ifndef EDGEATTN_KERNELS_ISA_NEON_NEON_H_
#define EDGEATTN_KERNELS_ISA_NEON_NEON_H_

#include <cstdint>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

// out[c] = sum_j p[j] v[j][c] (float, no allocation; f32-attention-neon.cc).
void f32_pv_row__neon(int n, int v_dim, const float* p, const float* v, int v_stride, float* out);

// Building blocks parameterised by the int8 dot-product flavour.
//
// acc[r * acc_stride + 16 b + c] = sum_k w[16 b + c][k] * x_r[k] for the
// packed K4N16 weight blocks b < blocks starting at w (packed_weights.h),
// rows r < rows (1 to kLinearAccMaxRows), x_r = x + r * x_stride (read only
// below in_features). Wrapping int32, exact when the sum fits. The rows of a
// register tile share every weight load.
constexpr int kLinearAccMaxRows = 10;  // two 5-row SDOT tiles, five 2-row NEON pair tiles
using Qs8LinearAccFn = void (*)(int rows, int blocks, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, int32_t* acc, int acc_stride);
void qs8_linear_acc__neon(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, int32_t* acc, int acc_stride);
// Same sums with products of inputs k and k + 4 added in int16 first: exact
// only if no channel has w[c][k] = w[c][k+4] = -128 where some row has
// x[k] = x[k+4] = -128 (k % 8 < 4, k + 4 < 8 * (in_features / 8)).
void qs8_linear_acc_pairs__neon(int rows, int blocks, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, int32_t* acc, int acc_stride);
// Same sums plus init[16 b + c] (per channel of the packed blocks; the
// tiled attention's key term).
using Qs8LinearAccInitFn = void (*)(int rows, int blocks, int in_features, const int8_t* x,
                                    int x_stride, const int8_t* w, const int32_t* init,
                                    int32_t* acc, int acc_stride);
void qs8_linear_acc_init__neon(int rows, int blocks, int in_features, const int8_t* x,
                               int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                               int acc_stride);
void qs8_linear_acc_pairs_init__neon(int rows, int blocks, int in_features, const int8_t* x,
                                     int x_stride, const int8_t* w, const int32_t* init,
                                     int32_t* acc, int acc_stride);
// The int8 linear driver (row passes, channel chunks, requantization) with a
// chosen accumulation (NEON or SDOT) and an optional int16-pair one, used
// where the driver's checks show it exact.
void qs8_linear_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                           int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                           int y_stride);
// The same driver with the residual epilogue of qs8_linear_res (contract 5b).
void qs8_linear_res_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                               int out_features, int in_features, const int8_t* x, int x_stride,
                               const int8_t* w, const int32_t* bias, const int32_t* mult,
                               const int32_t* shift, int per_channel, const QS8Residual& res,
                               int8_t* y, int y_stride);
// The same driver with contract 5c's int16 residual and output (qs8_linear_res16).
void qs8_linear_res16_with__neon(Qs8LinearAccFn acc_fn, Qs8LinearAccFn pairs_fn, int rows,
                                 int out_features, int in_features, const int8_t* x, int x_stride,
                                 const int8_t* w, const int32_t* bias, const int32_t* mult,
                                 const int32_t* shift, int per_channel, const QS16Residual& res,
                                 int16_t* y, int y_stride);
// The int16 pair condition of qs8_linear_acc_pairs__neon, in two halves:
// row x has x[k] = x[k + 4] = -128 for some k % 8 < 4, k < len (len a
// multiple of 8); packed weights (blocks of in_features) have w = -128 at
// both k and k + 4 for some channel, k < 8 * (in_features / 8).
bool qs8_row_has_min_pair__neon(const int8_t* x, int len);
bool qs8_weights_have_min_pair__neon(const int8_t* w, int blocks, int in_features);

// qs8-attention-tile/qs8-pv-rows-neon.cc: P.V of `rows` probability rows sharing n keys (pv_group: 16 value columns
// per pass, smlal by lane). Requires v_dim % 16 == 0 and every p < 32768;
// psum[r] = sum of row r's probabilities.
void qs8_pv_rows__neon(int rows, int n, int v_dim, const uint16_t* const* probs,
                       const uint32_t* psum, const int8_t* v, int v_stride, int32_t v_zp,
                       int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* const* out);

// Tiled attention (qs8-attention-tile/, attention_tile.h): returns false, and
// does nothing, when a.tile_scratch is null or a.q_len < kQs8AttnTileMinRows
// (the caller then runs the shared row driver, qs8_attention_rows).
bool qs8_attention_tiled__neon(const QS8AttentionArgs& a);
#if defined(__aarch64__)
bool qs8_attention_tiled__neondot(const QS8AttentionArgs& a);
#endif

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_NEON_NEON_H_
