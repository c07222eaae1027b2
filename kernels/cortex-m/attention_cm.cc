// Cortex-M int8 attention: the shared row driver (qs8_attention_rows: one
// query row at a time, scores -> integer softmax -> weighted sum) with the
// score row (Q.K^T of one query row) on the DSP extension or Helium. The
// softmax and the weighted sum are the reference functions. Every score is the exact int32
// sum_i (q_i - q_zp)(k_i - k_zp) the reference computes (zero-point-corrected
// values lie in [-255, 255] and fit int16), so results are bit-identical.
#include "cortex-m/cortexm_kernels.h"

#if (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif

namespace edgeattn {
namespace kernels {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
namespace {
inline uint32_t load4(const int8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint32_t ror8(uint32_t v) { return (v >> 8) | (v << 24); }
inline uint32_t pair(int32_t zp) {
  return (static_cast<uint32_t>(zp) & 0xFFFFu) | (static_cast<uint32_t>(zp) << 16);
}
}  // namespace

void qs8_qk_row__dsp(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                     int32_t k_zp, int32_t* scores) {
  const uint32_t qz = pair(q_zp), kz = pair(k_zp);
  for (int j = 0; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc = 0;
    int i = 0;
    for (; i + 4 <= dim; i += 4) {
      const uint32_t vq = load4(q + i), vk = load4(kr + i);
      // SSUB16: plain (non-saturating) halfword subtraction; results fit int16.
      acc = __smlad(__ssub16(__sxtb16(vq), qz), __ssub16(__sxtb16(vk), kz), acc);
      acc = __smlad(__ssub16(__sxtb16(ror8(vq)), qz), __ssub16(__sxtb16(ror8(vk)), kz), acc);
    }
    for (; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = acc;
  }
}

void qs8_attention__dsp(const QS8AttentionArgs& a) {
  qs8_attention_rows({qs8_qk_row__dsp, qs8_softmax_row__ref, qs8_pv_row__ref}, a);
}
#endif

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
void qs8_qk_row__helium(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                        int32_t k_zp, int32_t* scores) {
  const int16_t qz = static_cast<int16_t>(q_zp), kz = static_cast<int16_t>(k_zp);
  for (int j = 0; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc = 0;
    // 8 lanes per step: widening byte loads to int16, zero points subtracted
    // in int16, VMLADAVA.S16; the tail is predicated (VCTP16), so inactive
    // lanes add nothing.
    for (int i = 0; i < dim; i += 8) {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(dim - i));
      const int16x8_t vq = vsubq_x_n_s16(vldrbq_z_s16(q + i, p), qz, p);
      const int16x8_t vk = vsubq_x_n_s16(vldrbq_z_s16(kr + i, p), kz, p);
      acc = vmladavaq_p_s16(acc, vq, vk, p);
    }
    scores[j] = acc;
  }
}

void qs8_attention__helium(const QS8AttentionArgs& a) {
  qs8_attention_rows({qs8_qk_row__helium, qs8_softmax_row__ref, qs8_pv_row__ref}, a);
}
#endif

}  // namespace kernels
}  // namespace edgeattn
#endif
