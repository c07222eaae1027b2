// qs8_linear with Helium (M-profile Vector Extension) on packed K4N16
// weights (packed_weights.h). Channel n's inputs 4g..4g+3 are the 32-bit word
// at (n % 16) * 4 of group g, groups 64 bytes apart. A word gather
// (VLDRW.U32 with byte offsets 0, 64, 128, 192) collects channel n's words of
// 4 consecutive groups: its 16 weights for inputs k..k+15, in input order, so
// VMLADAVA.S8 against 16 contiguous activations adds all 16 exact products to
// the channel's 32-bit scalar accumulator. Four channels per pass share one
// activation vector, and two activation rows share each gathered weight
// vector (a last odd row runs as a pair of itself). The sum is the
// reference's exact int32 dot product in another order, so the result is
// bit-identical.
//
// Tail (in_features % 16 inputs): the activations load under a VCTP8
// predicate (inactive lanes are not read and load as zero, so the padding
// weights of a partial group are multiplied by zero) and the gather under a
// VCTP32 predicate over the groups that exist, so no load leaves the row or
// the packed block. A pass computes 4 channels even past out_features (their
// weights are padding inside the block) but stores only real ones. When
// every channel's shift allows requant_cm.h's vector form, linear_pairs does
// all of it in one written-out block (sums started at the bias, each pass's
// outputs requantized as vectors); otherwise pass_x2 and the outputs one by
// one (store_scalar).
//
// A layer with per-channel requantization whose rows come in sixes takes
// linear_six first for its whole sixes (linear_helium_tile.cc: 6 rows x 8
// channels per pass, the sums in a 192-byte stack tile, 9 instructions per
// 96 multiply-adds against 16 per 128 here; qs8_linear: every shift in
// [-23, -2], qs8_linear_res: every channel in residual_rmul_form); the
// rows after them, and every other layer, take the pairs below.
//
// qs8_linear_res (contract 5b) is linear_pairs_res, the written-out block
// built from linear_pairs' macros with its own requantization and the
// residual between the pass and the stores, driven by the same run_pairs.
// It takes every (M, shift) quantize_multiplier gives; anything else, the
// reference (flash: no second generic path). qs8_linear_res16 (contract
// 5c, the int16 residual stream) is the same block with int16 residual
// loads and stores (linear_pairs_res16) and, for whole sixes of rows, the
// six-row tile with its own store (linear_six_res16).
//
// MVE word loads (gathers included) raise an unaligned UsageFault on
// addresses that are not 4-byte aligned, whatever CCR.UNALIGN_TRP says (qemu
// does not model this). The runtime gives 16-byte aligned weights
// (EA_ALIGNMENT); anything else takes the reference kernel.
//
// Header-only, included by the three variants; the functions they share have
// external linkage (inline, named namespace), so the link keeps one copy.
#ifndef EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_HELIUM_H_
#define EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_HELIUM_H_

#include <arm_mve.h>

#include <cstddef>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

namespace cm_linear_helium {

// The outputs one by one (a shift requant_cm.h's vector form does not take).
__attribute__((noinline)) inline void store_scalar(int32x4_t acc, int n0, int cnt, const int32_t* mult,
                                            const int32_t* shift, int per_channel, int32_t y_zp, int8_t* yr) {
  int32_t a[4];
  vst1q_s32(a, acc);
  for (int c = 0; c < cnt; ++c) {
    const int q = per_channel ? n0 + c : 0;
    yr[n0 + c] = cm::requantize_s8(a[c], mult[q], shift[q], y_zp);
  }
}

// One pass: channels n..n+3 of the packed block (their words of group g at
// wq + 64 g + 4c) for two activation rows xa and xb (the same row when only
// one is left), all inputs, into acc_a / acc_b (lane c: channel n + c).
// Written out (16 instructions per 16 inputs: two row loads, four word
// gathers, eight VMLADAVA.S8): GCC 12 at -Os moved the accumulators through
// one register and kept the loop's values on the stack (about 50 per 16
// inputs). The gathers use a vector of the 4 groups' addresses, advanced by
// 256 bytes (4 groups) with writeback; the tail loads the activations under
// VCTP8 (inactive lanes read nothing and load as 0) and the groups that
// exist under VCTP32.
__attribute__((always_inline)) inline void pass_x2(const int8_t* xa, const int8_t* xb, const int8_t* wq, int chunks,
                                                  int rem, uint32x4_t group_offs, int32x4_t* acc_a,
                                                  int32x4_t* acc_b) {
  // Addresses of groups 0..3 minus 256: the first gather pre-increments.
  uint32x4_t addr = vaddq_n_u32(group_offs, reinterpret_cast<uint32_t>(wq) - 256u);
  int32_t a0, a1, a2, a3, b0, b1, b2, b3;
  int32x4_t oa, ob;
  __asm__ volatile(  // reads memory the operands do not name
      "movs %[a0], #0\n movs %[a1], #0\n movs %[a2], #0\n movs %[a3], #0\n"
      "movs %[b0], #0\n movs %[b1], #0\n movs %[b2], #0\n movs %[b3], #0\n"
      "cmp %[c], #0\n"
      "beq 2f\n"
      "1:\n"
      "vldrb.u8 q0, [%[xa]], #16\n"
      "vldrb.u8 q1, [%[xb]], #16\n"
      "vldrw.u32 q2, [%q[ad], #256]!\n"
      "vmladava.s8 %[a0], q0, q2\n"
      "vmladava.s8 %[b0], q1, q2\n"
      "vldrw.u32 q2, [%q[ad], #4]\n"
      "vmladava.s8 %[a1], q0, q2\n"
      "vmladava.s8 %[b1], q1, q2\n"
      "vldrw.u32 q2, [%q[ad], #8]\n"
      "vmladava.s8 %[a2], q0, q2\n"
      "vmladava.s8 %[b2], q1, q2\n"
      "vldrw.u32 q2, [%q[ad], #12]\n"
      "vmladava.s8 %[a3], q0, q2\n"
      "vmladava.s8 %[b3], q1, q2\n"
      "subs %[c], #1\n"
      "bne 1b\n"
      "2:\n"
      "cmp %[r], #0\n"
      "beq 3f\n"
      "vctp.8 %[r]\n"
      "vpstt\n"
      "vldrbt.u8 q0, [%[xa]]\n"
      "vldrbt.u8 q1, [%[xb]]\n"
      "adds %[r], #3\n"
      "lsrs %[r], %[r], #2\n"
      "vctp.32 %[r]\n"
      "vpst\n"
      "vldrwt.u32 q2, [%q[ad], #256]\n"
      "vmladava.s8 %[a0], q0, q2\n"
      "vmladava.s8 %[b0], q1, q2\n"
      "vpst\n"
      "vldrwt.u32 q2, [%q[ad], #260]\n"
      "vmladava.s8 %[a1], q0, q2\n"
      "vmladava.s8 %[b1], q1, q2\n"
      "vpst\n"
      "vldrwt.u32 q2, [%q[ad], #264]\n"
      "vmladava.s8 %[a2], q0, q2\n"
      "vmladava.s8 %[b2], q1, q2\n"
      "vpst\n"
      "vldrwt.u32 q2, [%q[ad], #268]\n"
      "vmladava.s8 %[a3], q0, q2\n"
      "vmladava.s8 %[b3], q1, q2\n"
      "3:\n"
      "vmov %q[oa][2], %q[oa][0], %[a0], %[a2]\n"
      "vmov %q[oa][3], %q[oa][1], %[a1], %[a3]\n"
      "vmov %q[ob][2], %q[ob][0], %[b0], %[b2]\n"
      "vmov %q[ob][3], %q[ob][1], %[b1], %[b3]\n"
      : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0), [b1] "=&Te"(b1),
        [b2] "=&Te"(b2), [b3] "=&Te"(b3), [xa] "+r"(xa), [xb] "+r"(xb), [c] "+r"(chunks), [r] "+r"(rem),
        [ad] "+w"(addr), [oa] "=&w"(oa), [ob] "=&w"(ob)
      :
      : "q0", "q1", "q2", "memory", "cc");
  *acc_a = oa;
  *acc_b = ob;
}

// True when every channel's shift is <= -2 (requant_cm.h's vector form).
inline bool shifts_vector_ready(int out_features, const int32_t* shift, int per_channel) {
  const int n = per_channel ? out_features : 1;
  int32_t top = INT32_MIN;
  for (int i = 0; i < n; i += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
    top = vmaxvq_p_s32(top, vldrwq_z_s32(shift + i, p), p);
  }
  return top <= -2;
}

// What linear_pairs reads and updates (its offsets are fixed below).
struct PairsJob {
  uint32x4_t addr0;       // 0: the group's 4 group addresses minus 256 (pass_x2)
  int32x4_t unused_;      // 16
  int32x4_t unused2_;     // 32
  int32x4_t unused3_;     // 48
  int32x4_t bias;         // 64: the group's bias (0 past out_features)
  int32_t chunks, rem, groups;  // 80, 84, 88: in_features / 16, % 16, ceil(rem / 4)
  int32_t x_adv;                // 92: 2 x_stride - 16 chunks, after a pass to the next pair
  int32_t x_stride, y_stride, y_adv, zp;  // 96, 100, 104, 108
  uint32_t pred;                // 112: VCTP32 of the group's channels
  const int32_t* bias_p;        // 116: the next group's bias
  const int32_t* mult_p;        // 120: its multipliers (4 copies of one when per tensor)
  const int32_t* shift_p;       // 124: its shifts
  int32_t rq_step;              // 128: 16 per channel, 0 per tensor
  int32_t left;                 // 132: channels from the group on
  int32_t n0;                   // 136: the group's first channel
  int32_t block_adv;            // 140: from a block's fourth group to the next block's first
  const int8_t* x;              // 144: the first row
  int8_t* y;                    // 148: the group's outputs of the first row
  int32_t pairs;                // 152
};
static_assert(offsetof(PairsJob, chunks) == 80 && offsetof(PairsJob, x_adv) == 92 &&
                  offsetof(PairsJob, zp) == 108 && offsetof(PairsJob, pred) == 112 &&
                  offsetof(PairsJob, rq_step) == 128 && offsetof(PairsJob, block_adv) == 140 &&
                  offsetof(PairsJob, pairs) == 152,
              "linear_pairs' offsets");

// The row pairs of every channel group, in one written-out block: per group
// its bias, multipliers and shifts (requant_x4_setup's round and shl), then
// per pair pass_x2 with the sums started at the bias, the two rows'
// outputs requantized (requant_x4_store's steps) and stored under the
// group's channel predicate. Every shift must be <= -2 (the caller checks).
// The C form kept its constants and pointers on the stack (about 120
// instructions per group and 110 per pass; now about 45 and 105).
// A channel group: its predicate (saved), bias, multipliers (q4) and shifts,
// requant_x4_setup's round (q5) and shl = shift + 1 (q6); the first pair's
// pointers and the pair count.
#define EA_PAIRS_GROUP \
  "6:\n" /* a channel group */                                        \
  "ldr %[c], [%[P], #132]\n"                                          \
  "vctp.32 %[c]\n"                                                    \
  "vmrs %[c], p0\n"                                                   \
  "str %[c], [%[P], #112]\n"                                          \
  "ldr %[c], [%[P], #116]\n"                                          \
  "vpst\n"                                                            \
  "vldrwt.u32 q0, [%[c]]\n"                                           \
  "adds %[c], #16\n"                                                  \
  "str %[c], [%[P], #116]\n"                                          \
  "vstrw.32 q0, [%[P], #64]\n"                                        \
  "ldr %[xa], [%[P], #128]\n"                                         \
  "ldr %[c], [%[P], #120]\n"                                          \
  "vpst\n"                                                            \
  "vldrwt.u32 q4, [%[c]]\n"                                           \
  "add %[c], %[xa]\n"                                                 \
  "str %[c], [%[P], #120]\n"                                          \
  "ldr %[c], [%[P], #124]\n"                                          \
  "vpst\n"                                                            \
  "vldrwt.u32 q6, [%[c]]\n"                                           \
  "add %[c], %[xa]\n"                                                 \
  "str %[c], [%[P], #124]\n"                                          \
  "movs %[c], #2\n" /* round = 1 << (-2 - shift), shl = shift + 1 */  \
  "vneg.s32 q0, q6\n"                                                 \
  "vsub.i32 q0, q0, %[c]\n"                                           \
  "movs %[c], #1\n"                                                   \
  "vdup.32 q5, %[c]\n"                                                \
  "vshl.s32 q5, q5, q0\n"                                             \
  "vadd.i32 q6, q6, %[c]\n"                                           \
  "ldr %[xa], [%[P], #144]\n"                                         \
  "ldr %[ya], [%[P], #148]\n"                                         \
  "ldr %[n], [%[P], #152]\n"
// A row pair: pass_x2 with the sums started at the bias, into q0, q1.
#define EA_PAIRS_PASS \
  "5:\n" /* a row pair */                                              \
  "ldr %[c], [%[P], #96]\n"                                            \
  "add %[xb], %[xa], %[c]\n"                                           \
  "vldrw.u32 q3, [%[P]]\n"                                             \
  "ldrd %[a0], %[a1], [%[P], #64]\n" /* the sums start at the bias */  \
  "ldrd %[a2], %[a3], [%[P], #72]\n"                                   \
  "ldrd %[b0], %[b1], [%[P], #64]\n"                                   \
  "ldrd %[b2], %[b3], [%[P], #72]\n"                                   \
  "ldr %[c], [%[P], #80]\n"                                            \
  "cmp %[c], #0\n"                                                     \
  "beq 2f\n"                                                           \
  "1:\n"                                                               \
  "vldrb.u8 q0, [%[xa]], #16\n"                                        \
  "vldrb.u8 q1, [%[xb]], #16\n"                                        \
  "vldrw.u32 q2, [q3, #256]!\n"                                        \
  "vmladava.s8 %[a0], q0, q2\n"                                        \
  "vmladava.s8 %[b0], q1, q2\n"                                        \
  "vldrw.u32 q2, [q3, #4]\n"                                           \
  "vmladava.s8 %[a1], q0, q2\n"                                        \
  "vmladava.s8 %[b1], q1, q2\n"                                        \
  "vldrw.u32 q2, [q3, #8]\n"                                           \
  "vmladava.s8 %[a2], q0, q2\n"                                        \
  "vmladava.s8 %[b2], q1, q2\n"                                        \
  "vldrw.u32 q2, [q3, #12]\n"                                          \
  "vmladava.s8 %[a3], q0, q2\n"                                        \
  "vmladava.s8 %[b3], q1, q2\n"                                        \
  "subs %[c], #1\n"                                                    \
  "bne 1b\n"                                                           \
  "2:\n"                                                               \
  "ldr %[c], [%[P], #84]\n"                                            \
  "cmp %[c], #0\n"                                                     \
  "beq 3f\n"                                                           \
  "vctp.8 %[c]\n"                                                      \
  "vpstt\n"                                                            \
  "vldrbt.u8 q0, [%[xa]]\n"                                            \
  "vldrbt.u8 q1, [%[xb]]\n"                                            \
  "ldr %[c], [%[P], #88]\n"                                            \
  "vctp.32 %[c]\n"                                                     \
  "vpst\n"                                                             \
  "vldrwt.u32 q2, [q3, #256]\n"                                        \
  "vmladava.s8 %[a0], q0, q2\n"                                        \
  "vmladava.s8 %[b0], q1, q2\n"                                        \
  "vpst\n"                                                             \
  "vldrwt.u32 q2, [q3, #260]\n"                                        \
  "vmladava.s8 %[a1], q0, q2\n"                                        \
  "vmladava.s8 %[b1], q1, q2\n"                                        \
  "vpst\n"                                                             \
  "vldrwt.u32 q2, [q3, #264]\n"                                        \
  "vmladava.s8 %[a2], q0, q2\n"                                        \
  "vmladava.s8 %[b2], q1, q2\n"                                        \
  "vpst\n"                                                             \
  "vldrwt.u32 q2, [q3, #268]\n"                                        \
  "vmladava.s8 %[a3], q0, q2\n"                                        \
  "vmladava.s8 %[b3], q1, q2\n"                                        \
  "3:\n"                                                               \
  "vmov q0[2], q0[0], %[a0], %[a2]\n"                                  \
  "vmov q0[3], q0[1], %[a1], %[a3]\n"                                  \
  "vmov q1[2], q1[0], %[b0], %[b2]\n"                                  \
  "vmov q1[3], q1[1], %[b1], %[b3]\n"                                  \
  "ldr %[c], [%[P], #92]\n"                                            \
  "add %[xa], %[c]\n"
// requantize() of q0, q1, requant_x4's steps (every shift <= -2).
#define EA_PAIRS_REQUANT \
  "vmulh.s32 q0, q0, q4\n"  \
  "vmulh.s32 q1, q1, q4\n"  \
  "vadd.i32 q0, q0, q5\n"   \
  "vadd.i32 q1, q1, q5\n"   \
  "vshl.s32 q0, q0, q6\n"   \
  "vshl.s32 q1, q1, q6\n"
// qs8_linear's epilogue: the zero point.
#define EA_PAIRS_ZP \
  "ldr %[c], [%[P], #108]\n"  \
  "vadd.i32 q0, q0, %[c]\n"   \
  "vadd.i32 q1, q1, %[c]\n"
// sat8 of q0, q1 (requant_x4_store's narrows).
#define EA_PAIRS_NARROW \
  "vqmovnb.s32 q2, q0\n"  \
  "vqmovnb.s16 q0, q2\n"  \
  "vqmovnb.s32 q2, q1\n"  \
  "vqmovnb.s16 q1, q2\n"
// The group's channel predicate into p0.
#define EA_PAIRS_PRED \
  "ldr %[c], [%[P], #112]\n"  \
  "vmsr p0, %[c]\n"
// Both rows' bytes stored under it; the next row pair.
#define EA_PAIRS_STORE \
  "ldr %[c], [%[P], #100]\n"  \
  "add %[c], %[ya]\n"         \
  "vpstt\n"                   \
  "vstrbt.32 q0, [%[ya]]\n"   \
  "vstrbt.32 q1, [%[c]]\n"    \
  "ldr %[c], [%[P], #104]\n"  \
  "add %[ya], %[c]\n"         \
  "subs %[n], #1\n"           \
  "bne 5b\n"
// The next channel group, or the end.
#define EA_PAIRS_NEXT \
  "ldr %[c], [%[P], #148]\n" /* the next group */  \
  "adds %[c], #4\n"                                \
  "str %[c], [%[P], #148]\n"                       \
  "ldr %[c], [%[P], #132]\n"                       \
  "subs %[c], #4\n"                                \
  "str %[c], [%[P], #132]\n"                       \
  "ble 7f\n"                                       \
  "ldr %[c], [%[P], #136]\n"                       \
  "adds %[c], #4\n"                                \
  "str %[c], [%[P], #136]\n"                       \
  "tst %[c], #15\n"                                \
  "ite ne\n"                                       \
  "movne %[c], #16\n"                              \
  "ldreq %[c], [%[P], #140]\n"                     \
  "vldrw.u32 q0, [%[P]]\n"                         \
  "vadd.i32 q0, q0, %[c]\n"                        \
  "vstrw.32 q0, [%[P]]\n"                          \
  "b 6b\n"                                         \
  "7:\n"
#define EA_PAIRS_OUTPUTS                                                                                      \
  [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0), [b1] "=&Te"(b1),     \
      [b2] "=&Te"(b2), [b3] "=&Te"(b3), [c] "=&l"(c), [xb] "=&r"(xb), [xa] "=&r"(xa), [ya] "=&l"(ya),       \
      [n] "=&r"(n)

__attribute__((noinline)) inline void linear_pairs(PairsJob* p) {
  int32_t a0, a1, a2, a3, b0, b1, b2, b3, c, n;
  const int8_t *xa, *xb;
  int8_t* ya;
  __asm__ volatile(  // reads and writes memory the operands do not name
      EA_PAIRS_GROUP EA_PAIRS_PASS EA_PAIRS_REQUANT EA_PAIRS_ZP EA_PAIRS_NARROW EA_PAIRS_PRED EA_PAIRS_STORE
          EA_PAIRS_NEXT
      : EA_PAIRS_OUTPUTS
      : [P] "r"(p)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "memory", "cc");
}

// What linear_pairs_res reads besides its PairsJob.
struct PairsResJob {
  PairsJob base;
  const int8_t* res;       // 160: the group's residual of the first row
  const int8_t* res_pair;  // 164: the row pair's
  int32_t res_stride;      // 168: 0 for an odd last row (as x_stride)
  int32_t term_offset;     // 172: C
  int32_t term_mult;       // 176: A
  int32_t neg_shift;       // 180: -n
  uint32_t right;          // 184: the group's lanes with shift <= -2, as a VPR mask (0: none)
};
static_assert(sizeof(PairsJob) == 160 && offsetof(PairsResJob, res) == 160 &&
                  offsetof(PairsResJob, res_stride) == 168 && offsetof(PairsResJob, term_mult) == 176 &&
                  offsetof(PairsResJob, neg_shift) == 180 && offsetof(PairsResJob, right) == 184,
              "linear_pairs_res' offsets");

// linear_pairs for qs8_linear_res. Per group the lanes with shift <= -2
// (EA_PAIRS_RIGHT_MASK); per pair the same pass, then requantize():
// requant_cm.h's requantize_rmul (VQSHL by shift + 1, q6, and VRMULH) in
// every lane, and only in a group with such lanes requant_x4's form (q2,
// q3) put into them by VPSEL; then the residual: the pair's bytes under the
// group's predicate (VLDRB.S32 takes a low base register: c), A res + C by
// VMLAS (A in every lane of q7), the sum, >> n as a VSHL by -n. The pair's
// residual pointer moves on by two rows, the group's by 4 channels.
#define EA_PAIRS_RIGHT_MASK             \
  "movs %[c], #0\n"                     \
  "vcmp.s32 lt, q6, %[c]\n"             \
  "vmrs %[c], p0\n"                     \
  "str %[c], [%[P], #184]\n"
#define EA_PAIRS_RES_REQUANT            \
  "ldr %[c], [%[P], #184]\n"            \
  "cbz %[c], 8f\n"                      \
  "vmulh.s32 q2, q0, q4\n"              \
  "vmulh.s32 q3, q1, q4\n"              \
  "vadd.i32 q2, q2, q5\n"               \
  "vadd.i32 q3, q3, q5\n"               \
  "vshl.s32 q2, q2, q6\n"               \
  "vshl.s32 q3, q3, q6\n"               \
  "8:\n"                                \
  "vqshl.s32 q0, q0, q6\n"              \
  "vqshl.s32 q1, q1, q6\n"              \
  "vrmulh.s32 q0, q0, q4\n"             \
  "vrmulh.s32 q1, q1, q4\n"             \
  "cbz %[c], 9f\n"                      \
  "vmsr p0, %[c]\n"                     \
  "vpsel q0, q2, q0\n"                  \
  "vpsel q1, q3, q1\n"                  \
  "9:\n"
// The residual block of the pairs (int8 rows: LOAD = VLDRB; int16: VLDRH).
#define EA_PAIRS_RESIDUAL_LOADED(LOAD)  \
  "ldr %[c], [%[P], #164]\n"            \
  "ldrd %[a1], %[a2], [%[P], #168]\n"   \
  "vpst\n"                              \
  LOAD " q2, [%[c]]\n"                 \
  "add %[c], %[a1]\n"                   \
  "vpst\n"                              \
  LOAD " q3, [%[c]]\n"                 \
  "add %[c], %[a1]\n"                   \
  "str %[c], [%[P], #164]\n"            \
  "ldr %[a3], [%[P], #180]\n"           \
  "vmlas.s32 q2, q7, %[a2]\n"           \
  "vmlas.s32 q3, q7, %[a2]\n"           \
  "vadd.i32 q0, q0, q2\n"               \
  "vadd.i32 q1, q1, q3\n"               \
  "vshl.s32 q0, %[a3]\n"                \
  "vshl.s32 q1, %[a3]\n"
#define EA_PAIRS_RESIDUAL EA_PAIRS_RESIDUAL_LOADED("vldrbt.s32")

__attribute__((noinline)) inline void linear_pairs_res(PairsResJob* j) {
  PairsJob* p = &j->base;
  int32_t a0, a1, a2, a3, b0, b1, b2, b3, c, n;
  const int8_t *xa, *xb;
  int8_t* ya;
  __asm__ volatile(  // reads and writes memory the operands do not name
      "ldr %[c], [%[P], #176]\n"
      "vdup.32 q7, %[c]\n"
      EA_PAIRS_GROUP EA_PAIRS_RIGHT_MASK
      "ldr %[c], [%[P], #160]\n"
      "str %[c], [%[P], #164]\n"
      EA_PAIRS_PASS EA_PAIRS_RES_REQUANT EA_PAIRS_PRED EA_PAIRS_RESIDUAL EA_PAIRS_NARROW EA_PAIRS_STORE
      "ldr %[c], [%[P], #160]\n"
      "adds %[c], #4\n"
      "str %[c], [%[P], #160]\n"
      EA_PAIRS_NEXT
      : EA_PAIRS_OUTPUTS
      : [P] "r"(p)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}
// linear_pairs_res for qs8_linear_res16 (requant.h contract 5c): the same
// block on an int16 residual and output, with res, the pair's residual and
// the outputs addressed in bytes (run_pairs gets y as bytes and strides
// times 2) and C = 2^(n-1) (EpilogueRes16). The residual's halfwords by
// VLDRH.S32 (a low base register, c), A a + 2^(n-1) by VMLAS, the sum, >> n,
// one saturating narrow to int16 into the bottom halfwords (VQMOVNB.S32)
// and halfword stores (VSTRH.32); per group the residual and the outputs
// move on by 8 bytes (EA_PAIRS_NEXT's 4 and 4 more here). 5c's clamp to
// +-2^29 is left out as in 5b: requantize() as EA_PAIRS_RES_REQUANT forms
// it is exact in the shift <= -2 lanes (|y| < 2^29) and in the rmul form
// exact or, when acc << s saturates, beyond 2^29 on the reference's side
// with |y| <= 2^30 (requant_cm.h); |A a| <= 2^28, so the sum fits int32,
// and a term beyond +-2^29 saturates the output to the same int16 end as
// the clamped term does (requant.h's bounds for 5c).
#define EA_PAIRS_RESIDUAL16                    \
  EA_PAIRS_RESIDUAL_LOADED("vldrht.s32")       \
  "vqmovnb.s32 q0, q0\n"                       \
  "vqmovnb.s32 q1, q1\n"
#define EA_PAIRS_STORE16 \
  "ldr %[c], [%[P], #100]\n"  \
  "add %[c], %[ya]\n"         \
  "vpstt\n"                   \
  "vstrht.32 q0, [%[ya]]\n"   \
  "vstrht.32 q1, [%[c]]\n"    \
  "ldr %[c], [%[P], #104]\n"  \
  "add %[ya], %[c]\n"         \
  "subs %[n], #1\n"           \
  "bne 5b\n"

__attribute__((noinline)) inline void linear_pairs_res16(PairsResJob* j) {
  PairsJob* p = &j->base;
  int32_t a0, a1, a2, a3, b0, b1, b2, b3, c, n;
  const int8_t *xa, *xb;
  int8_t* ya;
  __asm__ volatile(  // reads and writes memory the operands do not name
      "ldr %[c], [%[P], #176]\n"
      "vdup.32 q7, %[c]\n"
      EA_PAIRS_GROUP EA_PAIRS_RIGHT_MASK
      "ldr %[c], [%[P], #160]\n"
      "str %[c], [%[P], #164]\n"
      EA_PAIRS_PASS EA_PAIRS_RES_REQUANT EA_PAIRS_PRED EA_PAIRS_RESIDUAL16 EA_PAIRS_STORE16
      "ldr %[c], [%[P], #160]\n"
      "adds %[c], #8\n"
      "str %[c], [%[P], #160]\n"
      "ldr %[c], [%[P], #148]\n"
      "adds %[c], #4\n"
      "str %[c], [%[P], #148]\n"
      EA_PAIRS_NEXT
      : EA_PAIRS_OUTPUTS
      : [P] "r"(p)
      : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}
#undef EA_PAIRS_STORE16
#undef EA_PAIRS_RESIDUAL16
#undef EA_PAIRS_RESIDUAL
#undef EA_PAIRS_RESIDUAL_LOADED
#undef EA_PAIRS_RES_REQUANT
#undef EA_PAIRS_RIGHT_MASK
#undef EA_PAIRS_OUTPUTS
#undef EA_PAIRS_GROUP
#undef EA_PAIRS_PASS
#undef EA_PAIRS_REQUANT
#undef EA_PAIRS_ZP
#undef EA_PAIRS_NARROW
#undef EA_PAIRS_PRED
#undef EA_PAIRS_STORE
#undef EA_PAIRS_NEXT

inline PairsJob& pairs_job(PairsJob& j) { return j; }
inline PairsJob& pairs_job(PairsResJob& j) { return j.base; }

// qs8_linear's epilogue for run_pairs: the zero point.
struct EpilogueS8 {
  using Job = PairsJob;
  int32_t zp;
  void init(Job* j) const { j->zp = zp; }
  void batch(Job*, int, bool) const {}
  static void pairs(Job* j) { linear_pairs(j); }
};

// qs8_linear_res's (requant.h residual_epilogue_s8): A, C (residual_offset,
// once per call) and -n, and the residual rows of the pairs from row m (two:
// pairs of two rows).
struct EpilogueResidual {
  using Job = PairsResJob;
  const QS8Residual* r;
  void init(Job* j) const {
    j->term_mult = r->term.mult;
    j->term_offset = residual_offset(r->term);
    j->neg_shift = -r->term.shift;
  }
  void batch(Job* j, int m, bool two) const {
    j->res = r->res + static_cast<ptrdiff_t>(m) * r->res_stride;
    j->res_stride = two ? r->res_stride : 0;
  }
  static void pairs(Job* j) { linear_pairs_res(j); }
  // Every channel has shift <= -2 (requant_x4's form) or is in
  // requant_cm.h's residual_rmul_form: every (M, shift) quantize_multiplier
  // gives.
  // Every channel in residual_rmul_form (linear_six's residual store).
  static bool six_ready(int out_features, const int32_t* mult, const int32_t* shift, int per_channel) {
    if (!per_channel) return false;
    for (int i = 0; i < out_features; ++i) {
      if (!cm::residual_rmul_form(mult[i], shift[i])) return false;
    }
    return true;
  }
  static bool ready(int out_features, const int32_t* mult, const int32_t* shift, int per_channel) {
    for (int i = 0; i < (per_channel ? out_features : 1); ++i) {
      if (shift[i] > -2 && !cm::residual_rmul_form(mult[i], shift[i])) return false;
    }
    return true;
  }
};

// qs8_linear_res16's (requant.h residual_epilogue_s16): A, 2^(n-1) and -n
// in the places of EpilogueResidual's A, C and -n, and the int16 residual
// rows of the pairs from row m in bytes (linear_pairs_res16). The channels'
// (M, shift) conditions are EpilogueResidual's (ready, six_ready).
struct EpilogueRes16 {
  using Job = PairsResJob;
  const QS16Residual* r;
  void init(Job* j) const {
    j->term_mult = r->term.mult;
    j->term_offset = int32_t{1} << (r->term.shift - 1);
    j->neg_shift = -r->term.shift;
  }
  void batch(Job* j, int m, bool two) const {
    j->res = reinterpret_cast<const int8_t*>(r->res + static_cast<ptrdiff_t>(m) * r->res_stride);
    j->res_stride = two ? 2 * r->res_stride : 0;
  }
  static void pairs(Job* j) { linear_pairs_res16(j); }
};

// Every group's row pairs with the block of Epi (w 4-byte aligned), an odd
// last row as a pair of itself (x_stride and y_stride 0: the second row's
// outputs are the same bytes stored again).
template <class Epi>
__attribute__((always_inline)) inline void run_pairs(int rows, int out_features, int chunks, int rem, uint32x4_t offs,
                                                     ptrdiff_t block_bytes, const int8_t* x, int x_stride,
                                                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                                                     const int32_t* shift, int per_channel, const Epi& epi, int8_t* y,
                                                     int y_stride) {
  const int32_t mult4[4] = {mult[0], mult[0], mult[0], mult[0]};
  const int32_t shift4[4] = {shift[0], shift[0], shift[0], shift[0]};
  typename Epi::Job ej;
  PairsJob& job = pairs_job(ej);
  job.chunks = chunks;
  job.rem = rem;
  job.groups = (rem + kPackK - 1) / kPackK;
  epi.init(&ej);
  job.rq_step = per_channel ? 16 : 0;
  job.block_adv = static_cast<int32_t>(block_bytes) - 3 * 16;
  for (int m = 0; m < rows;) {
    const int pairs = rows - m >= 2 ? (rows - m) / 2 : 1;
    const int xs = rows - m >= 2 ? x_stride : 0, ys = rows - m >= 2 ? y_stride : 0;
    job.addr0 = vaddq_n_u32(offs, reinterpret_cast<uint32_t>(w) - 256u);
    job.x_adv = 2 * xs - 16 * chunks;
    job.x_stride = xs;
    job.y_stride = ys;
    job.y_adv = 2 * ys;
    job.bias_p = bias;
    job.mult_p = per_channel ? mult : mult4;
    job.shift_p = per_channel ? shift : shift4;
    job.left = out_features;
    job.n0 = 0;
    job.x = x + static_cast<ptrdiff_t>(m) * x_stride;
    job.y = y + static_cast<ptrdiff_t>(m) * y_stride;
    job.pairs = pairs;
    epi.batch(&ej, m, rows - m >= 2);
    Epi::pairs(&ej);
    m += rows - m >= 2 ? 2 * pairs : 1;
  }
}

// The kernel proper; w is 4-byte aligned. Channel groups of 4 outer, so a
// group's bias and requantization constants are set up once; two activation
// rows per pass (an odd last row runs as a pair with itself and stores one).
__attribute__((noinline)) inline void linear_aligned(int rows, int out_features, int in_features,
                                              const int8_t* x, int x_stride, const int8_t* w,
                                              const int32_t* bias, const int32_t* mult,
                                              const int32_t* shift, int per_channel,
                                              int32_t y_zp, int8_t* y, int y_stride) {
  if (rows <= 0 || out_features <= 0) return;
  constexpr int kGroupBytes = kPackN * kPackK;
  const int chunks = in_features / 16;
  const int rem = in_features - chunks * 16;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kGroupBytes);  // 0 64 128 192
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  if (shifts_vector_ready(out_features, shift, per_channel)) {
    return run_pairs(rows, out_features, chunks, rem, offs, block_bytes, x, x_stride, w, bias, mult, shift,
                     per_channel, EpilogueS8{y_zp}, y, y_stride);
  }
  const int m = 0;
  for (int n0 = 0; n0 < out_features; n0 += 4) {
    const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
    const int cnt = out_features - n0 < 4 ? out_features - n0 : 4;
    const mve_pred16_t pc = vctp32q(static_cast<uint32_t>(cnt));
    const int32x4_t bv = vldrwq_z_s32(bias + n0, pc);
    const int32x4_t mv = per_channel ? vldrwq_z_s32(mult + n0, pc) : vdupq_n_s32(mult[0]);
    const int32x4_t sv = per_channel ? vldrwq_z_s32(shift + n0, pc) : vdupq_n_s32(shift[0]);
    cm::RequantX4 r;
    const bool vec = cm::requant_x4_setup(mv, sv, pc, &r);
    for (int mm = m; mm < rows; mm += 2) {
      const int8_t* xa = x + static_cast<ptrdiff_t>(mm) * x_stride;
      const bool two = mm + 1 < rows;
      int8_t* ya = y + static_cast<ptrdiff_t>(mm) * y_stride;
      int32x4_t acc_a, acc_b;
      pass_x2(xa, two ? xa + x_stride : xa, wq, chunks, rem, offs, &acc_a, &acc_b);
      acc_a = vaddq_s32(acc_a, bv);
      acc_b = vaddq_s32(acc_b, bv);
      if (vec) {
        cm::requant_x4_store(acc_a, r, y_zp, ya + n0, pc);
        if (two) cm::requant_x4_store(acc_b, r, y_zp, ya + y_stride + n0, pc);
      } else {
        store_scalar(acc_a, n0, cnt, mult, shift, per_channel, y_zp, ya);
        if (two) store_scalar(acc_b, n0, cnt, mult, shift, per_channel, y_zp, ya + y_stride);
      }
    }
  }
}

// Six-row passes (linear_helium_tile.cc): 8 channels x 6 rows per pass,
// the sums in a 192-byte tile, for the rows in whole sixes of a layer with
// per-channel requantization whose every shift is in [-23, -2] (the
// store's folded zero point; qs8_linear_res: every channel in
// residual_rmul_form); the other rows and layers take linear_aligned's
// pairs.
struct alignas(16) SixArgs {
  uint32x4_t addr0;        // 0: the 4 group addresses of the first chunk minus 256
  const int8_t* x[6];      // 16: the rows
  int32_t chunks, rem, groups;  // 40, 44, 48: in_features / 16, % 16, ceil(rem / 4)
  int32_t* tile;           // 52
};
struct alignas(16) SixStoreArgs {
  uint32x4_t tile_addr;    // 0: tile + {0, 24, 48, 72}
  int8_t* y;               // 16
  int32_t ys;              // 20
  const int32_t *bias, *mult, *shift;  // 24, 28, 32
  int32_t zp2, nc, rq_step;  // 36, 40, 44: 2 zp + 1, channels 1..8, 16 or 0
  const int8_t* res;       // 48: qs8_linear_res: the residual at the pass's first row and channel
  int32_t rs, a, c, neg_n;  // 52 .. 64: its row stride, A, C, -n
};
static_assert(offsetof(SixArgs, x) == 16 && offsetof(SixArgs, chunks) == 40 && offsetof(SixArgs, tile) == 52 &&
                  offsetof(SixStoreArgs, y) == 16 && offsetof(SixStoreArgs, bias) == 24 &&
                  offsetof(SixStoreArgs, zp2) == 36 && offsetof(SixStoreArgs, rq_step) == 44 &&
                  offsetof(SixStoreArgs, res) == 48 && offsetof(SixStoreArgs, neg_n) == 64,
              "linear_helium_tile.cc reads the arguments at these offsets");
extern "C" void ea_cm_linear_tile_6x8(const SixArgs* a);
extern "C" void ea_cm_linear_store_6x8(const SixStoreArgs* a);
extern "C" void ea_cm_linear_store_res_6x8(const SixStoreArgs* a);
extern "C" void ea_cm_linear_store_res16_6x8(const SixStoreArgs* a);

inline bool six_ready(int out_features, const int32_t* shift, int per_channel) {
  if (!per_channel) return false;
  for (int i = 0; i < out_features; ++i) {
    if (shift[i] > -2 || shift[i] < -23) return false;
  }
  return true;
}

// rows: a multiple of 6; w 4-byte aligned; per-channel requantization.
// res: qs8_linear_res's residual (every channel in residual_rmul_form), or
// null for qs8_linear (every shift in [-23, -2]: six_ready). One copy for
// both variants (linear_helium_tile.cc).
void linear_six(int rows, int out_features, int in_features, const int8_t* x, int x_stride, const int8_t* w,
                const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t y_zp, const QS8Residual* res,
                int8_t* y, int y_stride);

// Whole layers only (linear_pairs_res): a layer with a multiplier below
// 2^30 at a shift >= -1, which quantize_multiplier never gives, and
// unaligned w take the reference.
__attribute__((noinline)) inline void linear_res_aligned(int rows, int out_features, int in_features,
                                                         const int8_t* x, int x_stride, const int8_t* w,
                                                         const int32_t* bias, const int32_t* mult,
                                                         const int32_t* shift, int per_channel,
                                                         const QS8Residual& res, int8_t* y, int y_stride) {
  if (rows <= 0 || out_features <= 0) return;
  const int chunks = in_features / 16;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kPackN * kPackK);  // 0 64 128 192
  run_pairs(rows, out_features, chunks, in_features - chunks * 16, offs,
            static_cast<ptrdiff_t>(packed_block_bytes(in_features)), x, x_stride, w, bias, mult, shift, per_channel,
            EpilogueResidual{&res}, y, y_stride);
}

// linear_res_aligned for qs8_linear_res16: y and its stride go to run_pairs
// in bytes (the int16 outputs' addresses; EpilogueRes16 does the same for
// the residual).
__attribute__((noinline)) inline void linear_res16_aligned(int rows, int out_features, int in_features,
                                                           const int8_t* x, int x_stride, const int8_t* w,
                                                           const int32_t* bias, const int32_t* mult,
                                                           const int32_t* shift, int per_channel,
                                                           const QS16Residual& res, int16_t* y, int y_stride) {
  if (rows <= 0 || out_features <= 0) return;
  const int chunks = in_features / 16;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kPackN * kPackK);  // 0 64 128 192
  run_pairs(rows, out_features, chunks, in_features - chunks * 16, offs,
            static_cast<ptrdiff_t>(packed_block_bytes(in_features)), x, x_stride, w, bias, mult, shift, per_channel,
            EpilogueRes16{&res}, reinterpret_cast<int8_t*>(y), 2 * y_stride);
}

// linear_six's loop with the int16 residual store (linear_helium_tile.cc).
void linear_six_res16(int rows, int out_features, int in_features, const int8_t* x, int x_stride, const int8_t* w,
                      const int32_t* bias, const int32_t* mult, const int32_t* shift, const QS16Residual& res,
                      int16_t* y, int y_stride);

}  // namespace cm_linear_helium

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_CORTEX_M_LINEAR_HELIUM_H_
