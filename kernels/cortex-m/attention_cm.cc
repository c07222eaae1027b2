// Cortex-M int8 attention: the shared row driver (qs8_attention_rows: one
// query row at a time, scores -> integer softmax -> weighted sum) with the
// score row (Q.K^T of one query row) and the weighted sum (P.V) on the DSP
// extension or Helium, and the additive layers' scores with requant_cm.h's
// requantizations. The softmax is the path's own (softmax_cm.cc); the
// additive layers keep the reference driver's softmax. Every score is the exact int32
// sum_i (q_i - q_zp)(k_i - k_zp) the reference computes (zero-point-corrected
// values lie in [-255, 255] and fit int16), so results are bit-identical.
#include "cortex-m/cortexm_kernels.h"

#if (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "requant_cm.h"
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include "dsp_common.h"
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif

namespace edgeattn {
namespace kernels {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
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

// P.V of one row, 4 channels x 2 keys per step. The probabilities of two
// keys are one word, (p_j, p_j+1) as int16 (p <= 32767). SXTB16 splits the
// value words of keys j and j+1 into channels (c, c+2) and, rotated by 8,
// (c+1, c+3); SMLABB / SMLATB / SMLABT / SMLATT multiply the halves as they
// are (one product each). A last 2-3 channels take two keys' halfwords as
// one word (v_j[c], v_j[c+1], v_j+1[c], v_j+1[c+1]): SXTB16 gives channel c
// of both keys, rotated by 8 channel c+1, and one SMLAD adds p_j v_j +
// p_j+1 v_j+1. The zero point comes out once per row: sum_j p_j (v_j - zv) =
// sum_j p_j v_j - zv sum_j p_j, in wrapping 32-bit arithmetic (the
// accumulating multiplies do not saturate), which gives the reference's
// int32 sum whenever that sum fits, as it does for probabilities from the
// softmax (|sum| <= 255 (32768 + n/2)). The accumulation loops are out of
// line with few arguments, so their values stay in registers (inline, at
// -Os, they were spilled per key).
namespace {
// acc[0..3] = channels 0-3 of rows vp + j stride weighted by probs[j], j < pairs * 2.
__attribute__((noinline)) void pv_x4(int pairs, const uint16_t* pj, const int8_t* vp, int stride, int32_t* acc) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  if (pairs > 0) {
    // Written out: GCC -Os kept the probability pointer and the stride in
    // memory (23 instructions per two keys instead of 18). Each product is
    // one SMLAxy on the halves as they are (p_j from the bottom of pp,
    // p_j+1 from the top): as many instructions as PKHBT/PKHTB + SMLAD,
    // one register fewer.
    uint32_t pp, w0, w1, e0, e1;
    __asm__(
        "1:\n\t"
        "ldr %[pp], [%[pj]], #4\n\t"
        "ldr %[w1], [%[vp], %[stride]]\n\t"
        "ldr %[w0], [%[vp]]\n\t"
        "add %[vp], %[vp], %[stride], lsl #1\n\t"
        "sxtb16 %[e0], %[w0]\n\t"  // (c, c+2) of keys j, j+1
        "sxtb16 %[e1], %[w1]\n\t"
        "sxtb16 %[w0], %[w0], ror #8\n\t"  // (c+1, c+3)
        "sxtb16 %[w1], %[w1], ror #8\n\t"
        "smlabb %[a0], %[pp], %[e0], %[a0]\n\t"
        "smlatb %[a0], %[pp], %[e1], %[a0]\n\t"
        "smlabt %[a2], %[pp], %[e0], %[a2]\n\t"
        "smlatt %[a2], %[pp], %[e1], %[a2]\n\t"
        "smlabb %[a1], %[pp], %[w0], %[a1]\n\t"
        "smlatb %[a1], %[pp], %[w1], %[a1]\n\t"
        "smlabt %[a3], %[pp], %[w0], %[a3]\n\t"
        "smlatt %[a3], %[pp], %[w1], %[a3]\n\t"
        "subs %[pairs], %[pairs], #1\n\t"
        "bne 1b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [pj] "+r"(pj), [vp] "+r"(vp),
          [pairs] "+r"(pairs), [pp] "=&r"(pp), [w0] "=&r"(w0), [w1] "=&r"(w1), [e0] "=&r"(e0), [e1] "=&r"(e1)
        : [stride] "r"(stride)
        : "cc", "memory");
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// acc[0..1] = channels 0-1, as pv_x4.
__attribute__((noinline)) void pv_x2(int pairs, const uint16_t* pj, const int8_t* vp, int stride, int32_t* acc) {
  int32_t a0 = 0, a1 = 0;
  for (; pairs > 0; --pairs, pj += 2, vp += 2 * stride) {
    uint32_t pp;
    uint16_t h0, h1;
    std::memcpy(&pp, pj, 4);
    std::memcpy(&h0, vp, 2);
    std::memcpy(&h1, vp + stride, 2);
    const uint32_t w = h0 | (static_cast<uint32_t>(h1) << 16);
    a0 = __smlad(pp, __sxtb16(w), a0);
    a1 = __smlad(pp, sxtb16_ror8(w), a1);
  }
  acc[0] = a0;
  acc[1] = a1;
}
}  // namespace

void qs8_pv_row__dsp(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride, int32_t v_zp,
                     int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out) {
  // sum_j p_j two keys per SMLAD (p <= 32767: the halves are non-negative int16).
  uint32_t psum = 0;
  for (int j = 0; j + 2 <= n; j += 2) {
    uint32_t pp;
    std::memcpy(&pp, probs + j, 4);
    psum = static_cast<uint32_t>(__smlad(pp, 0x00010001u, static_cast<int32_t>(psum)));
  }
  if (n & 1) psum += probs[n - 1];
  const uint32_t corr = static_cast<uint32_t>(v_zp) * psum;
  const ptrdiff_t stride = v_stride;
  const bool odd = (n & 1) != 0;
  const int8_t* v_last = odd ? v + (n - 1) * stride : v;  // the odd key's row
  const int32_t p_last = odd ? probs[n - 1] : 0;
  int c = 0;
  while (c < v_dim) {
    const int width = v_dim - c >= 4 ? 4 : (v_dim - c >= 2 ? 2 : 1);
    int32_t acc[4];  // set by the pass (no zeroing: at -Os that is a memset call)
    if (width == 4) {
      pv_x4(n / 2, probs, v + c, v_stride, acc);
    } else if (width == 2) {
      pv_x2(n / 2, probs, v + c, v_stride, acc);
    } else {
      uint32_t a = 0;  // wrapping, as SMLAD
      for (int j = 0; j < (n & ~1); ++j) a += static_cast<uint32_t>(probs[j] * v[j * stride + c]);
      acc[0] = static_cast<int32_t>(a);
    }
    for (int i = 0; i < width; ++i) {
      uint32_t a = static_cast<uint32_t>(acc[i]);
      if (odd) a += static_cast<uint32_t>(p_last * v_last[c + i]);
      out[c + i] = cm::requantize_s8(static_cast<int32_t>(a - corr), pv_mult, pv_shift, out_zp);
    }
    c += width;
  }
}

void qs8_attention__dsp(const QS8AttentionArgs& a) {
#if EA_CM_DSP_ONLY
  qs8_attention_rows({qs8_qk_row__dsp, qs8_softmax_row__dsp, qs8_pv_row__dsp}, a);
#else
  qs8_attention_rows({qs8_qk_row__dsp, qs8_softmax_row__ref, qs8_pv_row__dsp}, a);  // Helium build's fallback
#endif
}

// One query row's additive scores: the reference's loop
// (qs8_additive_score_row__ref) with 32-bit requantizations, inline. The
// pre-tanh step's multiplier is usually above 1/2 (1.61 in the bundled
// model, n = 30): without coverage it is one shift and one SMMULR per
// feature, otherwise requant_cm.h's requantize().
void qs8_additive_score_row__dsp(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores) {
  const int32_t n = 31 - a.pre_shift;
  if (a.coverage == nullptr && n >= 11 && n <= 31) {
    // Without coverage pre = (qp - zq) + (kp - zk) lies in [-510, 510], so
    // pre * 2^(32 - n) fits int32 and SMMULR of it by M, floor((pre M
    // 2^(32-n) + 2^31) / 2^32), is requant.h's floor((pre M + 2^(n-1)) / 2^n)
    // in two instructions (the Helium row's VRMULH form, one lane).
    const int32_t up = 32 - n;
    const int32_t zsum = a.qp_zp + a.kp_zp;
    for (int j = 0; j < limit; ++j) {
      const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
      int32_t acc = 0;
      for (int c = 0; c < a.attn_dim; ++c) {
        int32_t y;
        const uint32_t scaled = static_cast<uint32_t>(qp[c] + kp[c] - zsum) << up;
        __asm__("smmulr %0, %1, %2" : "=r"(y) : "r"(scaled), "r"(a.pre_mult));
        const int8_t index = cm::to_s8(y, a.pre_zp);
        acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
      }
      scores[j] = acc;
    }
    return;
  }
  for (int j = 0; j < limit; ++j) {
    const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
    int32_t acc = 0;
    const int32_t cj = a.coverage != nullptr ? a.coverage[j] : 0;
    for (int c = 0; c < a.attn_dim; ++c) {
      int32_t pre = (qp[c] - a.qp_zp) + (kp[c] - a.kp_zp);
      if (a.coverage != nullptr) pre += cm::requantize(a.cov_w[c] * cj, a.cov_mult, a.cov_shift);
      const int32_t y = cm::requantize(pre, a.pre_mult, a.pre_shift);
      const int8_t index = cm::to_s8(y, a.pre_zp);
      acc += static_cast<int32_t>(a.v_w[c]) * a.tanh_table[index + 128];
    }
    scores[j] = acc;
  }
}

void qs8_additive__dsp(const QS8AdditiveArgs& a) {
  qs8_additive_rows({qs8_additive_score_row__dsp, qs8_pv_row__dsp}, a);
}
#endif

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
namespace {
// Head dims up to this take the score row with keys across the lanes (9-16
// first try qk_row_one_vector).
constexpr int kQkKeysAcrossMaxDim = 16;

// Scores of 4 keys per vector for small head dims (dim <= 8 would leave most
// of an 8-lane row vector idle): per dimension i, a byte gather of k[j..j+3][i]
// (offsets 0, s, 2s, 3s) and one VMLA by q_i - q_zp. The key zero point
// comes out once per vector: sum_i (q_i - zq)(k_i - zk) = sum_i (q_i - zq) k_i
// - zk sum_i (q_i - zq), in wrapping 32-bit arithmetic, which is the exact
// sum the reference computes (it fits int32). The last 1-3 keys are
// predicated (inactive lanes read nothing and store nothing).
// Out of line: its written-out loop's registers would otherwise be saved on
// every call of qs8_qk_row__helium, the one-vector rows' too.
__attribute__((noinline)) void qk_row_keys_across(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                                                  int k_stride, int32_t k_zp, int32_t* scores) {
  int32_t qd[kQkKeysAcrossMaxDim];
  uint32_t qsum = 0;
  for (int i = 0; i < dim; ++i) {
    qd[i] = q[i] - q_zp;
    qsum += static_cast<uint32_t>(qd[i]);
  }
  const int32x4_t corr = vdupq_n_s32(static_cast<int32_t>(qsum * static_cast<uint32_t>(k_zp)));
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(k_stride));
  const ptrdiff_t step = static_cast<ptrdiff_t>(4) * k_stride;
  int j = 0;
  if (n >= 8 && dim > 0) {
    // 8 keys per step, written out (GCC 12 at -Os reloaded qd and the
    // pointers per dimension: about 13 instructions per score at dim 4,
    // here 8 per dimension and 8 keys plus 9): per dimension the byte
    // gathers of two 4-key vectors and their VMLA by qd_i.
    const uint32x4_t offs_hi = vaddq_n_u32(offs, static_cast<uint32_t>(4 * k_stride));
    const int32x4_t init = vnegq_s32(corr);
    int groups = n >> 3;
    const int32_t* qp;
    const int8_t* kk;
    int32_t i, r;
    __asm__ volatile(  // reads memory the operands do not name
        "1:\n"
        "vmov q0, %q[init]\n"
        "vmov q1, %q[init]\n"
        "mov %[qp], %[qd]\n"
        "mov %[i], %[dim]\n"
        "mov %[kk], %[k]\n"
        "2:\n"
        "ldr %[r], [%[qp]], #4\n"
        "vldrb.s32 q2, [%[kk], %q[lo]]\n"
        "vldrb.s32 q3, [%[kk], %q[hi]]\n"
        "adds %[kk], #1\n"
        "vmla.s32 q0, q2, %[r]\n"
        "vmla.s32 q1, q3, %[r]\n"
        "subs %[i], #1\n"
        "bne 2b\n"
        "vstrw.32 q0, [%[o]], #16\n"
        "vstrw.32 q1, [%[o]], #16\n"
        "add %[k], %[st8]\n"
        "subs %[g], #1\n"
        "bne 1b\n"
        : [qp] "=&r"(qp), [i] "=&r"(i), [kk] "=&r"(kk), [r] "=&r"(r), [k] "+r"(k), [o] "+r"(scores),
          [g] "+r"(groups)
        : [init] "w"(init), [lo] "w"(offs), [hi] "w"(offs_hi), [qd] "r"(qd), [dim] "r"(dim),
          [st8] "r"(2 * step)
        : "q0", "q1", "q2", "q3", "memory", "cc");
    j = n & ~7;
    scores -= j;  // the loops below index from the row's start
  }
  for (; j + 4 <= n; j += 4, k += step) {
    int32x4_t acc = vnegq_s32(corr);
    for (int i = 0; i < dim; ++i) acc = vmlaq_n_s32(acc, vldrbq_gather_offset_s32(k + i, offs), qd[i]);
    vst1q_s32(scores + j, acc);
  }
  if (j < n) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    int32x4_t acc = vnegq_s32(corr);
    for (int i = 0; i < dim; ++i) acc = vmlaq_n_s32(acc, vldrbq_gather_offset_z_s32(k + i, offs, p), qd[i]);
    vstrwq_p_s32(scores + j, acc, p);
  }
}

// Scores for head dims 9-16, one key per vector: the query's zero-point-
// corrected values qd_i = q_i - zq (in [-255, 254] here) split into two int8
// vectors, A = floor(qd / 2) (VHSUB) and B = qd - A, so each key is one byte
// load and two VMLADAVA.S8 of its raw bytes: sum_i (A_i + B_i) k_i. The key
// zero point comes out once per row as in qk_row_keys_across (the
// accumulator starts at -zk sum_i qd_i), so the wrapping 32-bit sum is the
// reference's exact one. Lanes past dim are 0 in A and B and not loaded. A
// row with qd_i = 255 (q_i = 127, zq = -128: B would be 128) returns false.
// The key loop is written out (two keys per step, 7 instructions per key):
// GCC 12 at -Os moved every accumulator through r0 and kept the loop's
// values on the stack.
bool qk_row_one_vector(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                       int32_t k_zp, int32_t* scores) {
  const mve_pred16_t p = vctp8q(static_cast<uint32_t>(dim));
  const int8x16_t qv = vldrbq_z_s8(q, p);
  if (q_zp == -128 && vmaxvq_p_s8(-128, qv, p) == 127) return false;
  const int8x16_t zero = vdupq_n_s8(0);
  const int8x16_t qa = vhsubq_m_n_s8(zero, qv, static_cast<int8_t>(q_zp), p);
  const int8x16_t qb = vsubq_m_s8(zero, vsubq_m_n_s8(zero, qv, static_cast<int8_t>(q_zp), p), qa, p);
  const uint32_t qsum = static_cast<uint32_t>(vaddvq_p_s8(qv, p)) - static_cast<uint32_t>(dim * q_zp);
  const int32_t init = static_cast<int32_t>(0u - qsum * static_cast<uint32_t>(k_zp));
  int pairs = n / 2;
  if (pairs > 0) {
    const int8_t* k2 = k + k_stride;
    int32_t a0, a1;
    __asm__ volatile(  // volatile: its effect is the stores
        "vmsr p0, %[p]\n"
        "1:\n"
        "vpstt\n"
        "vldrbt.u8 q0, [%[k]]\n"
        "vldrbt.u8 q1, [%[k2]]\n"
        "add %[k], %[k], %[s2]\n"
        "add %[k2], %[k2], %[s2]\n"
        "mov %[a0], %[c]\n"
        "mov %[a1], %[c]\n"
        "vmladava.s8 %[a0], %q[A], q0\n"
        "vmladava.s8 %[a0], %q[B], q0\n"
        "vmladava.s8 %[a1], %q[A], q1\n"
        "vmladava.s8 %[a1], %q[B], q1\n"
        "strd %[a0], %[a1], [%[o]], #8\n"
        "subs %[n], #1\n"
        "bne 1b\n"
        : [k] "+r"(k), [k2] "+r"(k2), [o] "+r"(scores), [n] "+r"(pairs), [a0] "=&Te"(a0), [a1] "=&Te"(a1)
        : [A] "w"(qa), [B] "w"(qb), [s2] "r"(2 * k_stride), [c] "r"(init), [p] "r"(static_cast<uint32_t>(p))
        : "q0", "q1", "memory", "cc");
  }
  if ((n & 1) != 0) {
    const int8x16_t kv = vldrbq_z_s8(k, p);
    *scores = vmladavaq_s8(vmladavaq_s8(init, qa, kv), qb, kv);
  }
  return true;
}

// P.V along the keys: what pv_quads reads (its offsets are fixed below).
struct PvParams {
  uint16x8_t offs[4];     // lane i of a quad: 16-bit offsets j * v_stride + i, keys j = 0..7
  const uint16_t* probs;
  int32_t chunks;         // keys / 8
  int32_t rem;            // keys % 8
  int32_t step8;          // 8 * v_stride
  int32_t init;           // -zv sum_j p_j
  int32_t mult, round, shl, zp;  // cm::RequantX4's, one multiplier and shift
  uint32_t pred;          // VCTP32 of the channels a quad stores
};
static_assert(offsetof(PvParams, probs) == 64 && offsetof(PvParams, step8) == 76 &&
                  offsetof(PvParams, init) == 80 && offsetof(PvParams, zp) == 96 && offsetof(PvParams, pred) == 100,
              "pv_quads' offsets");

// out[4q + i] = requantized sum_j p_j (v[j][c_q + i] - zv) for quads q =
// 0..quads-1 of channels at bq + 4q (lane i's offsets in p->offs). 8 keys
// per step: each channel's values of the 8 keys one byte gather (VLDRB.S16,
// 16-bit offsets from the quad's base) and one VMLADAVA.S16 with the 8
// probabilities (p_j <= 32767, so int16): 12 instructions per 32 products.
// The last 1-7 keys load under VCTP16 (inactive lanes read nothing and load
// as 0). The sums start at p->init, so the zero point's term comes out
// (wrapping, exact for softmax probabilities), then requant_x4_store's
// steps. Written out: GCC 12 at -Os kept the C form's pointers and
// counters on the stack.
__attribute__((noinline)) void pv_quads(const PvParams* p, const int8_t* bq, int8_t* out, int quads) {
  int32_t a0, a1, a2, a3, c, st;
  const int8_t* b;
  const uint16_t* pp;
  __asm__ volatile(  // reads and writes memory the operands do not name
      "vldrw.u32 q4, [%[P]]\n"
      "vldrw.u32 q5, [%[P], #16]\n"
      "vldrw.u32 q6, [%[P], #32]\n"
      "vldrw.u32 q7, [%[P], #48]\n"
      "ldr %[c], [%[P], #84]\n"
      "vdup.32 q2, %[c]\n"
      "ldr %[st], [%[P], #76]\n"
      "4:\n"
      "ldr %[a0], [%[P], #80]\n"
      "mov %[a1], %[a0]\n"
      "mov %[a2], %[a0]\n"
      "mov %[a3], %[a0]\n"
      "mov %[b], %[bq]\n"
      "ldr %[pp], [%[P], #64]\n"
      "ldr %[c], [%[P], #68]\n"
      "cmp %[c], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldrh.u16 q0, [%[pp]], #16\n"
      "vldrb.s16 q1, [%[b], q4]\n"
      "vmladava.s16 %[a0], q0, q1\n"
      "vldrb.s16 q1, [%[b], q5]\n"
      "vmladava.s16 %[a1], q0, q1\n"
      "vldrb.s16 q1, [%[b], q6]\n"
      "vmladava.s16 %[a2], q0, q1\n"
      "vldrb.s16 q1, [%[b], q7]\n"
      "vmladava.s16 %[a3], q0, q1\n"
      "add %[b], %[st]\n"
      "subs %[c], #1\n"
      "bne 1b\n"
      "2:\n"
      "ldr %[c], [%[P], #72]\n"
      "cmp %[c], #0\n"
      "beq 3f\n"
      "vctp.16 %[c]\n"
      "vpst\n"
      "vldrht.u16 q0, [%[pp]]\n"
      "vpst\n"
      "vldrbt.s16 q1, [%[b], q4]\n"
      "vmladava.s16 %[a0], q0, q1\n"
      "vpst\n"
      "vldrbt.s16 q1, [%[b], q5]\n"
      "vmladava.s16 %[a1], q0, q1\n"
      "vpst\n"
      "vldrbt.s16 q1, [%[b], q6]\n"
      "vmladava.s16 %[a2], q0, q1\n"
      "vpst\n"
      "vldrbt.s16 q1, [%[b], q7]\n"
      "vmladava.s16 %[a3], q0, q1\n"
      "3:\n"
      "vmov q0[2], q0[0], %[a0], %[a2]\n"
      "vmov q0[3], q0[1], %[a1], %[a3]\n"
      "vmulh.s32 q0, q0, q2\n"
      "ldr %[c], [%[P], #88]\n"
      "vadd.i32 q0, q0, %[c]\n"
      "ldr %[c], [%[P], #92]\n"
      "vshl.s32 q0, %[c]\n"
      "ldr %[c], [%[P], #96]\n"
      "vadd.i32 q0, q0, %[c]\n"
      "vqmovnb.s32 q3, q0\n"
      "vqmovnb.s16 q0, q3\n"
      "ldr %[c], [%[P], #100]\n"
      "vmsr p0, %[c]\n"
      "vpst\n"
      "vstrbt.32 q0, [%[o]]\n"
      "adds %[o], #4\n"
      "adds %[bq], #4\n"
      "subs %[q], #1\n"
      "bne 4b\n"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [c] "=&r"(c), [b] "=&r"(b),
        [pp] "=&r"(pp), [st] "=&r"(st), [bq] "+r"(bq), [o] "+l"(out), [q] "+r"(quads)
      : [P] "r"(p)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}
}  // namespace

void qs8_qk_row__helium(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                        int32_t k_zp, int32_t* scores) {
  if (dim > 8 && dim <= 16 && qk_row_one_vector(n, dim, q, q_zp, k, k_stride, k_zp, scores)) return;
  if (dim <= kQkKeysAcrossMaxDim) {
    qk_row_keys_across(n, dim, q, q_zp, k, k_stride, k_zp, scores);
    return;
  }
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

// P.V of one row along the keys (pv_quads). The row's last 1-3 channels run
// as the quad ending at its last channel (the overlap recomputes and stores
// the same outputs), so nothing outside the value rows is read; a row of
// under 4 channels repeats its last channel in the missing lanes and stores
// only its own. Rows whose key offsets pass 16 bits (long rows of wide
// values) or whose multiplier is 1/4 or more (requant_cm.h's vector form
// does not take it) run the DSP row.
void qs8_pv_row__helium(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride, int32_t v_zp,
                        int32_t pv_mult, int32_t pv_shift, int32_t out_zp, int8_t* out) {
  // (n - 1) v_stride is a byte offset inside the value rows, so it fits int32.
  if (n <= 0 || pv_shift > -2 || (n - 1) * v_stride > 65535) {
    qs8_pv_row__dsp(n, v_dim, probs, v, v_stride, v_zp, pv_mult, pv_shift, out_zp, out);
    return;
  }
  // sum_j p_j, 8 keys per VADDVA.U16.
  uint32_t psum = 0;
  int j = 0;
  for (; j + 8 <= n; j += 8) psum = vaddvaq_u16(psum, vld1q_u16(probs + j));
  if (j < n) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n - j));
    psum = vaddvaq_p_u16(psum, vldrhq_z_u16(probs + j, p), p);
  }
  PvParams prm;
  const uint16x8_t offs = vmulq_n_u16(vidupq_n_u16(0u, 1), static_cast<uint16_t>(v_stride));
  for (int i = 0; i < 4; ++i) prm.offs[i] = vaddq_n_u16(offs, static_cast<uint16_t>(i < v_dim ? i : v_dim - 1));
  prm.probs = probs;
  prm.chunks = n >> 3;
  prm.rem = n & 7;
  prm.step8 = 8 * v_stride;
  prm.init = static_cast<int32_t>(0u - static_cast<uint32_t>(v_zp) * psum);
  prm.mult = pv_mult;
  prm.round = int32_t{1} << (-2 - pv_shift);  // requant_x4_setup's 2^(n-33)
  prm.shl = pv_shift + 1;
  prm.zp = out_zp;
  prm.pred = vctp32q(static_cast<uint32_t>(v_dim < 4 ? v_dim : 4));
  const int full = v_dim >> 2;
  if (full > 0) pv_quads(&prm, v, out, full);
  if ((v_dim & 3) != 0) {
    const int c = v_dim < 4 ? 0 : v_dim - 4;
    pv_quads(&prm, v + c, out + c, 1);
  }
}

void qs8_attention__helium(const QS8AttentionArgs& a) {
  qs8_attention_rows({qs8_qk_row__helium, qs8_softmax_row__helium, qs8_pv_row__helium}, a);
}

// One query row's additive scores, 4 features per step: the pre-tanh sums in
// 32-bit lanes, their requantization as one vector, the tanh table read by a
// byte gather at index + 128, and VMLADAVA with v into the key's score. Without coverage
// pre = (qp - zq) + (kp - zk) lies in [-510, 510] (int8 values and zero
// points), so for n = 31 - pre_shift in [11, 31] pre * 2^(32 - n) fits int32
// and VRMULH of it by M is floor((pre M 2^(32-n) + 2^31) / 2^32) =
// floor((pre M + 2^(n-1)) / 2^n), requant.h's integer; n = 32 is VRMULH
// itself and n >= 33 requant_cm.h's VMULH form. Rows with coverage (its term
// is not bounded that way) or n < 11 take the DSP row (Helium requires the
// DSP extension).
void qs8_additive_score_row__helium(const QS8AdditiveArgs& a, const int8_t* qp, int limit, int32_t* scores) {
  const int32_t n = 31 - a.pre_shift;
  if (a.coverage != nullptr || n < 11) {
    qs8_additive_score_row__dsp(a, qp, limit, scores);
    return;
  }
  const int32x4_t mult = vdupq_n_s32(a.pre_mult);
  const int32_t zsum = a.qp_zp + a.kp_zp;
  for (int j = 0; j < limit; ++j) {
    const int8_t* kp = a.kp + static_cast<ptrdiff_t>(j) * a.kp_stride;
    int32_t acc = 0;
    for (int c = 0; c < a.attn_dim; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(a.attn_dim - c));
      const int32x4_t pre = vsubq_n_s32(vaddq_s32(vldrbq_z_s32(qp + c, p), vldrbq_z_s32(kp + c, p)), zsum);
      int32x4_t y;
      if (n >= 33) {
        y = vaddq_n_s32(vmulhq_s32(pre, mult), int32_t{1} << (n - 33));
        y = vshlq_s32(y, vdupq_n_s32(32 - n));
      } else {
        y = vrmulhq_s32(vshlq_s32(pre, vdupq_n_s32(32 - n)), mult);
      }
      y = vaddq_n_s32(vmaxq_s32(vminq_s32(y, vdupq_n_s32(512)), vdupq_n_s32(-512)), a.pre_zp);
      const int32x4_t index = vmaxq_s32(vminq_s32(y, vdupq_n_s32(127)), vdupq_n_s32(-128));
      const int32x4_t t = vldrbq_gather_offset_z_s32(a.tanh_table, vreinterpretq_u32_s32(vaddq_n_s32(index, 128)), p);
      acc = vmladavaq_s32(acc, t, vldrbq_z_s32(a.v_w + c, p));
    }
    scores[j] = acc;
  }
}

void qs8_additive__helium(const QS8AdditiveArgs& a) {
  qs8_additive_rows({qs8_additive_score_row__helium, qs8_pv_row__helium}, a);
}
#endif

}  // namespace kernels
}  // namespace edgeattn
#endif
