// qs8_qk_row with SDOT (list entry).
// Compiled with -march=armv8.2-a+dotprod (isa/neon/kernels.cmake) and reached
// only after HWCAP_ASIMDDP was seen (cpu_features_arm.cc). Deliberately
// self-contained: it includes no project header with inline functions
// (only isa/neondot/, which has none outside its own SDOT code), so no
// vague-linkage helper compiled with dotprod instructions can be shared
// with, and picked by the linker for, the baseline NEON path.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/neondot/sdot.h"
#include "isa/neondot/sdot_tiles.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "compile with -march=armv8.2-a+dotprod"
#endif

namespace edgeattn {
namespace kernels {

// scores[j] = sum (q - zq)(k_j - zk) = sum q k - zk sum q - zq sum k + D zq zk
// over the 16-wide blocks (wrapping 32-bit arithmetic, equal to the exact sum
// whenever that fits int32), plus the ragged tail summed directly.
void qs8_qk_row__neondot(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                         int k_stride, int32_t k_zp, int32_t* scores) {
  const int kblocks = dim / 16;
  const int d = 16 * kblocks;
  uint32_t sum_q = 0;
  for (int i = 0; i < d; ++i) sum_q += static_cast<uint32_t>(static_cast<int32_t>(q[i]));
  const uint32_t base = static_cast<uint32_t>(d) * static_cast<uint32_t>(q_zp) *
                            static_cast<uint32_t>(k_zp) -
                        static_cast<uint32_t>(k_zp) * sum_q;
  const int32x4_t vbase = vdupq_n_s32(static_cast<int32_t>(base));
  const int8x16_t ones = vdupq_n_s8(1);
  const bool sum_k = q_zp != 0;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = k + static_cast<ptrdiff_t>(j) * k_stride;
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    int32x4_t r;
    if (sum_k) {
      int32x4_t s0 = a0, s1 = a0, s2 = a0, s3 = a0;
      for (int b = 0; b < kblocks; ++b) {
        const int8x16_t qv = vld1q_s8(q + 16 * b);
        const int8x16_t kv0 = vld1q_s8(k0 + 16 * b);
        const int8x16_t kv1 = vld1q_s8(k1 + 16 * b);
        const int8x16_t kv2 = vld1q_s8(k2 + 16 * b);
        const int8x16_t kv3 = vld1q_s8(k3 + 16 * b);
        a0 = vdotq_s32(a0, qv, kv0);
        a1 = vdotq_s32(a1, qv, kv1);
        a2 = vdotq_s32(a2, qv, kv2);
        a3 = vdotq_s32(a3, qv, kv3);
        s0 = vdotq_s32(s0, ones, kv0);
        s1 = vdotq_s32(s1, ones, kv1);
        s2 = vdotq_s32(s2, ones, kv2);
        s3 = vdotq_s32(s3, ones, kv3);
      }
      const int32x4_t ks = vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3));
      r = vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3));
      r = vmlsq_n_s32(vaddq_s32(r, vbase), ks, q_zp);
    } else {
      for (int b = 0; b < kblocks; ++b) {
        const int8x16_t qv = vld1q_s8(q + 16 * b);
        a0 = vdotq_s32(a0, qv, vld1q_s8(k0 + 16 * b));
        a1 = vdotq_s32(a1, qv, vld1q_s8(k1 + 16 * b));
        a2 = vdotq_s32(a2, qv, vld1q_s8(k2 + 16 * b));
        a3 = vdotq_s32(a3, qv, vld1q_s8(k3 + 16 * b));
      }
      r = vaddq_s32(vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3)), vbase);
    }
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
      a = vdotq_s32(a, vld1q_s8(q + 16 * b), kv);
      s = vdotq_s32(s, ones, kv);
    }
    uint32_t acc = static_cast<uint32_t>(vaddvq_s32(a)) + base -
                   static_cast<uint32_t>(q_zp) * static_cast<uint32_t>(vaddvq_s32(s));
    int32_t tail = 0;
    for (int i = d; i < dim; ++i) tail += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = static_cast<int32_t>(acc + static_cast<uint32_t>(tail));
  }
}

}  // namespace kernels
}  // namespace edgeattn
