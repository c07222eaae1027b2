// Cortex-M int8 kernels (bit-exact with the reference). Declared only where
// the build's CPU has the feature.
#ifndef EDGEATTN_KERNELS_CORTEX_M_KERNELS_H_
#define EDGEATTN_KERNELS_CORTEX_M_KERNELS_H_

#include <cstdint>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

// EA_CM_DSP_ONLY: the DSP extension without Helium (M4, M7, M33), where the
// cmsis-dsp path is the firmware's path. Only there does it get its own
// softmax and the score row with the query unpacked once; on Helium builds
// (M55) the cmsis-dsp table is a fallback and keeps the reference softmax,
// the plain score row and the reference projection (kernels/lists/
// qs8_linear.inc), for flash.
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#define EA_CM_DSP_ONLY 1
#else
#define EA_CM_DSP_ONLY 0
#endif

namespace edgeattn {
namespace kernels {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
// requant.h's prob_normalizer(sum), sum >= 1, with 32-bit divisions
// (softmax_cm.cc; the DSP and Helium softmax rows use it).
ProbNormalizer prob_normalizer_cm(uint32_t sum);
// w: packed K4N16 (packed_weights.h). SMLAD: two 16-bit MACs per instruction
// on sign-extended int8 pairs; one weight word = one channel's 4 inputs. Two
// rows x two channels per pass (linear_dsp.cc).
void qs8_linear__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride);
// qs8_linear__dsp with the residual in its epilogue (ref.h qs8_linear_res__ref).
void qs8_linear_res__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                         const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                         int y_stride);
// One row of scores with SMLAD on zero-point-corrected int16 pairs.
void qs8_qk_row__dsp(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                     int32_t k_zp, int32_t* scores);
// One row's weighted sum (qs8_pv_row__ref's contract): SMLAD on the
// probabilities of two keys against one channel's two values.
void qs8_pv_row__dsp(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride, int32_t v_zp,
                     int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);
#if EA_CM_DSP_ONLY
// The integer softmax (qs8_softmax_row__ref's and qs8_softmax_exp_row__ref's
// contracts): the exponent one score at a time, the normalization on pairs
// of probabilities with SMLAWB / SMLAWT (softmax_cm.cc).
uint32_t qs8_softmax_exp_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e);
void qs8_softmax_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
#endif
void qs8_attention__dsp(const QS8AttentionArgs& a);
// One query row's additive scores (qs8_additive_score_row__ref's contract)
// with requant_cm.h's requantizations; the additive layer from it and
// qs8_pv_row__dsp.
void qs8_additive_score_row__dsp(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);
void qs8_additive__dsp(const QS8AdditiveArgs& a);
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
// w: packed K4N16. A word gather brings one channel's 16 weights (4 groups)
// into input order for VMLADAVA.S8 (16 int8 MACs), predicated tail. w not
// 4-byte aligned (MVE word loads would fault) falls back to the reference.
void qs8_linear__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                        const int8_t* w, const int32_t* bias, const int32_t* mult,
                        const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                        int y_stride);
// qs8_linear__helium with the residual in its epilogue (ref.h
// qs8_linear_res__ref); unaligned w, and a multiplier below 2^30 at a shift
// >= -1 (never from quantize_multiplier), take the reference.
void qs8_linear_res__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                            const int8_t* w, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                            int y_stride);
// One row of scores with VMLADAVA.S16 on zero-point-corrected int16 lanes.
void qs8_qk_row__helium(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                        int32_t k_zp, int32_t* scores);
// One row's weighted sum (qs8_pv_row__ref's contract): per key, VMLA of its
// probability into 4-channel int32 lanes of widened values.
void qs8_pv_row__helium(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride, int32_t v_zp,
                        int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);
// The integer softmax: the exponent in 4 predicated 32-bit lanes, the
// normalization in 8 16-bit lanes (softmax_cm.cc).
uint32_t qs8_softmax_exp_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e);
void qs8_softmax_row__helium(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
void qs8_attention__helium(const QS8AttentionArgs& a);
// One query row's additive scores (qs8_additive_score_row__ref's contract),
// 4 features per vector, the tanh table read by a byte gather; rows with
// coverage take qs8_additive_score_row__dsp. The additive layer from it and
// qs8_pv_row__helium.
void qs8_additive_score_row__helium(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);
void qs8_additive__helium(const QS8AdditiveArgs& a);
#endif

// The transformer blocks' element-wise kernels (block_cm.cc): LayerNorm
// (qs8_layernorm__ref's contract; SMLAD row sums, 32-bit step 4 with
// SMMLA) and the activation table (qs8_lut__ref's, four bytes per word) on
// DSP-only builds; both on Helium (the table by a byte gather).
#if EA_CM_DSP_ONLY
void qs8_layernorm__dsp(const QS8LayerNormArgs& a);
void qs8_lut__dsp(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y, int y_stride);
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
// layernorm_row_scale(d, sum, sum_sq, eps_term) in 32-bit steps: the square
// root's top by Newton steps with UDIV, inv by long division in 16-bit
// digits (no libgcc 64-bit division).
LayerNormRowScale layernorm_row_scale_helium(int d, int32_t sum, int32_t sum_sq, int64_t eps_term);
void qs8_layernorm__helium(const QS8LayerNormArgs& a);
void qs8_lut__helium(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                     int y_stride);
#endif

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CORTEX_M_KERNELS_H_
