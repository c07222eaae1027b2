// qs8_qk_row on Helium (M-profile Vector Extension): one row of scores with
// VMLADAVA.S8 on the query split in two int8 halves (head dims 9-128), keys
// across the lanes (small head dims), or VMLADAVA.S16 on zero-point-corrected
// int16 lanes (the rest).
// Part of the Cortex-M int8 attention: the shared row driver
// (qs8_attention_rows: scores -> integer softmax -> weighted sum) runs
// the score row (Q.K^T of one query row) and the weighted sum (P.V) of
// the DSP extension or Helium. Every score is the exact int32
// sum_i (q_i - q_zp)(k_i - k_zp) the reference computes (zero-point-
// corrected values lie in [-255, 255] and fit int16), so results are
// bit-identical.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

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
// Head dims 17-32, the same split in two 16-lane chunks held in registers
// (A0, B0, A1, B1; the second chunk's lanes past dim are 0): per key one
// byte load of its first 16 bytes, one predicated load of the rest (no byte
// past the row is read), four VMLADAVA.S8 onto the row's start value and the
// store, written out (11 instructions per key with the loop; qk_row_chunks'
// C loop took about 45 at head dim 32). Same exact sum and the same
// qd_i = 255 refusal as qk_row_one_vector.
bool qk_row_two_vectors(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                        int32_t k_zp, int32_t* scores) {
  const mve_pred16_t all = vctp8q(16u), p = vctp8q(static_cast<uint32_t>(dim - 16));
  const int8x16_t q0 = vld1q_s8(q), q1 = vldrbq_z_s8(q + 16, p);
  if (q_zp == -128 && (vmaxvq_s8(-128, q0) == 127 || vmaxvq_p_s8(-128, q1, p) == 127)) return false;
  const int8x16_t zero = vdupq_n_s8(0);
  const int8_t zq = static_cast<int8_t>(q_zp);
  const int8x16_t a0 = vhsubq_m_n_s8(zero, q0, zq, all);
  const int8x16_t b0 = vsubq_m_s8(zero, vsubq_m_n_s8(zero, q0, zq, all), a0, all);
  const int8x16_t a1 = vhsubq_m_n_s8(zero, q1, zq, p);
  const int8x16_t b1 = vsubq_m_s8(zero, vsubq_m_n_s8(zero, q1, zq, p), a1, p);
  const uint32_t qsum = static_cast<uint32_t>(vaddvq_s8(q0)) + static_cast<uint32_t>(vaddvq_p_s8(q1, p)) -
                        static_cast<uint32_t>(dim * q_zp);
  const int32_t init = static_cast<int32_t>(0u - qsum * static_cast<uint32_t>(k_zp));
  if (n > 0) {
    int32_t acc;
    __asm__ volatile(  // volatile: its effect is the stores
        "vmsr p0, %[p]\n"
        "1:\n"
        "vldrb.u8 q0, [%[k]]\n"
        "vpst\n"
        "vldrbt.u8 q1, [%[k], #16]\n"
        "add %[k], %[k], %[s]\n"
        "mov %[acc], %[c]\n"
        "vmladava.s8 %[acc], %q[A0], q0\n"
        "vmladava.s8 %[acc], %q[B0], q0\n"
        "vmladava.s8 %[acc], %q[A1], q1\n"
        "vmladava.s8 %[acc], %q[B1], q1\n"
        "str %[acc], [%[o]], #4\n"
        "subs %[n], #1\n"
        "bne 1b\n"
        : [k] "+r"(k), [o] "+r"(scores), [n] "+r"(n), [acc] "=&Te"(acc)
        : [A0] "w"(a0), [B0] "w"(b0), [A1] "w"(a1), [B1] "w"(b1), [s] "r"(k_stride), [c] "r"(init),
          [p] "r"(static_cast<uint32_t>(p))
        : "q0", "q1", "memory", "cc");
  }
  return true;
}

// Head dims above 16 (up to kQkChunksMaxDim) in 16-lane chunks, the query
// minus its zero point qd_i in a stack copy (zero past dim). qd_i is in
// [-255, 255]; when every qd_i of the row fits int8 (a zero point near 0
// and no element at the far end: most rows of real models), the copy holds
// qd itself, one vector per chunk, else the split of qk_row_one_vector, A
// and B of chunk c at qd[32c] and qd[32c + 16], so one pointer walks both.
// Four keys per pass, all the row's whole groups of four in one asm block:
// per chunk the query's vectors are loaded once for the four keys (eight
// vector registers cannot hold a 64-dim query beside a key), so a chunk is
// 1 + 4 byte loads and 4 VMLADAVA.S8 (split: 2 + 4 and 8) plus the loop's
// 2, and a group adds 19 (start values, counters, the stores, the next
// rows): at head dim 64 about 16 instructions per key (split: 21), where
// the C form of one key per pass took about 40. The last chunk's key loads
// are predicated (VCTP8), so no byte past a row is read; the 1-3 keys after
// the last four take one key per pass in C. Same exact sum and, for the
// split, the same qd_i = 255 refusal as qk_row_one_vector. Out of line, so
// that the two-vector rows (head dims 17-32) save none of its registers.
constexpr int kQkChunksMaxDim = 128;

// The four-key loop, whole groups in one asm block: QUERY loads the
// chunk's query vectors (q0, or q0 and q1) from [qp] with post-increment
// (TAIL_QUERY: the same without writeback), DOT the VMLADAVAs of one key
// vector. The tail chunk's key loads run under P0 (set by the caller's
// VCTP8 value), so no byte past a row is read; the scalars a group needs
// come from memory operands, so the asm takes 12 general registers.
#define EA_QK_FOUR_KEYS(QUERY, TAIL_QUERY, DOT)                                          \
  "ldr %[n], %[pred]\n"                                                                  \
  "vmsr p0, %[n]\n"                                                                      \
  "2:\n"                                                                                 \
  "ldr %[s0], %[init]\n"                                                                 \
  "mov %[s1], %[s0]\n"                                                                   \
  "mov %[s2], %[s0]\n"                                                                   \
  "mov %[s3], %[s0]\n"                                                                   \
  "ldr %[qp], %[qdb]\n"                                                                  \
  "ldr %[n], %[chunks]\n"                                                                \
  "1:\n" QUERY                                                                           \
  "vldrb.u8 q2, [%[k0]], #16\n"                                                          \
  "vldrb.u8 q3, [%[k1]], #16\n" DOT("q2", "%[s0]")                                       \
  "vldrb.u8 q2, [%[k2]], #16\n" DOT("q3", "%[s1]")                                       \
  "vldrb.u8 q3, [%[k3]], #16\n" DOT("q2", "%[s2]") DOT("q3", "%[s3]")                    \
  "subs %[n], #1\n"                                                                      \
  "bne 1b\n"                                                                             \
  "ldr %[n], %[has_tail]\n"                                                              \
  "cmp %[n], #0\n"                                                                       \
  "beq 3f\n" TAIL_QUERY                                                                  \
  "vpstt\n"                                                                              \
  "vldrbt.u8 q2, [%[k0]]\n"                                                              \
  "vldrbt.u8 q3, [%[k1]]\n" DOT("q2", "%[s0]") DOT("q3", "%[s1]")                        \
  "vpstt\n"                                                                              \
  "vldrbt.u8 q2, [%[k2]]\n"                                                              \
  "vldrbt.u8 q3, [%[k3]]\n" DOT("q2", "%[s2]") DOT("q3", "%[s3]")                        \
  "3:\n"                                                                                 \
  "strd %[s0], %[s1], [%[o]]\n"                                                          \
  "strd %[s2], %[s3], [%[o], #8]\n"                                                      \
  "add %[o], %[o], #16\n"                                                                \
  "ldr %[n], %[step]\n"                                                                  \
  "add %[k0], %[k0], %[n]\n"                                                             \
  "add %[k1], %[k1], %[n]\n"                                                             \
  "add %[k2], %[k2], %[n]\n"                                                             \
  "add %[k3], %[k3], %[n]\n"                                                             \
  "subs %[g], #1\n"                                                                      \
  "bne 2b\n"
#define EA_QK_ONE(K, S) "vmladava.s8 " S ", q0, " K "\n"
#define EA_QK_SPLIT(K, S) "vmladava.s8 " S ", q0, " K "\nvmladava.s8 " S ", q1, " K "\n"
#define EA_QK_FOUR_KEYS_OPERANDS                                                                        \
  : [s0] "=&Te"(s0), [s1] "=&Te"(s1), [s2] "=&Te"(s2), [s3] "=&Te"(s3), [qp] "=&r"(qp), [n] "=&r"(cnt), \
    [k0] "+r"(k0), [k1] "+r"(k1), [k2] "+r"(k2), [k3] "+r"(k3), [g] "+r"(groups), [o] "+r"(out)         \
  : [init] "m"(init), [qdb] "m"(qd_base), [chunks] "m"(chunks), [has_tail] "m"(has_tail), [step] "m"(step), \
    [pred] "m"(pred)

__attribute__((noinline)) bool qk_row_chunks(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                                             int k_stride, int32_t k_zp, int32_t* scores) {
  alignas(16) int8_t qd[2 * kQkChunksMaxDim];
  const int8x16_t zero = vdupq_n_s8(0);
  const int8_t zq = static_cast<int8_t>(q_zp);
  uint32_t qsum = 0;
  int32_t qmax = -128, qmin = 127;
  for (int c = 0; c < dim; c += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(dim - c));
    const int8x16_t qv = vldrbq_z_s8(q + c, p);
    qmax = vmaxvq_p_s8(static_cast<int8_t>(qmax), qv, p);
    qmin = vminvq_p_s8(static_cast<int8_t>(qmin), qv, p);
    qsum += static_cast<uint32_t>(vaddvq_p_s8(qv, p));
  }
  const bool one = qmax - q_zp <= 127 && qmin - q_zp >= -128;
  if (!one && q_zp == -128 && qmax == 127) return false;
  const int w = one ? 16 : 32;  // bytes of the copy per chunk
  for (int c = 0; c < dim; c += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(dim - c));
    const int8x16_t qv = vldrbq_z_s8(q + c, p);
    const int8x16_t d = vsubq_m_n_s8(zero, qv, zq, p);  // qd mod 256
    if (one) {
      vst1q_s8(qd + c, d);
    } else {
      const int8x16_t a = vhsubq_m_n_s8(zero, qv, zq, p);
      vst1q_s8(qd + 2 * c, a);
      vst1q_s8(qd + 2 * c + 16, vsubq_m_s8(zero, d, a, p));
    }
  }
  qsum -= static_cast<uint32_t>(dim * q_zp);
  const int32_t init = static_cast<int32_t>(0u - qsum * static_cast<uint32_t>(k_zp));
  const int full = dim & ~15;  // >= 16: dim > 16 here
  int32_t groups = n >> 2;
  int32_t* out = scores;
  const int8_t* k0 = k;
  if (groups > 0) {
    const int8_t* k1 = k0 + k_stride;
    const int8_t* k2 = k1 + k_stride;
    const int8_t* k3 = k2 + k_stride;
    const int8_t* qd_base = qd;
    const int32_t chunks = full >> 4, has_tail = full < dim ? 1 : 0;
    const int32_t step = 4 * k_stride - full;  // the next group's rows from where the loads stopped
    const uint32_t pred = vctp8q(static_cast<uint32_t>(dim - full));
    const int8_t* qp;
    int32_t s0, s1, s2, s3, cnt;
    if (one) {
      __asm__ volatile(  // reads memory the operands do not name
          EA_QK_FOUR_KEYS("vldrb.u8 q0, [%[qp]], #16\n", "vldrb.u8 q0, [%[qp]]\n", EA_QK_ONE)
          EA_QK_FOUR_KEYS_OPERANDS
          : "q0", "q2", "q3", "memory", "cc");
    } else {
      __asm__ volatile(  // reads memory the operands do not name
          EA_QK_FOUR_KEYS("vldrb.u8 q0, [%[qp]], #16\nvldrb.u8 q1, [%[qp]], #16\n",
                          "vldrb.u8 q0, [%[qp]]\nvldrb.u8 q1, [%[qp], #16]\n", EA_QK_SPLIT)
          EA_QK_FOUR_KEYS_OPERANDS
          : "q0", "q1", "q2", "q3", "memory", "cc");
    }
  }
  // The 1-3 keys after the last four (k0 and out have moved past the groups).
  for (int j = n & ~3; j < n; ++j, k0 += k_stride) {
    int32_t acc = init;
    for (int c = 0; c < dim; c += 16) {
      const int8x16_t kv = vldrbq_z_s8(k0 + c, vctp8q(static_cast<uint32_t>(dim - c)));
      const int8_t* qc = qd + (c >> 4) * w;
      acc = vmladavaq_s8(acc, vld1q_s8(qc), kv);
      if (!one) acc = vmladavaq_s8(acc, vld1q_s8(qc + 16), kv);
    }
    *out++ = acc;
  }
  return true;
}
#undef EA_QK_FOUR_KEYS
#undef EA_QK_FOUR_KEYS_OPERANDS
#undef EA_QK_ONE
#undef EA_QK_SPLIT

// Head dims above 16: two vectors (17-32), the chunked form, or (above
// kQkChunksMaxDim, or a row they refuse) 8 lanes per step: widening byte loads to int16, zero points
// subtracted in int16, VMLADAVA.S16; the tail is predicated (VCTP16), so
// inactive lanes add nothing. Out of line, so that the small head dims'
// calls set up none of it.
__attribute__((noinline)) void qk_row_wide(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                                           int k_stride, int32_t k_zp, int32_t* scores) {
  if (dim <= 32 && qk_row_two_vectors(n, dim, q, q_zp, k, k_stride, k_zp, scores)) return;
  if (dim <= kQkChunksMaxDim && qk_row_chunks(n, dim, q, q_zp, k, k_stride, k_zp, scores)) return;
  const int16_t qz = static_cast<int16_t>(q_zp), kz = static_cast<int16_t>(k_zp);
  for (int j = 0; j < n; ++j) {
    const int8_t* kr = k + static_cast<ptrdiff_t>(j) * k_stride;
    int32_t acc = 0;
    for (int i = 0; i < dim; i += 8) {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(dim - i));
      const int16x8_t vq = vsubq_x_n_s16(vldrbq_z_s16(q + i, p), qz, p);
      const int16x8_t vk = vsubq_x_n_s16(vldrbq_z_s16(kr + i, p), kz, p);
      acc = vmladavaq_p_s16(acc, vq, vk, p);
    }
    scores[j] = acc;
  }
}

}  // namespace

void qs8_qk_row__helium(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k, int k_stride,
                        int32_t k_zp, int32_t* scores) {
  // The wide dims first, as a tail call. (The small ones' path still keeps
  // its arguments in other registers for it: 2-5 instructions per row, 0.1-
  // 0.3 % of an M55 attention layer at head dims <= 16.)
  if (dim > kQkKeysAcrossMaxDim) {
    qk_row_wide(n, dim, q, q_zp, k, k_stride, k_zp, scores);
    return;
  }
  if (dim > 8 && qk_row_one_vector(n, dim, q, q_zp, k, k_stride, k_zp, scores)) return;
  qk_row_keys_across(n, dim, q, q_zp, k, k_stride, k_zp, scores);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
