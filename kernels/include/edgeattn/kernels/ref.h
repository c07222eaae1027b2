// Portable reference kernels. They define the exact int8 results that every
// SIMD kernel must reproduce (see requant.h) and the float32 results that SIMD
// float kernels must match within a stated tolerance.
//
// Conventions for every kernel:
//  - matrices are row-major with an explicit row stride in elements;
//  - kernels never allocate; row scratch is passed in by the caller;
//  - masks are prefixes: a query row sees keys [0, limit) where
//    limit = min(kv_valid_len, causal ? row + 1 + causal_offset : kv_len),
//    and a row with limit == 0 outputs zero (the zero point for int8) and all-zero weights;
//  - kernels trust their arguments (the runtime validated them at load/run time).
#ifndef EDGEATTN_KERNELS_REF_H_
#define EDGEATTN_KERNELS_REF_H_

#include <cstddef>
#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// ---------------------------------------------------------------- linear ----

// y[m][n] = bias[n] + sum_k w[n][k] * x[m][k]      (bias may be null)
void f32_linear__ref(int rows, int out_features, int in_features, const float* x, int x_stride,
                     const float* w, int w_stride, const float* bias, float* y, int y_stride);

// y[m][n] = sat8(requantize(bias[n] + sum_k w[n][k] * x[m][k], mult[n], shift[n]) + y_zp)
// w is in the packed K4N16 layout (packed_weights.h): packed_weight_bytes(out, in) bytes.
// bias is the folded int32 bias (input zero point already subtracted, see schema).
// per_channel == 0: mult[0]/shift[0] apply to every n.
void qs8_linear__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride);

// qs8_linear with a residual added in its epilogue (requant.h contract 5b):
// y[m][n] = residual_epilogue_s8(bias[n] + sum_k w[n][k] x[m][k], mult[n],
// shift[n], res[m][n], term, residual_offset(term)). The block kinds'
// output projections and second FFN linears. res overlaps neither x nor y.
struct QS8Residual {
  const int8_t* res;
  int res_stride;
  ResidualTerm term;
};
void qs8_linear_res__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                         const int8_t* w, const int32_t* bias, const int32_t* mult,
                         const int32_t* shift, int per_channel, const QS8Residual& res, int8_t* y,
                         int y_stride);

// qs8_linear with an int16 residual added in its epilogue and an int16
// output (requant.h contract 5c, the 16-bit residual stream):
// y[m][n] = residual_epilogue_s16(bias[n] + sum_k w[n][k] x[m][k], mult[n],
// shift[n], res[m][n], term). res overlaps neither x nor y.
struct QS16Residual {
  const int16_t* res;
  int res_stride;
  Residual16Term term;
};
void qs8_linear_res16__ref(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                           const int8_t* w, const int32_t* bias, const int32_t* mult,
                           const int32_t* shift, int per_channel, const QS16Residual& res, int16_t* y,
                           int y_stride);

// ------------------------------------------------------- attention core ----

// Which keys a query row may see; see the conventions above.
inline int attention_row_limit(int row, int kv_len, int kv_valid_len, bool causal,
                               int causal_offset) {
  int limit = kv_valid_len < kv_len ? kv_valid_len : kv_len;
  if (causal) {
    const int c = row + 1 + causal_offset;
    if (c < limit) limit = c < 0 ? 0 : c;
  }
  return limit;
}

struct F32AttentionArgs {
  int q_len, kv_len, head_dim, v_dim;
  const float* q; int q_stride;
  const float* k; int k_stride;
  const float* v; int v_stride;
  float scale;                 // softmax(scale * q.k)
  bool causal; int causal_offset; int kv_valid_len;
  float* out; int out_stride;  // [q_len][v_dim]
  float* weights; int weights_stride;  // optional [q_len][kv_len]
  float* scratch;              // kv_len floats
};
void f32_attention__ref(const F32AttentionArgs& a);

struct QS8AttentionArgs {
  int q_len, kv_len, head_dim, v_dim;
  const int8_t* q; int q_stride; int32_t q_zp;
  const int8_t* k; int k_stride; int32_t k_zp;
  const int8_t* v; int v_stride; int32_t v_zp;
  int32_t score_mult, score_shift;  // SoftmaxQuant.score_*
  int32_t pv_mult, pv_shift;        // SoftmaxQuant.pv_*
  int32_t out_zp;
  bool causal; int causal_offset; int kv_valid_len;
  int8_t* out; int out_stride;      // [q_len][v_dim]
  uint16_t* weights; int weights_stride;  // optional [q_len][kv_len], Q15
  int32_t* scratch;                 // kv_len int32
  uint16_t* prob_scratch;           // kv_len uint16
  // Optional (may be null): qs8_attention_tile_bytes(kv_len, head_dim, v_dim)
  // bytes for the tiled kernels (attention_tile.h); the others ignore it.
  void* tile_scratch;
};
void qs8_attention__ref(const QS8AttentionArgs& a);

// ------------------------------------------------- additive (Bahdanau) ----

// score[q][j] = v . tanh(qp[q] + kp[j]) where qp = W_q q and kp = W_k k + b were
// computed by the linear kernels; then softmax and the weighted sum of values.
//
// Coverage (optional, coverage != null): score[q][j] = v . tanh(qp[q] + kp[j] +
// w_c c_j) where c_j is the sum of the attention weights of key j over the
// earlier rows of the sequence. The query rows of one call are successive
// decoding steps: row r reads c, then adds its own weights to c (keys at or
// beyond the row's limit add nothing), so the caller's c after the call is
// the coverage for the next step.
struct F32AdditiveArgs {
  int q_len, kv_len, attn_dim, v_dim;
  const float* qp; int qp_stride;
  const float* kp; int kp_stride;
  const float* v_w;                    // [attn_dim]
  const float* values; int values_stride;
  int kv_valid_len;
  float* out; int out_stride;
  float* weights; int weights_stride;  // optional
  float* scratch;                      // kv_len floats
  float* coverage;                     // optional, [kv_len], read and updated
  const float* cov_w;                  // [attn_dim] when coverage is set
};
void f32_additive__ref(const F32AdditiveArgs& a);

struct QS8AdditiveArgs {
  int q_len, kv_len, attn_dim, v_dim;
  const int8_t* qp; int qp_stride; int32_t qp_zp;
  const int8_t* kp; int kp_stride; int32_t kp_zp;   // same scale as qp
  int32_t pre_mult, pre_shift, pre_zp;  // (qp - qp_zp) + (kp - kp_zp) -> int8 table index
  const int8_t* tanh_table;             // 256 entries, index + 128
  const int8_t* v_w;                    // [attn_dim], symmetric
  int32_t score_mult, score_shift, pv_mult, pv_shift;
  const int8_t* values; int values_stride; int32_t values_zp;
  int32_t out_zp;
  int kv_valid_len;
  int8_t* out; int out_stride;
  uint16_t* weights; int weights_stride;
  int32_t* scratch;                     // kv_len int32
  uint16_t* prob_scratch;               // kv_len uint16
  // Coverage (optional): c_j as the exact sum of earlier rows' Q15 weights,
  // saturated at kCoverageMaxQ15; the term added to the pre-tanh sum is
  // requantize(cov_w[c] * c_j, cov_mult, cov_shift) (cov_shift <= 0).
  int32_t* coverage;                    // [kv_len], read and updated
  const int8_t* cov_w;                  // [attn_dim], symmetric
  int32_t cov_mult, cov_shift;
};
void qs8_additive__ref(const QS8AdditiveArgs& a);

// ------------------------------------------------------ row primitives ----
// Shared by the composite kernels above; exposed so SIMD variants and tests
// can exercise each stage.

// scores[j] = sum_i (q[i] - q_zp) * (k[j][i] - k_zp), j < n
void qs8_qk_row__ref(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                     int32_t k_zp, int32_t* scores);
// probs[j] = p_j (Q15) for j < n (n >= 1; n <= 0 does nothing).
void qs8_softmax_row__ref(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
// Steps 1-4 of that softmax (requant.h): e[j] = e_j for j < n (n >= 1);
// returns sum_j e_j. qs8_softmax_row is this, then normalize_prob_q15 in place.
uint32_t qs8_softmax_exp_row__ref(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e);
// out[c] = sat8(requantize(sum_j p_j (v[j][c] - v_zp)) + out_zp), j < n, for
// probabilities as the softmax makes them (p_j <= 32767: the SIMD paths
// multiply them as int16).
void qs8_pv_row__ref(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                     int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);

// One query row's additive scores: scores[j] for the keys j < limit, qp the
// row's projected query (the integers of kernels/ref/additive.cc).
void qs8_additive_score_row__ref(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);

// The int8 additive layer, one query row at a time, from a score row (the
// contract of qs8_additive_score_row__ref) and a weighted sum (that of
// qs8_pv_row__ref); the softmax and coverage are the reference's.
// qs8_additive__ref is this with the __ref rows; the Cortex-M paths pass
// their own.
struct Qs8AdditiveRowKernels {
  void (*score_row)(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores);
  void (*pv_row)(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride, int32_t v_zp,
                 int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);
};
void qs8_additive_rows(const Qs8AdditiveRowKernels& k, const QS8AdditiveArgs& a);

// The one row-at-a-time driver of the int8 attention, shared by every path:
// for each query row, its scores (qk_row into a.scratch), its probabilities
// (softmax_row into a.prob_scratch), its output (pv_row) and, when asked,
// its attention weights. qs8_attention__ref is this with the __ref
// primitives; a SIMD path passes its own, and calls it for what its tiles do
// not take (fewer than kQs8AttnTileMinRows rows, such as a decoder step, or
// no tile scratch). Scratch is the caller's (one row each), never the stack.
struct Qs8AttentionRowKernels {
  void (*qk_row)(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                 int32_t k_zp, int32_t* scores);
  void (*softmax_row)(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs);
  void (*pv_row)(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                 int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out);
};
void qs8_attention_rows(const Qs8AttentionRowKernels& k, const QS8AttentionArgs& a);

// Attention-weights output of one row: w[j] = p[j] for j < limit, 0 for the
// masked rest of the kv_len keys. Out of line and built without ISA flags, so
// every kernel path can call it (an inline helper compiled into an AVX2 or
// dot-product file could be the copy the linker keeps for everyone).
void write_weights_row(int limit, int kv_len, const float* p, float* w);
void write_weights_row(int limit, int kv_len, const uint16_t* p, uint16_t* w);

// Coverage of int8 additive layers: Q15 sums saturate at 2^24 (512.0, i.e.
// 512 decoding steps that all attend to one key), so cov_w * c_j (|cov_w| <=
// 127) stays inside int32 and a sequence of any length is defined.
constexpr int32_t kCoverageMaxQ15 = int32_t{1} << 24;
// c[j] = min(c[j] + p[j], kCoverageMaxQ15) for j < limit (every path).
inline void qs8_coverage_add_row(int limit, const uint16_t* p, int32_t* c) {
  for (int j = 0; j < limit; ++j) {
    const int32_t s = c[j] + static_cast<int32_t>(p[j]);
    c[j] = s < kCoverageMaxQ15 ? s : kCoverageMaxQ15;
  }
}
inline void f32_coverage_add_row(int limit, const float* p, float* c) {
  for (int j = 0; j < limit; ++j) c[j] += p[j];
}


// ---------------------------------------------------- transformer blocks ----
// LayerNorm, activations and the float residual add: the integers of
// numerics contracts 4 and 6 in requant.h. In-place use (y == x) is allowed.

// y[r] = LayerNorm(x[r]) over `dim` elements per row, requant.h contract 4.
struct QS8LayerNormArgs {
  int rows, dim;
  const int8_t* x; int x_stride;
  int64_t eps_term;        // E, 1 <= E <= kLayerNormMaxEpsTerm
  const int16_t* gain;     // [dim], at one scale s_g
  const int32_t* bias;     // [dim], at s_g 2^-f, |bias| <= kLayerNormMaxBias
  int32_t mult, shift;     // s_g 2^-f / s_out
  int32_t y_zp;
  int8_t* y; int y_stride;
};
void qs8_layernorm__ref(const QS8LayerNormArgs& a);
// LayerNorm of int16 rows (requant.h contract 4b): the 16-bit residual
// stream's. Writes the int8 output (y8, requantize_s8 with mult/shift/y_zp),
// the int16 output (y16, zero point 0, sat16(requantize) with
// mult16/shift16), or both (a post-norm block's stream and its GEMM input);
// a null pointer skips that output. y16 may be x (same stride); y8 overlaps
// neither.
struct QS16LayerNormArgs {
  int rows, dim;           // dim <= 16384
  const int16_t* x; int x_stride;
  int64_t eps_term;        // E = round(d^2 eps / s_in^2), 1 <= E <= kLayerNormMaxEpsTerm
  const int16_t* gain;     // [dim], at one scale s_g
  const int32_t* bias;     // [dim], at s_g 2^-f, |bias| <= kLayerNormMaxBias
  int32_t mult, shift;     // s_g 2^-f / s_out8
  int32_t y_zp;            // the int8 output's zero point
  int8_t* y8; int y8_stride;
  int32_t mult16, shift16; // s_g 2^-f / s_out16
  int16_t* y16; int y16_stride;
};
void qs16_layernorm__ref(const QS16LayerNormArgs& a);
// Float: (x - mean) / sqrt(var + eps) * gain + bias, biased variance (as PyTorch).
void f32_layernorm__ref(int rows, int dim, const float* x, int x_stride, float eps,
                        const float* gain, const float* bias, float* y, int y_stride);

// Float residual add (int8 blocks add in their projections' epilogues, qs8_linear_res).
void f32_add__ref(int rows, int n, const float* a, int a_stride, const float* b, int b_stride,
                  float* y, int y_stride);

// y = table[x + 128] (requant.h contract 6): every int8 activation.
void qs8_lut__ref(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                  int y_stride);
// The element-wise passes around a block's GEMMs on the 16-bit residual
// stream and in branch-norm blocks (issue 37), over n contiguous elements.
// y may be x (or r): each element is read before its own output is written.
//
// Narrowing int16 to int8: y = requantize_s8(x, mult, shift, zp) (contract
// 1 on int16 values, |x M| < 2^46): a post-norm block's input to its GEMMs.
void qs16_narrow__ref(size_t n, const int16_t* x, int32_t mult, int32_t shift, int32_t zp, int8_t* y);
// The add and add16 contracts of requant.h (add_s8, add_s16): y = x + r,
// A = a, B = b, n = shift; add16 reads no zp_r and no zp_y (int16, zero
// point 0).
struct QS8AddParams {
  int32_t zp_x, a;
  int32_t zp_r, b;
  int32_t shift, zp_y;
};
void qs8_add__ref(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y);
void qs8_add16__ref(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y);

// Float activations of the feed-forward layers, in place.
enum F32Activation : int32_t {
  kActRelu = 0,
  kActGeluErf = 1,   // x Phi(x), PyTorch's default GELU
  kActGeluTanh = 2,  // GELU(approximate='tanh')
  kActSilu = 3,      // x sigmoid(x)
};
void f32_activation__ref(int rows, int n, float* x, int x_stride, int32_t activation);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_REF_H_
