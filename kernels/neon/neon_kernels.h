// NEON (Armv7-A / AArch64) and Armv8.2 dot-product (AArch64) kernels. Same
// contracts as ref.h; int8 results are bit-identical to the reference.
#ifndef EDGEATTN_KERNELS_NEON_NEON_KERNELS_H_
#define EDGEATTN_KERNELS_NEON_NEON_KERNELS_H_

#include <cstdint>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

// ----------------------------------------------------------------- neon ----
void qs8_linear__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                      int y_stride);
// qs8_linear with the residual added in its epilogue (ref.h, requant.h
// contract 5b); the accumulation and requantization are qs8_linear__neon's.
void qs8_linear_res__neon(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, const int32_t* bias, const int32_t* mult,
                          const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                          int y_stride);
void f32_linear__neon(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride);
void qs8_attention__neon(const QS8AttentionArgs& a);
void f32_attention__neon(const F32AttentionArgs& a);
void qs8_additive__neon(const QS8AdditiveArgs& a);
void f32_additive__neon(const F32AdditiveArgs& a);

// Row primitives (same contracts as the __ref ones in ref.h).
void qs8_qk_row__neon(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                      int32_t k_zp, int32_t* scores);
void qs8_softmax_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
uint32_t qs8_softmax_exp_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e);
void qs8_pv_row__neon(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                      int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);

// out[c] = sum_j p[j] v[j][c] (float, no allocation).
void f32_pv_row__neon(int n, int v_dim, const float* p, const float* v, int v_stride, float* out);

// The transformer-block primitives (block.cc; contracts 4 and 6 of requant.h).
void qs8_layernorm__neon(const QS8LayerNormArgs& a);
void qs8_lut__neon(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                   int y_stride);

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
// The int16 pair condition of qs8_linear_acc_pairs__neon, in two halves:
// row x has x[k] = x[k + 4] = -128 for some k % 8 < 4, k < len (len a
// multiple of 8); packed weights (blocks of in_features) have w = -128 at
// both k and k + 4 for some channel, k < 8 * (in_features / 8).
bool qs8_row_has_min_pair__neon(const int8_t* x, int len);
bool qs8_weights_have_min_pair__neon(const int8_t* w, int blocks, int in_features);

// P.V of `rows` probability rows sharing n keys (pv_group: 16 value columns
// per pass, smlal by lane). Requires v_dim % 16 == 0 and every p < 32768;
// psum[r] = sum of row r's probabilities.
void qs8_pv_rows__neon(int rows, int n, int v_dim, const uint16_t* const* probs,
                       const uint32_t* psum, const int8_t* v, int v_stride, int32_t v_zp,
                       int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* const* out);

// Tiled attention (attention_tile.cc, attention_tile.h): returns false, and
// does nothing, when a.tile_scratch is null or a.q_len < kQs8AttnTileMinRows
// (the caller then runs the shared row driver, qs8_attention_rows).
bool qs8_attention_tiled__neon(const QS8AttentionArgs& a);
// Its stages (attention_tile.h; kernels/lists/qs8_attention_tile.inc).
const Qs8AttnTileStages& qs8_attention_tile_stages__neon();

#if defined(__aarch64__)
// -------------------------------------------------------------- neondot ----
// dotprod.cc (compiled with -march=armv8.2-a+dotprod): only call after
// cpu_supports(KernelPath::kNeonDot).
void qs8_linear_acc_init__neondot(int rows, int blocks, int in_features, const int8_t* x,
                                  int x_stride, const int8_t* w, const int32_t* init, int32_t* acc,
                                  int acc_stride);
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores);
// P.V tile of the tiled attention, requantized: out[r * out_stride + c] =
// requantize_s8(sum_{j < keys} (256 p_hi[r][j] + p_lo[r][j]) * vb(c, j) -
// corr[r], pv_mult, pv_shift, out_zp) for c < cnt (sums wrapping uint32),
// rows r < rows (1..8) with planes at p_hi / p_lo + r * stride, zero from
// keys up to the next multiple of 16; vb is one K4N16 block (16 channels) of
// unsigned bytes.
void qs8_attn_pv_tile__neondot(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo, int stride,
                               const uint8_t* vb, const uint32_t* corr, int32_t pv_mult, int32_t pv_shift,
                               int32_t out_zp, int cnt, int8_t* out, int out_stride);
// Q.K^T of the tiled attention: the linear's accumulation with init
// (Qs8LinearAccInitFn) for rows <= 8, the query rows held in registers across
// the key blocks when head_dim <= 64.
void qs8_attn_qk_tile__neondot(int rows, int blocks, int head_dim, const int8_t* q, int q_stride,
                               const int8_t* keys, const int32_t* init, int32_t* scores, int stride);
// The int8 linear (qs8_linear contract) with the requantization fused into
// the SDOT register tiles.
void qs8_linear_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                            int per_channel, int32_t y_zp, int8_t* y, int y_stride);
// The same register tiles with the residual epilogue (qs8_linear_res
// contract; QS8Residual's fields passed one by one, and C =
// residual_offset(term) formed by the caller: dotprod.cc includes no project
// header).
void qs8_linear_res_rq__neondot(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                                const int8_t* w, const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                int per_channel, const int8_t* res, int res_stride, int32_t res_mult,
                                int32_t res_shift, int32_t res_a_zp, int32_t res_y_zp, int32_t res_offset,
                                int8_t* y, int y_stride);
bool qs8_attention_tiled__neondot(const QS8AttentionArgs& a);
const Qs8AttnTileStages& qs8_attention_tile_stages__neondot();
// neondot.cc (baseline flags): the table entries built on the above.
void qs8_linear__neondot(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                         int y_stride);
void qs8_linear_res__neondot(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, const int32_t* bias, const int32_t* mult,
                             const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                             int y_stride);
void qs8_attention__neondot(const QS8AttentionArgs& a);
#endif

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_NEON_NEON_KERNELS_H_
