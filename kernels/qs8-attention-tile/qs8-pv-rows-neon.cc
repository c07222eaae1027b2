// The multi-row P.V of the neon tiled attention (qs8_attention_tile_stages__neon):
// 4 rows share each value load, smlal by lane.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "isa/neon/softmax_neon.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

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

}  // namespace kernels
}  // namespace edgeattn
