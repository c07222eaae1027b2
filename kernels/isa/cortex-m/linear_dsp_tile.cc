// The inner loops of qs8_linear__dsp, qs8_linear_res__dsp and qs8_linear_res16__dsp
// (isa/cortex-m/linear_dsp.h): three activation rows against one 16-channel
// block of packed K4N16 weights, the 3 x 16 int32 sums in a tile the
// caller owns (192 B on its stack), written in assembly because it needs
// all 14 general registers (GCC -Os kept loop values on the stack).
//
// Per group of 4 inputs the three rows' words are loaded and sign-extended
// once (SXTB16 bytes 0,2 and SXTB16 ROR 8 bytes 1,3: 6 registers), then for
// each of the block's 16 channels (the group's 16 weight words are
// contiguous in K4N16, so the weight pointer only advances): its word (one
// LDRD per two channels), SXTB16 twice, LDM its three sums from the tile,
// six SMLAD, STM the sums back: 10.5 instructions per 12 multiply-adds, the
// 16 channels written out (no loop test); 15 more per group. The sums
// are the reference's exact int32 dot products in another order (SMLAD
// wraps like the reference's int32 arithmetic, |acc| < 2^31: ref/linear.cc),
// so the results are bit-identical. No heap, no buffer but the caller's tile
// (and, for the widened loop, the caller's buffer of widened weights).
#include "isa/cortex-m/cortexm.h"

#if EA_CM_DSP_ONLY

// Shared by both 3 x 16 tile loops. EA_TILE_ZERO_UNLESS_R5_ZERO: when r5
// (the `zero` argument) is not 0, clear the tile at r11 (48 words), then
// fall through to label 1. EA_TILE_EXTEND_ROWS: the three rows' words in
// r6, r8, r10 sign-extended into even halves (r5, r7, r9: inputs 0, 2) and
// odd halves (r6, r8, r10: inputs 1, 3).
#define EA_TILE_ZERO_UNLESS_R5_ZERO     \
  "cbz r5, 1f\n\t"                      \
  "movs r0, #0\n\t"                     \
  "movs r1, #0\n\t"                     \
  "movs r2, #0\n\t"                     \
  "mov r3, r11\n\t"                     \
  ".rept 16\n\t"                        \
  "stmia r3!, {r0, r1, r2}\n\t"         \
  ".endr\n"
#define EA_TILE_EXTEND_ROWS             \
  "sxtb16 r5, r6\n\t"                   \
  "sxtb16 r6, r6, ror #8\n\t"           \
  "sxtb16 r7, r8\n\t"                   \
  "sxtb16 r8, r8, ror #8\n\t"           \
  "sxtb16 r9, r10\n\t"                  \
  "sxtb16 r10, r10, ror #8\n\t"

// ea_cm_linear_tile_3x16(tile, x, xs, wq, groups, zero, xs2):
//   r0 tile: int32[16][3], channel c's sums of rows 0, 1, 2 at tile[3c ...];
//            zeroed first when zero != 0, then += the groups' products
//   r1 x: row 0's first input word; rows 1 and 2 at x + xs and x + xs2
//         (2 xs, or xs2 = xs for two rows, xs = xs2 = 0 for one); any
//         alignment
//   r2 xs: row 1's offset in bytes
//   r3 wq: the block's weights at the first group (64 bytes per group)
//   [sp] groups >= 1, [sp + 4] zero, [sp + 8] xs2
// Registers: r0-r2 the channel's three sums, r3 and lr two channels'
// weight words (r3 then the odd halves), r4 the even halves, r5-r10 the
// rows' extended words (even, odd per row), r11 the tile pointer, r12 the
// weight pointer; the frame holds xs, xs2, the activation pointer and its
// end.
// Two channels per step: one LDRD of their weight words (r3, lr), each
// extended into r4 (even) and r3 (odd) in turn.
#define EA_TILE_CHANNEL(W)              \
  "ldmia r11, {r0, r1, r2}\n\t"         \
  "sxtb16 r4, " W "\n\t"                \
  "sxtb16 r3, " W ", ror #8\n\t"        \
  "smlad r0, r5, r4, r0\n\t"            \
  "smlad r0, r6, r3, r0\n\t"            \
  "smlad r1, r7, r4, r1\n\t"            \
  "smlad r1, r8, r3, r1\n\t"            \
  "smlad r2, r9, r4, r2\n\t"            \
  "smlad r2, r10, r3, r2\n\t"           \
  "stmia r11!, {r0, r1, r2}\n\t"

__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_tile_3x16,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_tile_3x16\n\t"
    ".type ea_cm_linear_tile_3x16, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_tile_3x16:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #16\n\t"
    "ldr r4, [sp, #52]\n\t"            // groups
    "ldr r5, [sp, #60]\n\t"            // xs2
    "mov r11, r0\n\t"
    "mov r12, r3\n\t"
    "strd r2, r5, [sp]\n\t"            // xs, xs2
    "ldr r5, [sp, #56]\n\t"            // zero
    "str r1, [sp, #8]\n\t"             // the activation pointer
    "add r4, r1, r4, lsl #2\n\t"
    "str r4, [sp, #12]\n\t"            // its end
    EA_TILE_ZERO_UNLESS_R5_ZERO
    "1:\n\t"                           // a group: the rows' words
    "ldm sp, {r3, r4, lr}\n\t"          // xs, xs2, the activation pointer
    "ldr r8, [lr, r3]\n\t"
    "ldr r10, [lr, r4]\n\t"
    "ldr r6, [lr], #4\n\t"
    "str lr, [sp, #8]\n\t"
    EA_TILE_EXTEND_ROWS
    ".rept 8\n\t"                      // the block's 16 channels
    "ldrd r3, lr, [r12], #8\n\t"
    EA_TILE_CHANNEL("r3") EA_TILE_CHANNEL("lr")
    ".endr\n\t"
    "sub r11, r11, #192\n\t"
    "ldrd r3, lr, [sp, #8]\n\t"
    "cmp r3, lr\n\t"
    "bne 1b\n\t"
    "add sp, sp, #16\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_tile_3x16, .-ea_cm_linear_tile_3x16\n\t"
    ".text");
#undef EA_TILE_CHANNEL

// ea_cm_linear_tile_3x16_wide(tile, x, xs, wide, groups, zero, xs2): the same
// pass on a block whose weights linear_dsp.h's widen_block has already
// sign-extended (per group and channel two words: SXTB16 of its weight word,
// then SXTB16 ROR 8), so a channel is one LDRD, the LDM of its three sums,
// six SMLAD and the STM: 9 instructions per 12 multiply-adds. Arguments as
// above; wide advances 128 bytes per group. Registers: r0-r2 the sums, r3
// and r4 the channel's even and odd weight halves, r5-r10 the rows, r11 the
// tile, r12 the weights, lr the activation pointer; the frame holds xs, xs2
// and the activations' end.
#define EA_TILE_CHANNEL_WIDE            \
  "ldrd r3, r4, [r12], #8\n\t"          \
  "ldmia r11, {r0, r1, r2}\n\t"         \
  "smlad r0, r5, r3, r0\n\t"            \
  "smlad r0, r6, r4, r0\n\t"            \
  "smlad r1, r7, r3, r1\n\t"            \
  "smlad r1, r8, r4, r1\n\t"            \
  "smlad r2, r9, r3, r2\n\t"            \
  "smlad r2, r10, r4, r2\n\t"           \
  "stmia r11!, {r0, r1, r2}\n\t"

__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_tile_3x16_wide,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_tile_3x16_wide\n\t"
    ".type ea_cm_linear_tile_3x16_wide, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_tile_3x16_wide:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #16\n\t"
    "ldr r4, [sp, #52]\n\t"            // groups
    "ldr r5, [sp, #60]\n\t"            // xs2
    "mov r11, r0\n\t"
    "mov r12, r3\n\t"
    "mov lr, r1\n\t"                   // the activation pointer
    "strd r2, r5, [sp]\n\t"            // xs, xs2
    "ldr r5, [sp, #56]\n\t"            // zero
    "add r4, r1, r4, lsl #2\n\t"
    "str r4, [sp, #8]\n\t"             // the activations' end
    EA_TILE_ZERO_UNLESS_R5_ZERO
    "1:\n\t"                           // a group: the rows' words
    "ldrd r3, r4, [sp]\n\t"            // xs, xs2
    "ldr r8, [lr, r3]\n\t"
    "ldr r10, [lr, r4]\n\t"
    "ldr r6, [lr], #4\n\t"
    EA_TILE_EXTEND_ROWS
    ".rept 16\n\t"                     // the block's 16 channels
    EA_TILE_CHANNEL_WIDE
    ".endr\n\t"
    "sub r11, r11, #192\n\t"
    "ldr r3, [sp, #8]\n\t"
    "cmp lr, r3\n\t"
    "bne 1b\n\t"
    "add sp, sp, #16\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_tile_3x16_wide, .-ea_cm_linear_tile_3x16_wide\n\t"
    ".text");
#undef EA_TILE_CHANNEL_WIDE
#undef EA_TILE_ZERO_UNLESS_R5_ZERO
#undef EA_TILE_EXTEND_ROWS

// ea_cm_linear_widen(wide, wq, words): linear_dsp.h's widen_block, four
// weight words per step (13 instructions): r0 wide (two words out per word
// in), r1 wq (word-aligned, as the packed weights are), r2 words (a
// multiple of 4, >= 4).
__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_widen,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_widen\n\t"
    ".type ea_cm_linear_widen, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_widen:\n\t"
    "push {r4-r9}\n"
    "1:\n\t"
    "ldmia r1!, {r3, r4, r5, r6}\n\t"
    "sxtb16 r7, r3\n\t"
    "sxtb16 r8, r3, ror #8\n\t"
    "sxtb16 r9, r4\n\t"
    "sxtb16 r12, r4, ror #8\n\t"
    "stmia r0!, {r7, r8, r9, r12}\n\t"
    "sxtb16 r7, r5\n\t"
    "sxtb16 r8, r5, ror #8\n\t"
    "sxtb16 r9, r6\n\t"
    "sxtb16 r12, r6, ror #8\n\t"
    "stmia r0!, {r7, r8, r9, r12}\n\t"
    "subs r2, #4\n\t"
    "bne 1b\n\t"
    "pop {r4-r9}\n\t"
    "bx lr\n\t"
    ".size ea_cm_linear_widen, .-ea_cm_linear_widen\n\t"
    ".text");

// ea_cm_linear_store_3x16(tile, y, ys, args): qs8_linear's outputs of a
// whole pass (three rows, args->nc channels, per-channel requantization with
// every channel's shift in [-23, -2]) from the tile:
//   r0 tile, r1 y (row 0's first output; rows 1, 2 at y + ys, y + 2 ys),
//   r2 ys, r3 args (StoreArgs3x16 in linear_dsp.h: bias, mult, shift at
//   the block's first channel, zp, nc).
// Per channel requant_cm.h's SMMLA form with the zero point folded into the
// rounding term: r = 2^(n-33) + zp 2^(n-32), n = 31 - shift, so that
// (SMMLA(acc + bias, M, r)) >> (n - 32) = requantize(acc + bias) + zp
// exactly (zp 2^(n-32) is a multiple of 2^(n-32); |requantize| <= 2^30 and
// |zp 2^(n-32)| <= 2^29 for n <= 54, so nothing wraps), then SSAT #8:
// requant.h's clamp to [-512, 512] before the zero point cannot change the
// byte (requant_cm.h's to_s8). 25 instructions per channel of 3 outputs.
__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_store_3x16,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_store_3x16\n\t"
    ".type ea_cm_linear_store_3x16, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_store_3x16:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #8\n\t"
    "mov r8, r0\n\t"
    "mov r9, r1\n\t"
    "mov r10, r2\n\t"
    "ldr r11, [r3]\n\t"                // bias
    "ldr r12, [r3, #4]\n\t"            // mult
    "ldr lr, [r3, #8]\n\t"             // shift
    "ldr r4, [r3, #12]\n\t"            // zp
    "ldr r6, [r3, #16]\n\t"            // nc
    "lsls r4, r4, #1\n\t"
    "adds r4, #1\n\t"
    "str r4, [sp]\n\t"                 // 2 zp + 1
    "add r6, r1, r6\n"                 // y's end
    "1:\n\t"
    "ldmia r8!, {r0, r1, r2}\n\t"
    "ldr r3, [r11], #4\n\t"            // bias
    "ldr r4, [r12], #4\n\t"            // M
    "ldr r5, [lr], #4\n\t"             // shift
    "mvns r5, r5\n\t"                  // n - 32 = -shift - 1 >= 1
    "ldr r7, [sp]\n\t"
    "lsls r7, r5\n\t"
    "asrs r7, r7, #1\n\t"              // (2 zp + 1) 2^(n-33) = 2^(n-33) + zp 2^(n-32)
    "add r0, r3\n\t"
    "smmla r0, r0, r4, r7\n\t"
    "asrs r0, r5\n\t"
    "ssat r0, #8, r0\n\t"
    "add r1, r3\n\t"
    "smmla r1, r1, r4, r7\n\t"
    "asrs r1, r5\n\t"
    "ssat r1, #8, r1\n\t"
    "add r2, r3\n\t"
    "smmla r2, r2, r4, r7\n\t"
    "asrs r2, r5\n\t"
    "ssat r2, #8, r2\n\t"
    "strb r1, [r9, r10]\n\t"
    "strb r2, [r9, r10, lsl #1]\n\t"
    "strb r0, [r9], #1\n\t"
    "cmp r9, r6\n\t"
    "bne 1b\n\t"
    "add sp, sp, #8\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_store_3x16, .-ea_cm_linear_store_3x16\n\t"
    ".text");

// ea_cm_linear_store_res_3x16(tile, y, ys, args): qs8_linear_res's outputs
// of a whole pass (three rows, args->nc channels, every channel in
// requant_cm.h's residual_rmul_form) from the tile:
//   r0 tile, r1 y, r2 ys, r3 args (StoreResArgs3x16 in linear_dsp.h).
// Per output requant_cm.h's requantize_rmul (acc + bias shifted left by
// s = shift + 1, saturated as there when it does not fit, then SMMULR) and
// residual_s8: (y + A a + C) >> n, SSAT #8, with C added by the SMMLAR that
// rounds y (SMMLAR with accumulator C is C + SMMULR exactly, and the sum
// fits int32 by requant.h's bound, as in residual_s8). Channel c's bias,
// multiplier and shift at the bias pointer and two fixed distances from it.
// 52 instructions per channel of 3 outputs.
#define EA_RES_RQ(R)                          \
  "lsl r6, " R ", r5\n\t"                     \
  "asr r7, r6, r5\n\t"                        \
  "cmp r7, " R "\n\t"                         \
  "itt ne\n\t"                                \
  "mvnne r6, #0x80000000\n\t"                 \
  "eorne r6, r6, " R ", asr #31\n\t"          \
  "smmlar " R ", r6, r4, r3\n\t"
#define EA_RES_OUT(R, LOAD)                   \
  LOAD "\n\t"                                 \
  "mla " R ", r6, r4, " R "\n\t"              \
  "asrs " R ", r5\n\t"                        \
  "ssat " R ", #8, " R "\n\t"
#define EA_RES_OUT16(R, LOAD)                 \
  LOAD "\n\t"                                 \
  "mla " R ", r6, r4, " R "\n\t"              \
  "asrs " R ", r5\n\t"                        \
  "ssat " R ", #16, " R "\n\t"
__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_store_res_3x16,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_store_res_3x16\n\t"
    ".type ea_cm_linear_store_res_3x16, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_store_res_3x16:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #28\n\t"
    "mov r8, r0\n\t"
    "mov r9, r1\n\t"
    "mov r10, r2\n\t"
    "ldm r3, {r0, r1, r2, r4, r5, r6, r7}\n\t"  // bias, mult - bias, shift - bias, res, rs, A, C
    "mov lr, r0\n\t"
    "mov r11, r4\n\t"
    "mov r12, r5\n\t"
    "strd r1, r2, [sp]\n\t"            // the distances
    "strd r6, r7, [sp, #8]\n\t"        // A, C
    "ldrd r4, r5, [r3, #28]\n\t"       // n, nc
    "str r4, [sp, #16]\n\t"
    "add r5, r9, r5\n\t"
    "str r5, [sp, #20]\n"              // y's end
    "1:\n\t"
    "ldmia r8!, {r0, r1, r2}\n\t"
    "ldrd r4, r5, [sp]\n\t"
    "ldr r4, [lr, r4]\n\t"             // M
    "ldr r5, [lr, r5]\n\t"             // shift
    "ldr r3, [lr], #4\n\t"             // bias
    "adds r5, #1\n\t"                  // s
    "add r0, r3\n\t"
    "add r1, r3\n\t"
    "add r2, r3\n\t"
    "ldr r3, [sp, #12]\n\t"            // C
    EA_RES_RQ("r0") EA_RES_RQ("r1") EA_RES_RQ("r2")
    "ldr r4, [sp, #8]\n\t"             // A
    "ldr r5, [sp, #16]\n\t"            // n
    EA_RES_OUT("r1", "ldrsb r6, [r11, r12]")
    "strb r1, [r9, r10]\n\t"
    EA_RES_OUT("r2", "ldrsb r6, [r11, r12, lsl #1]")
    "strb r2, [r9, r10, lsl #1]\n\t"
    EA_RES_OUT("r0", "ldrsb r6, [r11], #1")
    "strb r0, [r9], #1\n\t"
    "ldr r6, [sp, #20]\n\t"
    "cmp r9, r6\n\t"
    "bne 1b\n\t"
    "add sp, sp, #28\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_store_res_3x16, .-ea_cm_linear_store_res_3x16\n\t"
    ".text");

// ea_cm_linear_store_res16_3x16(tile, y, ys, args): qs8_linear_res16's
// outputs of a whole pass (requant.h contract 5c; three rows, args->nc
// channels, every channel in residual_rmul_form) from the tile:
//   r0 tile, r1 y (int16, row 0's first output), r2 ys in bytes, r3 args
//   (StoreRes16Args3x16 in linear_dsp.h: the residual's stride in bytes,
//   A, 2^(n-1), n).
// The steps of ea_cm_linear_store_res_3x16 above on int16 residuals and
// outputs: requantize_rmul (|y| <= 2^30, the same int32 as requantize()
// while it is below 2^29 in magnitude, else at least 2^29 with its sign) with
// 2^(n-1) added by the SMMLAR, A a by one MLA, >> n and SSAT #16. Contract
// 5c's clamp to +-2^29 is left out: a term of 2^29 or more in magnitude
// saturates the output whatever a is (requant.h), and an unclamped one of
// the same sign only more so; |y + A a + 2^(n-1)| <= 2^30 + 2^28 + 2^12
// fits int32.
__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_store_res16_3x16,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_store_res16_3x16\n\t"
    ".type ea_cm_linear_store_res16_3x16, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_store_res16_3x16:\n\t"
    "push {r4-r11, lr}\n\t"
    "sub sp, sp, #28\n\t"
    "mov r8, r0\n\t"
    "mov r9, r1\n\t"
    "mov r10, r2\n\t"
    "ldm r3, {r0, r1, r2, r4, r5, r6, r7}\n\t"  // bias, mult - bias, shift - bias, res, rs, A, 2^(n-1)
    "mov lr, r0\n\t"
    "mov r11, r4\n\t"
    "mov r12, r5\n\t"
    "strd r1, r2, [sp]\n\t"            // the distances
    "strd r6, r7, [sp, #8]\n\t"        // A, 2^(n-1)
    "ldrd r4, r5, [r3, #28]\n\t"       // n, nc
    "str r4, [sp, #16]\n\t"
    "add r5, r9, r5, lsl #1\n\t"
    "str r5, [sp, #20]\n"              // y's end
    "1:\n\t"
    "ldmia r8!, {r0, r1, r2}\n\t"
    "ldrd r4, r5, [sp]\n\t"
    "ldr r4, [lr, r4]\n\t"             // M
    "ldr r5, [lr, r5]\n\t"             // shift
    "ldr r3, [lr], #4\n\t"             // bias
    "adds r5, #1\n\t"                  // s
    "add r0, r3\n\t"
    "add r1, r3\n\t"
    "add r2, r3\n\t"
    "ldr r3, [sp, #12]\n\t"            // 2^(n-1)
    EA_RES_RQ("r0") EA_RES_RQ("r1") EA_RES_RQ("r2")
    "ldr r4, [sp, #8]\n\t"             // A
    "ldr r5, [sp, #16]\n\t"            // n
    EA_RES_OUT16("r1", "ldrsh r6, [r11, r12]")
    "strh r1, [r9, r10]\n\t"
    EA_RES_OUT16("r2", "ldrsh r6, [r11, r12, lsl #1]")
    "strh r2, [r9, r10, lsl #1]\n\t"
    EA_RES_OUT16("r0", "ldrsh r6, [r11], #2")
    "strh r0, [r9], #2\n\t"
    "ldr r6, [sp, #20]\n\t"
    "cmp r9, r6\n\t"
    "bne 1b\n\t"
    "add sp, sp, #28\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_store_res16_3x16, .-ea_cm_linear_store_res16_3x16\n\t"
    ".text");
#undef EA_RES_RQ
#undef EA_RES_OUT
#undef EA_RES_OUT16

// ea_cm_linear_row_1x16(tile, x, wq, groups): one row against a 16-channel
// block (decoding's single rows; the 3-row pass would compute it three
// times): channel c's sum to tile[3c] (tile[3c + 1], tile[3c + 2] are left
// as they are), four channels at a time with their sums in registers. Per
// group: the row's word loaded and extended once, the four channels' words
// by one LDM, each extended, two SMLAD per channel: 23 instructions per 16
// multiply-adds with the loop.
//   r0 tile, r1 x (any alignment), r2 wq (the block's first group),
//   r3 groups >= 1.
#define EA_ROW_CHANNEL(A, W)                  \
  "sxtb16 r10, " W ", ror #8\n\t"             \
  "sxtb16 " W ", " W "\n\t"                   \
  "smlad " A ", r4, " W ", " A "\n\t"         \
  "smlad " A ", r5, r10, " A "\n\t"
__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_row_1x16,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_row_1x16\n\t"
    ".type ea_cm_linear_row_1x16, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_row_1x16:\n\t"
    "push {r0, r1, r2, r4-r11, lr}\n\t"  // [sp]: tile, [sp + 4]: x, [sp + 8]: wq
    "add lr, r1, r3, lsl #2\n\t"      // the row's end
    "mov r12, r2\n"
    "1:\n\t"                          // four channels
    "ldr r11, [sp, #4]\n\t"
    "movs r0, #0\n\t"
    "movs r1, #0\n\t"
    "movs r2, #0\n\t"
    "movs r3, #0\n\t"
    "push {r12}\n"
    "2:\n\t"                          // a group
    "ldr r5, [r11], #4\n\t"
    "ldm r12, {r6, r7, r8, r9}\n\t"
    "add r12, r12, #64\n\t"
    "sxtb16 r4, r5\n\t"
    "sxtb16 r5, r5, ror #8\n\t"
    EA_ROW_CHANNEL("r0", "r6") EA_ROW_CHANNEL("r1", "r7") EA_ROW_CHANNEL("r2", "r8") EA_ROW_CHANNEL("r3", "r9")
    "cmp r11, lr\n\t"
    "bne 2b\n\t"
    "pop {r12}\n\t"
    "ldr r4, [sp]\n\t"
    "str r0, [r4]\n\t"
    "str r1, [r4, #12]\n\t"
    "str r2, [r4, #24]\n\t"
    "str r3, [r4, #36]\n\t"
    "adds r4, #48\n\t"
    "str r4, [sp]\n\t"
    "adds r12, #16\n\t"               // the next four channels
    "ldr r4, [sp, #8]\n\t"
    "adds r4, #64\n\t"
    "cmp r12, r4\n\t"
    "bne 1b\n\t"
    "add sp, sp, #12\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_row_1x16, .-ea_cm_linear_row_1x16\n\t"
    ".text");
#undef EA_ROW_CHANNEL

#endif  // EA_CM_DSP_ONLY
