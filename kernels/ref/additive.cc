// Reference additive (Bahdanau) attention: score_j = v . tanh(qp + kp_j),
// one query row at a time.
#include <cmath>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "f32_row.h"

namespace edgeattn {
namespace kernels {

void f32_additive__ref(const F32AdditiveArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const float* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const float* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      float acc = 0.0f;
      if (a.coverage != nullptr) {
        const float cj = a.coverage[j];
        for (int c = 0; c < a.attn_dim; ++c) acc += a.v_w[c] * std::tanh(qp[c] + kp[c] + a.cov_w[c] * cj);
      } else {
        for (int c = 0; c < a.attn_dim; ++c) acc += a.v_w[c] * std::tanh(qp[c] + kp[c]);
      }
      a.scratch[j] = acc;
    }
    f32_softmax_row(limit, a.scratch);
    if (a.coverage != nullptr) f32_coverage_add_row(limit, a.scratch, a.coverage);
    f32_pv_row(limit, a.v_dim, a.scratch, a.values, a.values_stride,
               a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

// Additive scores in int8: the projected query and key share one scale, so
// their sum (qp - zq) + (kp - zk) is exact in int32; it is requantized to the
// int8 index of the converter's tanh table (tanh at scale 1/127), and the
// score is the exact int32 dot product with the symmetric int8 v.
//
// Coverage: c_j is kept as an integer, the exact sum of the Q15 weights that
// earlier rows (decoding steps) gave key j (32768 = one full step's weight),
// saturated at 2^24 so it can never drift or overflow. Its term joins the
// pre-tanh sum in the same int32 domain (units of the shared qp/kp scale
// s_h): w_c c_j / s_h = (cov_w * s_wc) (c_j / 32768) / s_h, i.e.
// requantize(cov_w[c] * c_j, M, s) with M * 2^(s-31) = s_wc / (32768 s_h),
// derived by the converter. |cov_w * c_j| <= 127 * 2^24 < 2^31 and the
// multiplier is <= 1 (cov_shift <= 0, checked at load), so the term and the
// sum stay inside int32; one rounding per (key, feature) on every path. After
// the row's softmax, its probabilities are added to c (saturating).
void qs8_additive_score_row__ref(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores) {
  for (int j = 0; j < limit; ++j) {
    const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
    int32_t acc = 0;
    const int32_t cj = a.coverage != nullptr ? a.coverage[j] : 0;
    for (int c = 0; c < a.attn_dim; ++c) {
      int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
      if (a.coverage != nullptr) pre += requantize(a.cov_w[c] * cj, a.cov_mult, a.cov_shift);
      const int8_t index = requantize_s8(pre, a.pre_mult, a.pre_shift, a.pre_zp);
      acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
    }
    scores[j] = acc;
  }
}

void qs8_additive_rows(const Qs8AdditiveRowKernels& k, const QS8AdditiveArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    k.score_row(a, a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride, limit, a.scratch);
    qs8_softmax_row__ref(limit, a.scratch, a.score_mult, a.score_shift, a.prob_scratch);
    if (a.coverage != nullptr) qs8_coverage_add_row(limit, a.prob_scratch, a.coverage);
    k.pv_row(limit, a.v_dim, a.prob_scratch, a.values, a.values_stride, a.values_zp, a.pv_mult, a.pv_shift,
             a.out_zp, a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.prob_scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

void qs8_additive__ref(const QS8AdditiveArgs& a) {
  qs8_additive_rows({qs8_additive_score_row__ref, qs8_pv_row__ref}, a);
}

}  // namespace kernels
}  // namespace edgeattn
