// qs8_qk_row on NEON (Armv7-A and AArch64).
//
// int8 exactness notes (each step is the integer function of requant.h):
//  - Q.K: sum (q - zq)(k - zk) = sum qk - zk sum q - zq sum k + D zq zk, all
//    in wrapping 32-bit arithmetic, which equals the reference's int32 sum
//    whenever that one does not overflow (and the reference cannot, see ref.h).
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

}  // namespace kernels
}  // namespace edgeattn
