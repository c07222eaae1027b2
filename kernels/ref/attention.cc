// Reference scaled dot-product attention for one head, one query row at a
// time: scores -> softmax -> weighted sum of values. Scratch is one row of
// kv_len scores, never q_len x kv_len.
#include <cmath>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "edgeattn/kernels/stage_profile.h"
#include "f32_row.h"

namespace edgeattn {
namespace kernels {

void qs8_qk_row__ref(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                     int32_t k_zp, int32_t* scores) {
  for (int j = 0; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc = 0;
    for (int i = 0; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = acc;
  }
}

uint32_t qs8_softmax_exp_row__ref(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  int32_t row_max = scores[0];
  for (int j = 1; j < n; ++j) row_max = scores[j] > row_max ? scores[j] : row_max;
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  uint32_t sum = 0;
  for (int j = 0; j < n; ++j) {
    e[j] = static_cast<uint16_t>(exp2_neg_q15(softmax_exponent_q12(row_max, scores[j], x)));
    sum += e[j];
  }
  return sum;
}

void qs8_softmax_row__ref(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const ProbNormalizer norm = prob_normalizer(qs8_softmax_exp_row__ref(n, scores, mult, shift, probs));
  for (int j = 0; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm);
}

// |sum_j p_j (v - zp)| <= (32768 + n/2) * 255 stays far inside int32 because the
// probabilities sum to ~1.0 (each p_j is rounded, so the sum exceeds 32768 by at most n/2).
void qs8_pv_row__ref(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                     int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out) {
  for (int c = 0; c < v_dim; ++c) {
    int32_t acc = 0;
    for (int j = 0; j < n; ++j) {
      acc += static_cast<int32_t>(probs[j]) * (v[static_cast<ptrdiff_t>(j) * v_stride + c] - v_zp);
    }
    out[c] = requantize_s8(acc, pv_mult, pv_shift, out_zp);
  }
}

void qs8_attention_rows(const Qs8AttentionRowKernels& k, const QS8AttentionArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    int8_t* out = a.out + static_cast<ptrdiff_t>(r) * a.out_stride;
    EA_STAGE_ENTER(outer, EA_STAGE_SCORES);
    k.qk_row(limit, a.head_dim, a.q + static_cast<ptrdiff_t>(r) * a.q_stride, a.q_zp, a.k, a.k_stride,
             a.k_zp, a.scratch);
    EA_STAGE_SET(EA_STAGE_SOFTMAX);
    k.softmax_row(limit, a.scratch, a.score_mult, a.score_shift, a.prob_scratch);
    EA_STAGE_SET(EA_STAGE_WSUM);
    k.pv_row(limit, a.v_dim, a.prob_scratch, a.v, a.v_stride, a.v_zp, a.pv_mult, a.pv_shift, a.out_zp,
             out);
    EA_STAGE_LEAVE(outer);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.prob_scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

void qs8_attention__ref(const QS8AttentionArgs& a) {
  qs8_attention_rows({qs8_qk_row__ref, qs8_softmax_row__ref, qs8_pv_row__ref}, a);
}

void f32_attention__ref(const F32AttentionArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const float* q = a.q + static_cast<ptrdiff_t>(r) * a.q_stride;
    for (int j = 0; j < limit; ++j) {
      const float* kr = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
      float acc = 0.0f;
      for (int i = 0; i < a.head_dim; ++i) acc += q[i] * kr[i];
      a.scratch[j] = acc * a.scale;
    }
    f32_softmax_row(limit, a.scratch);
    f32_pv_row(limit, a.v_dim, a.scratch, a.v, a.v_stride, a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
