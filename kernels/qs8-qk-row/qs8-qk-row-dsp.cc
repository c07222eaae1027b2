// qs8_qk_row on the Cortex-M DSP extension: one row of scores with SMLAD on
// zero-point-corrected int16 pairs.
// Part of the Cortex-M int8 attention: the shared row driver
// (qs8_attention_rows: scores -> integer softmax -> weighted sum) runs
// the score row (Q.K^T of one query row) and the weighted sum (P.V) of
// the DSP extension or Helium. Every score is the exact int32
// sum_i (q_i - q_zp)(k_i - k_zp) the reference computes (zero-point-
// corrected values lie in [-255, 255] and fit int16), so results are
// bit-identical.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

namespace {
using dsp::load4;
using dsp::pkhbt;
using dsp::pkhtb;
using dsp::sxtb16_ror8;
inline uint32_t pair(int32_t zp) {
  return (static_cast<uint32_t>(zp) & 0xFFFFu) | (static_cast<uint32_t>(zp) << 16);
}

// Head dims up to this take the score row with the query unpacked once.
constexpr int kQkUnpackedMaxDim = 64;

// The score row with the query unpacked once per row: (q_i - q_zp) as int16
// pairs, (i, i+2) and (i+1, i+3) per group of 4, in qp; per key and group
// one load, two SXTB16 and two SMLAD (the key bytes as they are). The key
// zero point comes out once per key: sum_i (q_i - zq)(k_i - zk) =
// sum_i (q_i - zq) k_i - zk sum_i (q_i - zq), in wrapping 32-bit arithmetic
// (SMLAD does not saturate), which is the reference's exact sum (it fits
// int32); init = -zk sum_i (q_i - zq). Two keys per step share the query
// pairs' loads and the loop. Out of line with few arguments, so the loops
// keep their values in registers (inline, at -Os, the query pairs and the
// stride were reloaded from the stack per key).
__attribute__((noinline, unused)) void qk_groups_x2(int pairs, const uint32_t* qp, const uint32_t* qp_end, int32_t init,
                                                    const int8_t* k, int k_stride, int32_t* scores) {
  if (qp_end - qp == 2) {  // head dim 4 (5-7): the query pair in registers, 15 instructions per two keys
    if (pairs <= 0) return;
    const uint32_t qe = qp[0], qo = qp[1];
    uint32_t v0, v1, t;
    int32_t a0, a1;
    __asm__ volatile(  // volatile: its effect is the stores
        "1:\n\t"
        "ldr %[v1], [%[k], %[ks]]\n\t"
        "ldr %[v0], [%[k]]\n\t"
        "add %[k], %[k], %[ks], lsl #1\n\t"
        "sxtb16 %[t], %[v0]\n\t"
        "smlad %[a0], %[qe], %[t], %[init]\n\t"
        "sxtb16 %[v0], %[v0], ror #8\n\t"
        "smlad %[a0], %[qo], %[v0], %[a0]\n\t"
        "sxtb16 %[t], %[v1]\n\t"
        "smlad %[a1], %[qe], %[t], %[init]\n\t"
        "sxtb16 %[v1], %[v1], ror #8\n\t"
        "smlad %[a1], %[qo], %[v1], %[a1]\n\t"
        "strd %[a0], %[a1], [%[s]], #8\n\t"
        "subs %[pairs], %[pairs], #1\n\t"
        "bne 1b"
        : [k] "+r"(k), [s] "+r"(scores), [pairs] "+r"(pairs), [v0] "=&r"(v0), [v1] "=&r"(v1), [t] "=&r"(t),
          [a0] "=&r"(a0), [a1] "=&r"(a1)
        : [qe] "r"(qe), [qo] "r"(qo), [init] "r"(init), [ks] "r"(k_stride)
        : "cc", "memory");
    return;
  }
  for (; pairs > 0; --pairs, k += 2 * k_stride, scores += 2) {
    int32_t a0 = init, a1 = init;
    const int8_t* k0 = k;
    const int8_t* k1 = k + k_stride;
    const uint32_t* q = qp;
    // Per group: the query pair (one LDRD), the two keys' words, 4 SXTB16 and
    // 4 SMLAD; written out because GCC -Os reloaded the pair and the loop end
    // from memory in every step (20 instructions instead of 13).
    uint32_t v0, v1, qe, qo, t;
    __asm__(
        "1:\n\t"
        "ldrd %[qe], %[qo], [%[q]], #8\n\t"
        "ldr %[v0], [%[k0]], #4\n\t"
        "ldr %[v1], [%[k1]], #4\n\t"
        "sxtb16 %[t], %[v0]\n\t"
        "smlad %[a0], %[qe], %[t], %[a0]\n\t"
        "sxtb16 %[t], %[v0], ror #8\n\t"
        "smlad %[a0], %[qo], %[t], %[a0]\n\t"
        "sxtb16 %[t], %[v1]\n\t"
        "smlad %[a1], %[qe], %[t], %[a1]\n\t"
        "sxtb16 %[t], %[v1], ror #8\n\t"
        "smlad %[a1], %[qo], %[t], %[a1]\n\t"
        "cmp %[q], %[qend]\n\t"
        "bne 1b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [k0] "+r"(k0), [k1] "+r"(k1), [q] "+r"(q), [v0] "=&r"(v0),
          [v1] "=&r"(v1), [qe] "=&r"(qe), [qo] "=&r"(qo), [t] "=&r"(t)
        : [qend] "r"(qp_end)
        : "cc", "memory");
    scores[0] = a0;
    scores[1] = a1;
  }
}

// Head dim 2: the query values (minus their zero point) in registers, one
// MLA per dimension and key, two keys per step (written out: GCC -Os took
// 26 instructions per two keys, this 13).
__attribute__((noinline, unused)) void qk_dim2_x2(int n, const int32_t* qt, int32_t init, const int8_t* k,
                                                  int k_stride, int32_t* scores) {
  const int32_t q0 = qt[0], q1 = qt[1];
  if (n >= 2) {
    int pairs = n / 2;
    int32_t a, b, c, d;
    const int8_t* t;
    __asm__ volatile(  // volatile: its effect is the stores
        "1:\n\t"
        "add %[t], %[k], %[ks]\n\t"
        "ldrsb %[a], [%[k]]\n\t"
        "ldrsb %[b], [%[k], #1]\n\t"
        "ldrsb %[c], [%[t]]\n\t"
        "ldrsb %[d], [%[t], #1]\n\t"
        "mla %[a], %[q0], %[a], %[init]\n\t"
        "mla %[a], %[q1], %[b], %[a]\n\t"
        "mla %[c], %[q0], %[c], %[init]\n\t"
        "mla %[c], %[q1], %[d], %[c]\n\t"
        "strd %[a], %[c], [%[s]], #8\n\t"
        "add %[k], %[t], %[ks]\n\t"
        "subs %[pairs], %[pairs], #1\n\t"
        "bne 1b"
        : [k] "+r"(k), [s] "+r"(scores), [pairs] "+r"(pairs), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c),
          [d] "=&r"(d), [t] "=&r"(t)
        : [q0] "r"(q0), [q1] "r"(q1), [init] "r"(init), [ks] "r"(k_stride)
        : "cc", "memory");
  }
  if (n & 1) scores[0] = init + q0 * k[0] + q1 * k[1];
}
}  // namespace

void qs8_qk_row__dsp(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                     int32_t k_zp, int32_t* scores) {
  const uint32_t qz = pair(q_zp), kz = pair(k_zp);
  if (EA_CM_DSP_ONLY && dim <= kQkUnpackedMaxDim) {
    uint32_t qp[kQkUnpackedMaxDim / 2];
    int32_t qt[3];
    uint32_t qsum = 0;
    const int groups = dim / 4;
    for (int i = 0; i < dim; ++i) qsum += static_cast<uint32_t>(q[i] - q_zp);
    for (int g = 0; g < groups; ++g) {
      const uint32_t vq = load4(q + 4 * g);
      qp[2 * g] = __ssub16(__sxtb16(vq), qz);
      qp[2 * g + 1] = __ssub16(sxtb16_ror8(vq), qz);
    }
    for (int i = 4 * groups; i < dim; ++i) qt[i - 4 * groups] = q[i] - q_zp;
    const int32_t corr = static_cast<int32_t>(qsum * static_cast<uint32_t>(k_zp));
    const int tail = dim - 4 * groups;
    if (dim == 2) {  // the harness's smallest head dim: its own loop
      qk_dim2_x2(n, qt, -corr, k, k_stride, scores);
      return;
    }
    if (groups == 0) {  // dims 1, 3: the tail loop below from -corr
      for (int j = 0; j < n; ++j) scores[j] = -corr;
    } else {
      qk_groups_x2(n / 2, qp, qp + 2 * groups, -corr, k, k_stride, scores);
      if (n & 1) {  // the last key alone: as a pair with itself
        int32_t last[2];
        qk_groups_x2(1, qp, qp + 2 * groups, -corr, k + static_cast<ptrdiff_t>(n - 1) * k_stride, 0, last);
        scores[n - 1] = last[0];
      }
    }
    if (tail != 0) {  // dims 4 groups + 1..3: the rest of each key, the query values in registers
      const int8_t* kt = k + 4 * groups;
      const int32_t t0 = qt[0], t1 = tail > 1 ? qt[1] : 0, t2 = tail > 2 ? qt[2] : 0;
      for (int j = 0; j < n; ++j, kt += k_stride) {
        int32_t acc = scores[j] + t0 * kt[0];
        if (tail > 1) acc += t1 * kt[1];
        if (tail > 2) acc += t2 * kt[2];
        scores[j] = acc;
      }
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc = 0;
    int i = 0;
    for (; i + 4 <= dim; i += 4) {
      const uint32_t vq = load4(q + i), vk = load4(kr + i);
      // SSUB16: plain (non-saturating) halfword subtraction; results fit int16.
      acc = __smlad(__ssub16(__sxtb16(vq), qz), __ssub16(__sxtb16(vk), kz), acc);
      acc = __smlad(__ssub16(sxtb16_ror8(vq), qz), __ssub16(sxtb16_ror8(vk), kz), acc);
    }
    for (; i < dim; ++i) acc += (q[i] - q_zp) * (kr[i] - k_zp);
    scores[j] = acc;
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
