// qs8_additive (Bahdanau attention) on NEON: per key, 16 attention features
// per step: pre = (qp - zq) + (kp - zk) in int16 (vaddl_s8), exact vector
// requantization to the tanh-table index, table lookup (AArch64: TBL/TBX over
// the 256-entry table; Armv7: scalar lookups from a stored index block), and
// the int8 dot product with v. Softmax and P.V are the exact NEON row kernels.
// Coverage: the pre-tanh sums widened to int32, plus requantize(w_c * c_j)
// per lane (the same exact vector requantization), then the same index path;
// the row's weights are added to c after the softmax.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

struct TanhTable {
#if defined(__aarch64__)
  int8x16x4_t t[4];
#endif
  const int8_t* table;
};

// tanh_table[index + 128] for 16 int8 indices.
inline int8x16_t lookup16(const TanhTable& tt, int8x16_t index) {
#if defined(__aarch64__)
  const uint8x16_t u = veorq_u8(vreinterpretq_u8_s8(index), vdupq_n_u8(0x80));  // index + 128
  const uint8x16_t k64 = vdupq_n_u8(64);
  int8x16_t r = vqtbl4q_s8(tt.t[0], u);
  r = vqtbx4q_s8(r, tt.t[1], vsubq_u8(u, k64));
  r = vqtbx4q_s8(r, tt.t[2], vsubq_u8(u, vdupq_n_u8(128)));
  r = vqtbx4q_s8(r, tt.t[3], vsubq_u8(u, vdupq_n_u8(192)));
  return r;
#else
  int8_t idx[16], out[16];
  vst1q_s8(idx, index);
  for (int i = 0; i < 16; ++i) out[i] = tt.table[idx[i] + 128];
  return vld1q_s8(out);
#endif
}

}  // namespace

void qs8_additive__neon(const QS8AdditiveArgs& a) {
  TanhTable tt;
  tt.table = a.tanh_table;
#if defined(__aarch64__)
  for (int i = 0; i < 4; ++i) {
    for (int p = 0; p < 4; ++p) tt.t[i].val[p] = vld1q_s8(a.tanh_table + 64 * i + 16 * p);
  }
#endif
  const int blocks = a.attn_dim / 16;
  const int d = 16 * blocks;
  const int16x8_t zsum = vdupq_n_s16(static_cast<int16_t>(a.qp_zp + a.kp_zp));
  const int32x4_t pre_mult = vdupq_n_s32(a.pre_mult);
  const int64x2_t pre_neg_n = neg_n_of(a.pre_shift);
  const int16x8_t pre_zp = vdupq_n_s16(static_cast<int16_t>(a.pre_zp));
  const bool cov = a.coverage != nullptr;
  const int64x2_t cov_neg_n = neg_n_of(cov ? a.cov_shift : 0);
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, false, 0);
    const int8_t* qp = a.qp + static_cast<ptrdiff_t>(r) * a.qp_stride;
    for (int j = 0; j < limit; ++j) {
      const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      int32x4_t acc = vdupq_n_s32(0);
      const int32_t cj = cov ? a.coverage[j] : 0;
      const int32x4_t cjv = vdupq_n_s32(cj);
      for (int b = 0; b < blocks; ++b) {
        const int8x16_t qv = vld1q_s8(qp + 16 * b);
        const int8x16_t kv = vld1q_s8(kp + 16 * b);
        const int16x8_t lo = vsubq_s16(vaddl_s8(vget_low_s8(qv), vget_low_s8(kv)), zsum);
        const int16x8_t hi = vsubq_s16(vaddl_s8(vget_high_s8(qv), vget_high_s8(kv)), zsum);
        int32x4_t p0 = vmovl_s16(vget_low_s16(lo)), p1 = vmovl_s16(vget_high_s16(lo));
        int32x4_t p2 = vmovl_s16(vget_low_s16(hi)), p3 = vmovl_s16(vget_high_s16(hi));
        if (cov) {  // + requantize(w_c * c_j): |w_c c_j| < 2^31, multiplier <= 1
          const int8x16_t wc = vld1q_s8(a.cov_w + 16 * b);
          const int16x8_t wl = vmovl_s8(vget_low_s8(wc)), wh = vmovl_s8(vget_high_s8(wc));
          p0 = vaddq_s32(p0, requantize_x4(vmulq_s32(vmovl_s16(vget_low_s16(wl)), cjv), a.cov_mult, cov_neg_n));
          p1 = vaddq_s32(p1, requantize_x4(vmulq_s32(vmovl_s16(vget_high_s16(wl)), cjv), a.cov_mult, cov_neg_n));
          p2 = vaddq_s32(p2, requantize_x4(vmulq_s32(vmovl_s16(vget_low_s16(wh)), cjv), a.cov_mult, cov_neg_n));
          p3 = vaddq_s32(p3, requantize_x4(vmulq_s32(vmovl_s16(vget_high_s16(wh)), cjv), a.cov_mult, cov_neg_n));
        }
        const int32x4_t y0 = requantize_x4(p0, pre_mult, pre_neg_n, pre_neg_n);
        const int32x4_t y1 = requantize_x4(p1, pre_mult, pre_neg_n, pre_neg_n);
        const int32x4_t y2 = requantize_x4(p2, pre_mult, pre_neg_n, pre_neg_n);
        const int32x4_t y3 = requantize_x4(p3, pre_mult, pre_neg_n, pre_neg_n);
        const int8x16_t index = vcombine_s8(add_zp_sat8(y0, y1, pre_zp), add_zp_sat8(y2, y3, pre_zp));
        acc = dot16_s8(acc, lookup16(tt, index), vld1q_s8(a.v_w + 16 * b));
      }
      int32_t s = hsum_s32(acc);
      for (int c = d; c < a.attn_dim; ++c) {
        int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
        if (cov) pre += requantize(a.cov_w[c] * cj, a.cov_mult, a.cov_shift);
        const int8_t index = requantize_s8(pre, a.pre_mult, a.pre_shift, a.pre_zp);
        s += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
      }
      a.scratch[j] = s;
    }
    qs8_softmax_row__neon(limit, a.scratch, a.score_mult, a.score_shift, a.prob_scratch);
    if (cov) qs8_coverage_add_row(limit, a.prob_scratch, a.coverage);
    qs8_pv_row__neon(limit, a.v_dim, a.prob_scratch, a.values, a.values_stride, a.values_zp,
                     a.pv_mult, a.pv_shift, a.out_zp,
                     a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.prob_scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

// Float: the vector part is the add and the dot with v; tanh stays the scalar

}  // namespace kernels
}  // namespace edgeattn
