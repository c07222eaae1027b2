// NEON scaled dot-product attention (Armv7-A and AArch64): the row
// primitives (Q.K row, integer softmax, P.V row) that the shared row driver
// runs below the tiles (attention_tile.cc), and the multi-row P.V the neon
// tile uses.
//
// int8 exactness notes (each step is the integer function of requant.h):
//  - Q.K: sum (q - zq)(k - zk) = sum qk - zk sum q - zq sum k + D zq zk, all
//    in wrapping 32-bit arithmetic, which equals the reference's int32 sum
//    whenever that one does not overflow (and the reference cannot, see ref.h).
//  - softmax: the exponent on 32-bit lanes, the polynomial (vqrdmulh =
//    mulhrs16) and the rounding shift (vrshl) on 16-bit lanes, the normalizer
//    on 32-bit lanes (e m < 2^31, vrshl rounds half up); see softmax_neon.h.
//  - P.V: sum p (v - zp) = sum p v - zp sum p; the softmax's p <= 32767 is an
//    int16 (ref.h: the P.V rows take probabilities as the softmax makes them).
#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "ref/f32_row.h"
#include "neon_common.h"
#include "neon_kernels.h"
#include "softmax_neon.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces)

namespace {

template <bool kSumK>
void qk_row_impl(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                 int32_t k_zp, int32_t* scores) {
  const int kblocks = dim / 16;
  const int d = 16 * kblocks;
  uint32_t sum_q = 0;
  for (int i = 0; i < d; ++i) sum_q += static_cast<uint32_t>(static_cast<int32_t>(q[i]));
  const uint32_t base = static_cast<uint32_t>(d) * static_cast<uint32_t>(q_zp) *
                            static_cast<uint32_t>(k_zp) -
                        static_cast<uint32_t>(k_zp) * sum_q;
  const int32x4_t vbase = vdupq_n_s32(static_cast<int32_t>(base));
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    int32x4_t s0 = a0, s1 = a0, s2 = a0, s3 = a0;
    for (int b = 0; b < kblocks; ++b) {
      const int8x16_t qv = vld1q_s8(q + 16 * b);
      const int8x16_t kv0 = vld1q_s8(k0 + 16 * b);
      const int8x16_t kv1 = vld1q_s8(k1 + 16 * b);
      const int8x16_t kv2 = vld1q_s8(k2 + 16 * b);
      const int8x16_t kv3 = vld1q_s8(k3 + 16 * b);
      a0 = dot16_s8(a0, qv, kv0);
      a1 = dot16_s8(a1, qv, kv1);
      a2 = dot16_s8(a2, qv, kv2);
      a3 = dot16_s8(a3, qv, kv3);
      if (kSumK) {
        s0 = vpadalq_s16(s0, vpaddlq_s8(kv0));
        s1 = vpadalq_s16(s1, vpaddlq_s8(kv1));
        s2 = vpadalq_s16(s2, vpaddlq_s8(kv2));
        s3 = vpadalq_s16(s3, vpaddlq_s8(kv3));
      }
    }
    int32x4_t r = vaddq_s32(hsum4_s32(a0, a1, a2, a3), vbase);
    if (kSumK) r = vmlsq_n_s32(r, hsum4_s32(s0, s1, s2, s3), q_zp);
    vst1q_s32(scores + j, r);
    if (d < dim) {
      for (int t = 0; t < 4; ++t) {
        const int8_t* kr = k0 + static_cast<ptrdiff_t>(t) * k_stride;
        int32_t acc = 0;
        for (int i = d; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
        scores[j + t] += acc;
      }
    }
  }
  for (; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32x4_t a = vdupq_n_s32(0), s = a;
    for (int b = 0; b < kblocks; ++b) {
      const int8x16_t kv = vld1q_s8(kr + 16 * b);
      a = dot16_s8(a, vld1q_s8(q + 16 * b), kv);
      if (kSumK) s = vpadalq_s16(s, vpaddlq_s8(kv));
    }
    uint32_t acc = static_cast<uint32_t>(hsum_s32(a)) + base;
    if (kSumK) acc -= static_cast<uint32_t>(q_zp) * static_cast<uint32_t>(hsum_s32(s));
    int32_t tail = 0;
    for (int i = d; i < dim; ++i) tail += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = static_cast<int32_t>(acc + static_cast<uint32_t>(tail));
  }
}

}  // namespace

void qs8_qk_row__neon(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                      int32_t k_zp, int32_t* scores) {
  if (q_zp != 0) {
    qk_row_impl<true>(n, dim, q, q_zp, k, k_stride, k_zp, scores);
  } else {
    qk_row_impl<false>(n, dim, q, q_zp, k, k_stride, k_zp, scores);
  }
}

uint32_t qs8_softmax_exp_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  return softmax_exp_row(n, scores, softmax_row_max(n, scores), softmax_exp_params(mult, shift), e);
}

void qs8_softmax_row__neon(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* probs) {
  if (n <= 0) return;
  const Norm4 norm = make_norm4(qs8_softmax_exp_row__neon(n, scores, mult, shift, probs));
  int j = 0;
  if (norm.hi16) {
    for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8<true>(vld1q_u16(probs + j), norm));
  } else {
    for (; j + 8 <= n; j += 8) vst1q_u16(probs + j, normalize_x8<false>(vld1q_u16(probs + j), norm));
  }
  for (; j < n; ++j) probs[j] = normalize_prob_q15(probs[j], norm.norm);
}

void qs8_pv_row__neon(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                      int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp,
                      int8_t* out) {
  uint32_t psum = 0;
  for (int j = 0; j < n; ++j) psum += probs[j];
  const int32x4_t corr =
      vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum));
  const int32x4_t vmult = vdupq_n_s32(pv_mult);
  const int64x2_t neg_n = neg_n_of(pv_shift);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(out_zp));
  int c = 0;
  for (; c + 16 <= v_dim; c += 16) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    const int8_t* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const int8x16_t row = vld1q_s8(vp);
      const int16x8_t lo = vmovl_s8(vget_low_s8(row));
      const int16x8_t hi = vmovl_s8(vget_high_s8(row));
      const int16_t ps = static_cast<int16_t>(probs[j]);  // p <= 32767
      a0 = vmlal_n_s16(a0, vget_low_s16(lo), ps);
      a1 = vmlal_n_s16(a1, vget_high_s16(lo), ps);
      a2 = vmlal_n_s16(a2, vget_low_s16(hi), ps);
      a3 = vmlal_n_s16(a3, vget_high_s16(hi), ps);
    }
    const int32x4_t y0 = requantize_x4(vsubq_s32(a0, corr), vmult, neg_n, neg_n);
    const int32x4_t y1 = requantize_x4(vsubq_s32(a1, corr), vmult, neg_n, neg_n);
    const int32x4_t y2 = requantize_x4(vsubq_s32(a2, corr), vmult, neg_n, neg_n);
    const int32x4_t y3 = requantize_x4(vsubq_s32(a3, corr), vmult, neg_n, neg_n);
    vst1q_s8(out + c, vcombine_s8(add_zp_sat8(y0, y1, zp), add_zp_sat8(y2, y3, zp)));
  }
  for (; c + 8 <= v_dim; c += 8) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
    const int8_t* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const int16x8_t row = vmovl_s8(vld1_s8(vp));
      const int16_t ps = static_cast<int16_t>(probs[j]);  // p <= 32767
      a0 = vmlal_n_s16(a0, vget_low_s16(row), ps);
      a1 = vmlal_n_s16(a1, vget_high_s16(row), ps);
    }
    const int32x4_t y0 = requantize_x4(vsubq_s32(a0, corr), vmult, neg_n, neg_n);
    const int32x4_t y1 = requantize_x4(vsubq_s32(a1, corr), vmult, neg_n, neg_n);
    vst1_s8(out + c, add_zp_sat8(y0, y1, zp));
  }
  for (; c < v_dim; ++c) {
    int32_t acc = 0;
    for (int j = 0; j < n; ++j) {
      acc += static_cast<int32_t>(probs[j]) * (v[static_cast<ptrdiff_t>(j) * v_stride + c] - v_zp);
    }
    out[c] = requantize_s8(acc, pv_mult, pv_shift, out_zp);
  }
}

namespace {

template <int L>
inline int16x4_t half_of(int16x8_t p) {
  return L < 4 ? vget_low_s16(p) : vget_high_s16(p);
}

// acc[r][0..3] += p_r[L] * v(16 columns), r < R.
template <int R, int L>
inline void pv_key(int32x4_t (&acc)[R][4], const int16x8_t (&p)[R], int8x16_t row) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(row));
#if defined(__aarch64__)
  const int16x8_t hi = vmovl_high_s8(row);
  for (int r = 0; r < R; ++r) {
    acc[r][0] = vmlal_laneq_s16(acc[r][0], vget_low_s16(lo), p[r], L);
    acc[r][1] = vmlal_high_laneq_s16(acc[r][1], lo, p[r], L);
    acc[r][2] = vmlal_laneq_s16(acc[r][2], vget_low_s16(hi), p[r], L);
    acc[r][3] = vmlal_high_laneq_s16(acc[r][3], hi, p[r], L);
  }
#else
  const int16x8_t hi = vmovl_s8(vget_high_s8(row));
  for (int r = 0; r < R; ++r) {
    const int16x4_t ph = half_of<L>(p[r]);
    acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(lo), ph, L & 3);
    acc[r][1] = vmlal_lane_s16(acc[r][1], vget_high_s16(lo), ph, L & 3);
    acc[r][2] = vmlal_lane_s16(acc[r][2], vget_low_s16(hi), ph, L & 3);
    acc[r][3] = vmlal_lane_s16(acc[r][3], vget_high_s16(hi), ph, L & 3);
  }
#endif
}

// P.V for R query rows sharing n keys, 16 value columns per pass, every
// value row loaded and widened once for the R rows; probabilities come in
// 8 at a time and are broadcast by lane (smlal by element). Preconditions:
// v_dim % 16 == 0 and no p == 32768 (p fits int16).
template <int R>
__attribute__((optimize("no-schedule-insns"))) void pv_group(int n, int v_dim, const uint16_t* const* probs, const uint32_t* psum,
              const int8_t* v, int v_stride, int32_t v_zp, int32_t pv_mult, int32_t pv_shift,
              int32_t out_zp, int8_t* const* out) {
  const int32x4_t vmult = vdupq_n_s32(pv_mult);
  const int64x2_t neg_n = neg_n_of(pv_shift);
  const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(out_zp));
  int32x4_t corr[R];
  for (int r = 0; r < R; ++r) {
    corr[r] = vdupq_n_s32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum[r]));
  }
  const int n8 = n & ~7;
  for (int c = 0; c < v_dim; c += 16) {
    int32x4_t acc[R][4];
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < 4; ++i) acc[r][i] = vdupq_n_s32(0);
    }
    const int8_t* vp = v + c;
    for (int j = 0; j < n8; j += 8) {
      int16x8_t p[R];
      for (int r = 0; r < R; ++r) p[r] = vreinterpretq_s16_u16(vld1q_u16(probs[r] + j));
      pv_key<R, 0>(acc, p, vld1q_s8(vp));
      pv_key<R, 1>(acc, p, vld1q_s8(vp + v_stride));
      vp += 2 * static_cast<ptrdiff_t>(v_stride);
      pv_key<R, 2>(acc, p, vld1q_s8(vp));
      pv_key<R, 3>(acc, p, vld1q_s8(vp + v_stride));
      vp += 2 * static_cast<ptrdiff_t>(v_stride);
      pv_key<R, 4>(acc, p, vld1q_s8(vp));
      pv_key<R, 5>(acc, p, vld1q_s8(vp + v_stride));
      vp += 2 * static_cast<ptrdiff_t>(v_stride);
      pv_key<R, 6>(acc, p, vld1q_s8(vp));
      pv_key<R, 7>(acc, p, vld1q_s8(vp + v_stride));
      vp += 2 * static_cast<ptrdiff_t>(v_stride);
    }
    for (int j = n8; j < n; ++j, vp += v_stride) {
      const int8x16_t row = vld1q_s8(vp);
      const int16x8_t lo = vmovl_s8(vget_low_s8(row));
      const int16x8_t hi = vmovl_s8(vget_high_s8(row));
      for (int r = 0; r < R; ++r) {
        const int16_t ps = static_cast<int16_t>(probs[r][j]);
        acc[r][0] = vmlal_n_s16(acc[r][0], vget_low_s16(lo), ps);
        acc[r][1] = vmlal_n_s16(acc[r][1], vget_high_s16(lo), ps);
        acc[r][2] = vmlal_n_s16(acc[r][2], vget_low_s16(hi), ps);
        acc[r][3] = vmlal_n_s16(acc[r][3], vget_high_s16(hi), ps);
      }
    }
    for (int r = 0; r < R; ++r) {
      const int32x4_t y0 = requantize_x4(vsubq_s32(acc[r][0], corr[r]), vmult, neg_n, neg_n);
      const int32x4_t y1 = requantize_x4(vsubq_s32(acc[r][1], corr[r]), vmult, neg_n, neg_n);
      const int32x4_t y2 = requantize_x4(vsubq_s32(acc[r][2], corr[r]), vmult, neg_n, neg_n);
      const int32x4_t y3 = requantize_x4(vsubq_s32(acc[r][3], corr[r]), vmult, neg_n, neg_n);
      vst1q_s8(out[r] + c, vcombine_s8(add_zp_sat8(y0, y1, zp), add_zp_sat8(y2, y3, zp)));
    }
  }
}

}  // namespace

void qs8_pv_rows__neon(int rows, int n, int v_dim, const uint16_t* const* probs,
                       const uint32_t* psum, const int8_t* v, int v_stride, int32_t v_zp,
                       int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* const* out) {
  int t = 0;
  for (; t + 4 <= rows; t += 4) {
    pv_group<4>(n, v_dim, probs + t, psum + t, v, v_stride, v_zp, pv_mult, pv_shift, out_zp, out + t);
  }
  for (; t + 2 <= rows; t += 2) {
    pv_group<2>(n, v_dim, probs + t, psum + t, v, v_stride, v_zp, pv_mult, pv_shift, out_zp, out + t);
  }
  for (; t < rows; ++t) {
    pv_group<1>(n, v_dim, probs + t, psum + t, v, v_stride, v_zp, pv_mult, pv_shift, out_zp, out + t);
  }
}

// Tiled when the caller gave tile scratch and there are enough query rows
// (attention_tile.cc), else the shared row driver with the row primitives
// above.
void qs8_attention__neon(const QS8AttentionArgs& a) {
  if (!qs8_attention_tiled__neon(a)) {
    qs8_attention_rows({qs8_qk_row__neon, qs8_softmax_row__neon, qs8_pv_row__neon}, a);
  }
}

// --------------------------------------------------------------- float32 ----
namespace {


float f32_dot(int dim, const float* a, const float* b) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int i = 0;
  for (; i + 4 <= dim; i += 4) acc = fma_f32(acc, vld1q_f32(a + i), vld1q_f32(b + i));
  float r = hsum_f32(acc);
  for (; i < dim; ++i) r += a[i] * b[i];
  return r;
}

}  // namespace

// out[c] = sum_j p_j v[j][c], columns in registers, keys streamed.
void f32_pv_row__neon(int n, int v_dim, const float* p, const float* v, int v_stride, float* out) {
  int c = 0;
  for (; c + 8 <= v_dim; c += 8) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0;
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const float32x4_t pj = vdupq_n_f32(p[j]);
      a0 = fma_f32(a0, pj, vld1q_f32(vp));
      a1 = fma_f32(a1, pj, vld1q_f32(vp + 4));
    }
    vst1q_f32(out + c, a0);
    vst1q_f32(out + c + 4, a1);
  }
  for (; c + 4 <= v_dim; c += 4) {
    float32x4_t a0 = vdupq_n_f32(0.0f);
    const float* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) a0 = fma_f32(a0, vdupq_n_f32(p[j]), vld1q_f32(vp));
    vst1q_f32(out + c, a0);
  }
  for (; c < v_dim; ++c) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += p[j] * v[static_cast<ptrdiff_t>(j) * v_stride + c];
    out[c] = acc;
  }
}

void f32_attention__neon(const F32AttentionArgs& a) {
  for (int r = 0; r < a.q_len; ++r) {
    const int limit = attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    const float* q = a.q + static_cast<ptrdiff_t>(r) * a.q_stride;
    for (int j = 0; j < limit; ++j) {
      a.scratch[j] = f32_dot(a.head_dim, q, a.k + static_cast<ptrdiff_t>(j) * a.k_stride) * a.scale;
    }
    f32_softmax_row(limit, a.scratch);  // the reference's own: exp dominates, nothing to vectorize
    f32_pv_row__neon(limit, a.v_dim, a.scratch, a.v, a.v_stride,
                    a.out + static_cast<ptrdiff_t>(r) * a.out_stride);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, a.scratch, a.weights + static_cast<ptrdiff_t>(r) * a.weights_stride);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
