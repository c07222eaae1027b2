// qs8_pv_row on Helium (qs8_pv_row__ref's contract): per key, VMLA of its
// probability into 4-channel int32 lanes of widened values.
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

}  // namespace kernels
}  // namespace edgeattn
#endif
