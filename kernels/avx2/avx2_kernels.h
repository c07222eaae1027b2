// AVX2+FMA, AVX-VNNI and AVX-512 VNNI kernels for x86-64. Same contracts as ref.h; int8
// results are bit-identical to the reference. Only call after
// cpu_supports(KernelPath::kAvx2 / kAvxVnni / kAvx512Vnni).
#ifndef EDGEATTN_KERNELS_AVX2_AVX2_KERNELS_H_
#define EDGEATTN_KERNELS_AVX2_AVX2_KERNELS_H_

#include <cstdint>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// ----------------------------------------------------------------- avx2 ----
void qs8_linear__avx2(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                      const int8_t* w, const int32_t* bias, const int32_t* mult,
                      const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride);
void qs8_linear_res__avx2(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, const int32_t* bias, const int32_t* mult,
                          const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                          int y_stride);
void f32_linear__avx2(int rows, int out_features, int in_features, const float* x, int x_stride,
                      const float* w, int w_stride, const float* bias, float* y, int y_stride);
void qs8_attention__avx2(const QS8AttentionArgs& a);
void f32_attention__avx2(const F32AttentionArgs& a);
void qs8_additive__avx2(const QS8AdditiveArgs& a);
void f32_additive__avx2(const F32AdditiveArgs& a);

// Row primitives (same contracts as the __ref ones in ref.h).
void qs8_qk_row__avx2(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                      int32_t k_zp, int32_t* scores);
void qs8_softmax_row__avx2(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
uint32_t qs8_softmax_exp_row__avx2(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e);
// The same with the layer's step-2 parameters derived once by the caller.
uint32_t qs8_softmax_exp_row_with__avx2(int n, const int32_t* scores, const SoftmaxExpParams& params, uint16_t* e);
void qs8_pv_row__avx2(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                      int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);
void f32_pv_row__avx2(int n, int v_dim, const float* p, const float* v, int v_stride, float* out);

// scores0/1[j] = Q.K scores of query rows q0/q1 against keys 0..n-1 (the
// two-row step of the attention driver; same contract as qs8_qk_row).
using Qs8QkRows2Fn = void (*)(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                              const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                              int32_t* scores1);
void qs8_qk_rows2__avx2(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                        const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                        int32_t* scores1);
// The x86 attention below the tiles: query rows two at a time (avx2, VNNI or
// AVX-512 steps; each with the integers of the reference) over the first two
// rows of the declared tile scratch (AVX2 has no tile kernel; the VNNI tiles
// start at kQs8AttnTileMinRows rows), the last odd row and every call without
// tile scratch (such as a decoder step) through the shared row driver with
// `rows`.
struct Qs8AttentionSteps {
  Qs8QkRows2Fn qk_rows2;
  Qs8AttentionRowKernels rows;
};
void qs8_attention_with__avx2(const Qs8AttentionSteps& steps, const QS8AttentionArgs& a);

// acc[r][16 b + c] = sum_k w[16 b + c][k] * x_r[k] for the packed K4N16
// weight blocks b < blocks starting at w, rows r < rows (1 to
// kLinearAccMaxRows), x_r = x + r * x_stride (read only up to in_features),
// acc_r = acc + r * acc_stride. Wrapping int32, exact when the sum fits.
constexpr int kLinearAccMaxRows = 4;
using Qs8LinearAccFn = void (*)(int rows, int blocks, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, int32_t* acc, int acc_stride);
void qs8_linear_acc__avx2(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                          const int8_t* w, int32_t* acc, int acc_stride);
void qs8_linear_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                           const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                           const int32_t* mult, const int32_t* shift, int per_channel,
                           int32_t y_zp, int8_t* y, int y_stride);
// The same driver with the residual epilogue of qs8_linear_res (contract 5b).
void qs8_linear_res_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                               const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                               const int32_t* mult, const int32_t* shift, int per_channel,
                               const QS8Residual& res, int8_t* y, int y_stride);

// The transformer-block primitives (block.cc; contracts 4 and 6 of requant.h).
void qs8_layernorm__avx2(const QS8LayerNormArgs& a);
void qs8_lut__avx2(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                   int y_stride);

// -------------------------------------------------------------- avxvnni ----
// avxvnni.cc (compiled with -mavxvnni): only call after cpu_supports(kAvxVnni).
void qs8_linear_acc__avxvnni(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                             const int8_t* w, int32_t* acc, int acc_stride);
void qs8_linear__avxvnni(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias,
                         const int32_t* mult, const int32_t* shift, int per_channel, int32_t y_zp,
                         int8_t* y, int y_stride);
void qs8_linear_res__avxvnni(int rows, int out_features, int in_features, const int8_t* x,
                             int x_stride, const int8_t* w, const int32_t* bias,
                             const int32_t* mult, const int32_t* shift, int per_channel,
                             const QS8Residual& res, int8_t* y, int y_stride);
void qs8_qk_rows2__avxvnni(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                        const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                        int32_t* scores1);
void qs8_attention__avxvnni(const QS8AttentionArgs& a);
// attention_tile_avxvnni.cc: the ymm version of the tiled attention (4+ query
// rows with tile scratch; else qs8_attention__avxvnni).
void qs8_attention_tiled__avxvnni(const QS8AttentionArgs& a);
const Qs8AttnTileStages& qs8_attention_tile_stages__avxvnni();

// ----------------------------------------------------------- avx512vnni ----
// linear_avx512vnni.cc (zmm GEMM microkernel), compiled with -mavx512f
// -mavx512bw -mavx512vl -mavx512vnni: only call after cpu_supports(kAvx512Vnni).
void qs8_linear__avx512vnni(int rows, int out_features, int in_features, const int8_t* x,
                         int x_stride, const int8_t* w, const int32_t* bias,
                         const int32_t* mult, const int32_t* shift, int per_channel, int32_t y_zp,
                         int8_t* y, int y_stride);
void qs8_linear_res__avx512vnni(int rows, int out_features, int in_features, const int8_t* x,
                                int x_stride, const int8_t* w, const int32_t* bias,
                                const int32_t* mult, const int32_t* shift, int per_channel,
                                const QS8Residual& res, int8_t* y, int y_stride);
// attention_avx512vnni.cc (zmm row primitives and the attention kernel).
void qs8_qk_row__avx512vnni(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                            int k_stride, int32_t k_zp, int32_t* scores);
void qs8_qk_rows2_zmm__avx512vnni(int n, int dim, const int8_t* q0, const int8_t* q1,
                                  int32_t q_zp, const int8_t* k, int k_stride, int32_t k_zp,
                                  int32_t* scores0, int32_t* scores1);
void qs8_softmax_row__avx512vnni(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                 uint16_t* probs);
// Steps 1-4 of that softmax (step 5 is avx512::normalize_probs_x16).
uint32_t qs8_softmax_exp_row__avx512vnni(int n, const int32_t* scores, int32_t mult, int32_t shift,
                                         uint16_t* e);
// The same with the layer's step-2 parameters derived once by the caller,
// for `rows` rows of scores `stride` apart (e alike), row r over
// [0, limits[r]); sums[r] = 1 for a row without keys. One call per tile, so
// the constants are set up once.
void qs8_softmax_exp_rows__avx512vnni(int rows, const int* limits, const int32_t* scores, int stride,
                                      const SoftmaxExpParams& params, uint16_t* e, uint32_t* sums);
// The kernel below the tiles (qs8_attention_with__avx2 with zmm steps).
void qs8_attention__avx512vnni(const QS8AttentionArgs& a);
// attention_tile_avx512vnni.cc: Q.K^T and P.V as tiles over keys and values
// packed once per head into a.tile_scratch; the row kernel when a.tile_scratch
// is null or there are fewer than kQs8AttnTileMinRows query rows.
void qs8_attention_tiled__avx512vnni(const QS8AttentionArgs& a);
const Qs8AttnTileStages& qs8_attention_tile_stages__avx512vnni();

// The transformer-block primitives on zmm (block_avx512.cc, AVX-512 F/BW/VL).
void qs8_layernorm__avx512vnni(const QS8LayerNormArgs& a);
// The table: qs8_lut__avx512bw by VPSHUFB (AVX-512 BW), qs8_lut__avx512vbmi by
// VPERMI2B (lut_avx512vbmi.cc, AVX512_VBMI), and qs8_lut__avx512vnni, the
// path's entry, runs the VBMI one where cpu_has_avx512vbmi() and the BW one
// elsewhere (AVX512-VNNI CPUs without VBMI exist: Cascade Lake).
void qs8_lut__avx512bw(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                       int y_stride);
void qs8_lut__avx512vbmi(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                         int y_stride);
void qs8_lut__avx512vnni(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                         int y_stride);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_AVX2_KERNELS_H_
