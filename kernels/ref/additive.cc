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
      for (int c = 0; c < a.attn_dim; ++c) acc += a.v_w[c] * std::tanh(qp[c] + kp[c]);
      a.scratch[j] = acc;
    }
    f32_softmax_row(limit, a.scratch);
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
void qs8_additive__ref(const QS8AdditiveArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const int8_t* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      int32_t acc = 0;
      for (int c = 0; c < a.attn_dim; ++c) {
        const int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
        const int8_t index = requantize_s8(pre, a.pre_mult, a.pre_shift, a.pre_zp);
        acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
      }
      a.scratch[j] = acc;
    }
    qs8_softmax_row__ref(limit, a.scratch, a.score_mult, a.score_shift, a.prob_scratch);
    qs8_pv_row__ref(limit, a.v_dim, a.prob_scratch, a.values, a.values_stride, a.values_zp,
                    a.pv_mult, a.pv_shift, a.out_zp, a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.prob_scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
