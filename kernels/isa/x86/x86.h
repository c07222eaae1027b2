// What the x86 variants (kernels/<family>/*-avx2.cc, *-avxvnni.cc,
// *-avx512*.cc) share beyond the lists' prototypes (microkernels.h): the
// building blocks one variant calls in another's file. Same contracts as
// ref.h; only call after cpu_supports() of the path in the name.
#ifndef EDGEATTN_KERNELS_ISA_X86_X86_H_
#define EDGEATTN_KERNELS_ISA_X86_X86_H_

#include <cstdint>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// ----------------------------------------------------------------- avx2 ----
// qs8_softmax_exp_row__avx2 with the layer's step-2 parameters derived once by
// the caller (qs8-softmax-exp-row-avx2.cc).
uint32_t qs8_softmax_exp_row_with__avx2(int n, const int32_t* scores, const SoftmaxExpParams& params, uint16_t* e);
// out[c] = sum_j p[j] v[j][c] (float; f32-attention-avx2.cc).
void f32_pv_row__avx2(int n, int v_dim, const float* p, const float* v, int v_stride, float* out);

// isa/x86/attention_avx2.cc: scores0/1[j] = Q.K scores of query rows q0/q1 against keys 0..n-1 (the
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

// isa/x86/linear_avx2.cc: acc[r][16 b + c] = sum_k w[16 b + c][k] * x_r[k] for the packed K4N16
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
// The same driver with contract 5c's int16 residual and output (qs8_linear_res16).
void qs8_linear_res16_with__avx2(Qs8LinearAccFn acc_fn, int rows, int out_features, int in_features,
                                 const int8_t* x, int x_stride, const int8_t* w, const int32_t* bias,
                                 const int32_t* mult, const int32_t* shift, int per_channel,
                                 const QS16Residual& res, int16_t* y, int y_stride);

// -------------------------------------------------------------- avxvnni ----
// Compiled with -mavxvnni: only call after cpu_supports(kAvxVnni).
// isa/x86/linear_avxvnni.cc: qs8_linear_acc__avx2's sums with VPDPBUSD.
void qs8_linear_acc__avxvnni(int rows, int blocks, int in_features, const int8_t* x, int x_stride,
                             const int8_t* w, int32_t* acc, int acc_stride);
// qs8-attention/qs8-attention-avxvnni.cc: the two-row Q.K step with VPDPBUSD
// and the kernel below the tiles (qs8_attention_with__avx2 with it).
void qs8_qk_rows2__avxvnni(int n, int dim, const int8_t* q0, const int8_t* q1, int32_t q_zp,
                        const int8_t* k, int k_stride, int32_t k_zp, int32_t* scores0,
                        int32_t* scores1);
void qs8_attention__avxvnni(const QS8AttentionArgs& a);

// ----------------------------------------------------------- avx512vnni ----
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni: only call after
// cpu_supports(kAvx512Vnni).
// qs8-qk-row/qs8-qk-row-avx512vnni.cc: the two-row Q.K step on zmm.
void qs8_qk_rows2_zmm__avx512vnni(int n, int dim, const int8_t* q0, const int8_t* q1,
                                  int32_t q_zp, const int8_t* k, int k_stride, int32_t k_zp,
                                  int32_t* scores0, int32_t* scores1);
// qs8-softmax-exp-row/qs8-softmax-exp-row-avx512vnni.cc: steps 1-4 of the
// softmax with the layer's step-2 parameters derived once by the caller,
// for `rows` rows of scores `stride` apart (e alike), row r over
// [0, limits[r]); sums[r] = 1 for a row without keys. One call per tile, so
// the constants are set up once.
void qs8_softmax_exp_rows__avx512vnni(int rows, const int* limits, const int32_t* scores, int stride,
                                      const SoftmaxExpParams& params, uint16_t* e, uint32_t* sums);
// qs8-attention/qs8-attention-avx512vnni.cc: the kernel below the tiles
// (qs8_attention_with__avx2 with zmm steps).
void qs8_attention__avx512vnni(const QS8AttentionArgs& a);

// qs8-lut/qs8-lut-avx512vbmi.cc (AVX512_VBMI): the table by VPERMI2B; called
// by qs8_lut__avx512vnni where cpu_has_avx512vbmi() (AVX512-VNNI CPUs
// without VBMI exist: Cascade Lake), qs8_lut__avx512bw elsewhere.
void qs8_lut__avx512vbmi(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                         int y_stride);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_X86_X86_H_
