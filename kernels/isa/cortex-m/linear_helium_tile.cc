// The six-row pass of qs8_linear__helium (isa/cortex-m/linear_helium.h,
// linear_six): six activation rows against 8 channels (half a K4N16 block),
// the 6 x 8 int32 sums in a 192-byte tile on the caller's stack, and its
// whole-pass store, in assembly (the loops need every general register).
//
// Per chunk of 16 inputs the six rows are loaded once (q0-q5); then for
// each of the 8 channels one word gather (VLDRW.U32 on the group addresses
// in q7: the channel's words of 4 consecutive groups, its 16 weights in input
// order) into q6, LDM of the channel's six sums (r0, r2, ... r10: VMLADAVA
// accumulates into even registers only), six VMLADAVA.S8, STM: 9
// instructions per 96 multiply-adds (the register-held 2 x 4 pass of
// linear_pairs takes 16 per 128, capped by the 8 even registers). The sums
// are the reference's exact int32 dot products in another order, so the
// results are bit-identical.
#include "isa/cortex-m/cortexm.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "isa/cortex-m/linear_helium.h"

// ea_cm_linear_tile_6x8(args), args (SixArgs in linear_helium.h):
//   0: the 4 group addresses of the first chunk minus 256 (16-byte aligned
//      vector), 16: the six rows' pointers, 40: chunks (in_features / 16),
//   44: rem (in_features % 16), 48: ceil(rem / 4), 52: tile.
// The tile is zeroed, then channel c's six sums (rows 0..5) are at
// tile[6c ... 6c + 5]. The tail (rem inputs) loads the rows under VCTP8 and
// the groups under VCTP32: inactive lanes read nothing and load as 0, so
// nothing past a row or the packed block is read and the padding weights
// meet zeros (the tail's channels in a loop, for flash).
#define EA_SIX_CHANNEL(GATHER)                  \
  GATHER "\n\t"                                 \
  "ldm r12, {r0, r2, r4, r6, r8, r10}\n\t"      \
  "vmladava.s8 r0, q0, q6\n\t"                  \
  "vmladava.s8 r2, q1, q6\n\t"                  \
  "vmladava.s8 r4, q2, q6\n\t"                  \
  "vmladava.s8 r6, q3, q6\n\t"                  \
  "vmladava.s8 r8, q4, q6\n\t"                  \
  "vmladava.s8 r10, q5, q6\n\t"                 \
  "stmia r12!, {r0, r2, r4, r6, r8, r10}\n\t"

__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_tile_6x8,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_tile_6x8\n\t"
    ".type ea_cm_linear_tile_6x8, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_tile_6x8:\n\t"
    "push {r0, r4-r11, lr}\n\t"        // [sp]: args
    "vpush {d8-d15}\n\t"
    "vldrw.u32 q7, [r0]\n\t"
    "ldr r12, [r0, #52]\n\t"           // tile
    "ldr lr, [r0, #40]\n\t"            // chunks
    "adds r0, #16\n\t"
    "ldm r0, {r1, r3, r5, r7, r9, r11}\n\t"  // the rows
    "movs r0, #0\n\t"
    "movs r2, #0\n\t"
    "movs r4, #0\n\t"
    "movs r6, #0\n\t"
    "mov r8, r0\n\t"
    "mov r10, r0\n\t"
    ".rept 8\n\t"
    "stmia r12!, {r0, r2, r4, r6, r8, r10}\n\t"
    ".endr\n\t"
    "sub r12, r12, #192\n\t"
    "cmp lr, #0\n\t"
    "beq 2f\n"
    "1:\n\t"                           // a chunk of 16 inputs
    "vldrb.u8 q0, [r1], #16\n\t"
    "vldrb.u8 q1, [r3], #16\n\t"
    "vldrb.u8 q2, [r5], #16\n\t"
    "vldrb.u8 q3, [r7], #16\n\t"
    "vldrb.u8 q4, [r9], #16\n\t"
    "vldrb.u8 q5, [r11], #16\n\t"
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #256]!")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #4]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #8]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #12]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #16]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #20]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #24]")
    EA_SIX_CHANNEL("vldrw.u32 q6, [q7, #28]")
    "sub r12, r12, #192\n\t"
    "subs lr, #1\n\t"
    "bne 1b\n"
    "2:\n\t"                           // the tail
    "ldr lr, [sp, #64]\n\t"
    "ldr r0, [lr, #44]\n\t"
    "cmp r0, #0\n\t"
    "beq 3f\n\t"
    "vctp.8 r0\n\t"
    "vpstttt\n\t"
    "vldrbt.u8 q0, [r1]\n\t"
    "vldrbt.u8 q1, [r3]\n\t"
    "vldrbt.u8 q2, [r5]\n\t"
    "vldrbt.u8 q3, [r7]\n\t"
    "vpstt\n\t"
    "vldrbt.u8 q4, [r9]\n\t"
    "vldrbt.u8 q5, [r11]\n\t"
    "ldr r0, [lr, #48]\n\t"
    "vctp.32 r0\n\t"
    "movs r0, #252\n\t"
    "vadd.i32 q7, q7, r0\n\t"        // the tail's groups minus 4
    "mov lr, #8\n"
    "4:\n\t"                           // the 8 channels
    EA_SIX_CHANNEL("vpst\n\tvldrwt.u32 q6, [q7, #4]!")
    "subs lr, #1\n\t"
    "bne 4b\n"
    "3:\n\t"
    "vpop {d8-d15}\n\t"
    "add sp, sp, #4\n\t"
    "pop {r4-r11, pc}\n\t"
    ".size ea_cm_linear_tile_6x8, .-ea_cm_linear_tile_6x8\n\t"
    ".text");
#undef EA_SIX_CHANNEL

// ea_cm_linear_store_6x8(args), args (SixStoreArgs in linear_helium.h):
//   0: tile + {0, 24, 48, 72} (16-byte aligned vector: channel c's sum of
//      row r at lane c's address + 4 r), 16: y (row 0, the pass's first
//      channel), 20: ys, 24: bias, 28: mult, 32: shift (at the first
//      channel), 36: 2 zp + 1, 40: nc (1..8), 44: rq_step (16 per channel,
//      0 per tensor: then mult and shift point at 4 copies); 48..64 the
//      residual's (ea_cm_linear_store_res_6x8 below).
// Per group of 4 channels (the lanes past nc off by VCTP32): requant_cm.h's
// vector form with the zero point folded into its rounding term, r = (2 zp +
// 1) 2^(n-33) = 2^(n-33) + zp 2^(n-32) (every shift in [-23, -2], n = 31 -
// shift: |zp 2^(n-32)| <= 2^29 and the VMULH high word is below 2^30, so
// nothing wraps), VSHL by shift + 1 (an arithmetic shift right by n - 32,
// exact: zp 2^(n-32) is a multiple of it) gives requantize(acc + bias) + zp;
// then the two saturating narrows of requant_x4_store (requant.h's clamp to
// [-512, 512] cannot change the byte) and a byte store per lane. Per 4
// outputs: one gather of the tile, VADD (bias), VMULH, VADD, VSHL, two
// VQMOVNB, VPST + VSTRB, and the next row's pointer: 10.
#define EA_SIX_ROW(OFF)                          \
  "vldrw.u32 q0, [q7, #" OFF "]\n\t"             \
  "vadd.i32 q0, q0, q4\n\t"                      \
  "vmulh.s32 q0, q0, q5\n\t"                     \
  "vadd.i32 q0, q0, q6\n\t"                      \
  "vshl.s32 q0, q0, q3\n\t"                      \
  "vqmovnb.s32 q1, q0\n\t"                       \
  "vqmovnb.s16 q0, q1\n\t"                       \
  "vpst\n\t"                                     \
  "vstrbt.32 q0, [r1]\n\t"                       \
  "add r1, r2\n\t"

__asm__(
    ".syntax unified\n\t"
    ".thumb\n\t"
    ".section .text.ea_cm_linear_store_6x8,\"ax\",%progbits\n\t"
    ".global ea_cm_linear_store_6x8\n\t"
    ".type ea_cm_linear_store_6x8, %function\n\t"
    ".thumb_func\n\t"
    ".p2align 2\n"
    "ea_cm_linear_store_6x8:\n\t"
    "push {r4-r7, lr}\n\t"
    "vpush {d8-d15}\n\t"
    "vldrw.u32 q7, [r0]\n\t"
    "ldrd r1, r2, [r0, #16]\n\t"      // y, ys
    "ldrd r3, r4, [r0, #24]\n\t"      // bias, mult
    "ldrd r5, r6, [r0, #32]\n\t"      // shift, 2 zp + 1
    "ldr r7, [r0, #40]\n\t"           // nc
    "ldr lr, [r0, #44]\n\t"           // rq_step
    "mov r12, r1\n"                   // the group's first output
    "1:\n\t"
    "vctp.32 r7\n\t"
    "vpstttt\n\t"
    "vldrwt.u32 q4, [r3]\n\t"         // bias
    "vldrwt.u32 q5, [r4]\n\t"         // M
    "vldrwt.u32 q3, [r5]\n\t"         // shift
    "vldrwt.u32 q0, [r5]\n\t"
    "adds r3, #16\n\t"
    "add r4, lr\n\t"
    "add r5, lr\n\t"
    "vdup.32 q6, r6\n\t"
    "vneg.s32 q0, q0\n\t"
    "movs r0, #2\n\t"
    "vsub.i32 q0, q0, r0\n\t"         // n - 33 = -2 - shift
    "vshl.s32 q6, q6, q0\n\t"         // (2 zp + 1) 2^(n-33)
    "movs r0, #1\n\t"
    "vadd.i32 q3, q3, r0\n\t"         // shift + 1 = 32 - n
    EA_SIX_ROW("0") EA_SIX_ROW("4") EA_SIX_ROW("8") EA_SIX_ROW("12") EA_SIX_ROW("16") EA_SIX_ROW("20")
    "adds r12, #4\n\t"
    "mov r1, r12\n\t"
    "movs r0, #96\n\t"
    "vadd.i32 q7, q7, r0\n\t"         // the next 4 channels' sums
    "subs r7, #4\n\t"
    "bgt 1b\n\t"
    "vpop {d8-d15}\n\t"
    "pop {r4-r7, pc}\n\t"
    ".size ea_cm_linear_store_6x8, .-ea_cm_linear_store_6x8\n\t"
    ".text");
#undef EA_SIX_ROW

// The residual stores of a whole pass: int8 (LOAD VLDRB, the two narrows, STORE
// VSTRB, STEP 4 bytes per 4 channels) or int16 (VLDRH, one narrow, VSTRH, 8).
#define EA_STORE_RES_6X8(NAME, LOAD, NARROW, STORE, STEP) \
    ".syntax unified\n\t"                                         \
    ".thumb\n\t"                                                  \
    ".section .text." NAME ",\"ax\",%progbits\n\t"                \
    ".global " NAME "\n\t"                                        \
    ".type " NAME ", %function\n\t"                               \
    ".thumb_func\n\t"                                             \
    ".p2align 2\n"                                                \
    NAME ":\n\t"                                                 \
    "push {r4-r11, lr}\n\t"                                       \
    "vpush {d8-d15}\n\t"                                          \
    "vldrw.u32 q7, [r0]\n\t"                                      \
    "ldrd r1, r2, [r0, #16]\n\t"  /* y, ys */                     \
    "ldrd r3, r4, [r0, #24]\n\t"  /* bias, mult */                \
    "ldr r5, [r0, #32]\n\t"  /* shift */                          \
    "ldr r7, [r0, #40]\n\t"  /* nc (rq_step: 16, per channel) */  \
    "ldrd r11, r8, [r0, #48]\n\t"  /* res, its stride */          \
    "ldrd r9, r10, [r0, #56]\n\t"  /* A, C */                     \
    "vdup.32 q6, r9\n\t"                                          \
    "ldr r9, [r0, #64]\n\t"  /* -n */                             \
    "mov r12, r1\n"                                               \
    "1:\n\t"                                                      \
    "vctp.32 r7\n\t"                                              \
    "vpsttt\n\t"                                                  \
    "vldrwt.u32 q4, [r3]\n\t"  /* bias */                         \
    "vldrwt.u32 q5, [r4]\n\t"  /* M */                            \
    "vldrwt.u32 q3, [r5]\n\t"  /* shift */                        \
    "adds r3, #16\n\t"                                            \
    "adds r4, #16\n\t"                                            \
    "adds r5, #16\n\t"                                            \
    "movs r0, #1\n\t"                                             \
    "vadd.i32 q3, q3, r0\n\t"  /* s = shift + 1 */                \
    "mov r6, r11\n\t"                                             \
    "movs r0, #4\n\t"                                             \
    "vsub.i32 q7, q7, r0\n\t"                                     \
    "mov lr, #6\n"                                                \
    "2:\n\t"  /* the six rows (a loop, for flash) */              \
    "vldrw.u32 q0, [q7, #4]!\n\t"                                 \
    "vadd.i32 q0, q0, q4\n\t"                                     \
    "vqshl.s32 q0, q0, q3\n\t"                                    \
    "vrmulh.s32 q0, q0, q5\n\t"                                   \
    "vpst\n\t"                                                    \
    LOAD " q1, [r6]\n\t"                                          \
    "vmlas.s32 q1, q6, r10\n\t"                                   \
    "vadd.i32 q0, q0, q1\n\t"                                     \
    "vshl.s32 q0, r9\n\t"                                         \
    NARROW                                                        \
    "vpst\n\t"                                                    \
    STORE " q0, [r1]\n\t"                                         \
    "add r1, r2\n\t"                                              \
    "add r6, r8\n\t"                                              \
    "subs lr, #1\n\t"                                             \
    "bne 2b\n\t"                                                  \
    "adds r12, #" STEP "\n\t"                                     \
    "mov r1, r12\n\t"                                             \
    "adds r11, #" STEP "\n\t"                                     \
    "movs r0, #76\n\t"                                            \
    "vadd.i32 q7, q7, r0\n\t"  /* the next 4 channels' sums */    \
    "subs r7, #4\n\t"                                             \
    "bgt 1b\n\t"                                                  \
    "vpop {d8-d15}\n\t"                                           \
    "pop {r4-r11, pc}\n\t"                                        \
    ".size " NAME ", .-" NAME "\n\t"                              \
    ".text"

// ea_cm_linear_store_res_6x8(args): qs8_linear_res's outputs of a whole
// pass, every channel in requant_cm.h's residual_rmul_form; args as
// ea_cm_linear_store_6x8's (zp2 unused) and 48: the residual at the pass's
// first row and channel, 52: its row stride, 56: A, 60: C, 64: -n. Per
// group of 4 channels and row, linear_pairs_res' steps: VQSHL by shift + 1
// and VRMULH (requantize_rmul), the residual bytes under the lanes'
// predicate (VLDRB.S32, a low base register), A res + C by VMLAS, the sum,
// VSHL by -n, the two narrows and the byte stores: 18 per 4 outputs (the
// rows in a loop, for flash).
__asm__(EA_STORE_RES_6X8("ea_cm_linear_store_res_6x8", "vldrbt.s32",
                         "vqmovnb.s32 q1, q0\n\t" "vqmovnb.s16 q0, q1\n\t", "vstrbt.32", "4"));

// ea_cm_linear_store_res16_6x8(args): qs8_linear_res16's (requant.h
// contract 5c, the 16-bit residual stream) outputs of a whole pass, every
// channel in requant_cm.h's residual_rmul_form; args as
// ea_cm_linear_store_res_6x8's with y, ys, res and its stride in bytes of
// int16 rows, 60: 2^(n-1) in place of C. The same steps as that store with
// the residual's halfwords (VLDRH.S32) and one saturating narrow to int16
// (VQMOVNB.S32) stored as halfwords (VSTRH.32): A a + 2^(n-1) by VMLAS, the
// sum, VSHL by -n. 5c's clamp to +-2^29 is left out as in 5b: the rmul form
// gives |y| <= 2^30 (requant_cm.h), exact where requantize() is inside
// +-2^29 and beyond it on the same side otherwise, so with |A a| <= 2^28 the
// sum fits int32 and saturates to the int16 end the clamped one reaches
// (requant.h's bounds). 16 per 4 outputs (the rows in a loop, for flash).
__asm__(EA_STORE_RES_6X8("ea_cm_linear_store_res16_6x8", "vldrht.s32", "vqmovnb.s32 q0, q0\n\t", "vstrht.32", "8"));
#undef EA_STORE_RES_6X8

namespace edgeattn {
namespace kernels {
namespace cm_linear_helium {

void linear_six(int rows, int out_features, int in_features, const int8_t* x, int x_stride, const int8_t* w,
                const int32_t* bias, const int32_t* mult, const int32_t* shift, int32_t y_zp, const QS8Residual* res,
                int8_t* y, int y_stride) {
  alignas(16) int32_t tile[6 * 8];
  SixArgs a;
  SixStoreArgs s;
  a.chunks = in_features / 16;
  a.rem = in_features - a.chunks * 16;
  a.groups = (a.rem + kPackK - 1) / kPackK;
  a.tile = tile;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kPackN * kPackK);  // 0 64 128 192
  s.tile_addr = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0u, 1), 24), reinterpret_cast<uint32_t>(tile));
  s.ys = y_stride;
  s.zp2 = 2 * y_zp + 1;
  s.rq_step = 16;  // per channel (six_ready)
  if (res != nullptr) {
    s.rs = res->res_stride;
    s.a = res->term.mult;
    s.c = residual_offset(res->term);
    s.neg_n = -res->term.shift;
  }
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  const ptrdiff_t xs = x_stride, ys = y_stride;
  for (int n0 = 0; n0 < out_features; n0 += 8) {
    const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
    a.addr0 = vaddq_n_u32(offs, reinterpret_cast<uint32_t>(wq) - 256u);
    s.nc = out_features - n0 < 8 ? out_features - n0 : 8;
    s.bias = bias + n0;
    s.mult = mult + n0;
    s.shift = shift + n0;
    for (int m = 0; m < rows; m += 6) {
      for (int r = 0; r < 6; ++r) a.x[r] = x + (m + r) * xs;
      ea_cm_linear_tile_6x8(&a);
      s.y = y + m * ys + n0;
      if (res == nullptr) {
        ea_cm_linear_store_6x8(&s);
      } else {
        s.res = res->res + static_cast<ptrdiff_t>(m) * res->res_stride + n0;
        ea_cm_linear_store_res_6x8(&s);
      }
    }
  }
}

// linear_six's loop for qs8_linear_res16 (every channel in
// residual_rmul_form): the same tile, ea_cm_linear_store_res16_6x8.
void linear_six_res16(int rows, int out_features, int in_features, const int8_t* x, int x_stride, const int8_t* w,
                      const int32_t* bias, const int32_t* mult, const int32_t* shift, const QS16Residual& res,
                      int16_t* y, int y_stride) {
  alignas(16) int32_t tile[6 * 8];
  SixArgs a;
  SixStoreArgs s;
  a.chunks = in_features / 16;
  a.rem = in_features - a.chunks * 16;
  a.groups = (a.rem + kPackK - 1) / kPackK;
  a.tile = tile;
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kPackN * kPackK);  // 0 64 128 192
  s.tile_addr = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0u, 1), 24), reinterpret_cast<uint32_t>(tile));
  s.ys = 2 * y_stride;
  s.rq_step = 16;
  s.rs = 2 * res.res_stride;
  s.a = res.term.mult;
  s.c = int32_t{1} << (res.term.shift - 1);
  s.neg_n = -res.term.shift;
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  const ptrdiff_t xs = x_stride, ys = y_stride, rs = res.res_stride;
  for (int n0 = 0; n0 < out_features; n0 += 8) {
    const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
    a.addr0 = vaddq_n_u32(offs, reinterpret_cast<uint32_t>(wq) - 256u);
    s.nc = out_features - n0 < 8 ? out_features - n0 : 8;
    s.bias = bias + n0;
    s.mult = mult + n0;
    s.shift = shift + n0;
    for (int m = 0; m < rows; m += 6) {
      for (int r = 0; r < 6; ++r) a.x[r] = x + (m + r) * xs;
      ea_cm_linear_tile_6x8(&a);
      s.y = reinterpret_cast<int8_t*>(y + m * ys + n0);
      s.res = reinterpret_cast<const int8_t*>(res.res + m * rs + n0);
      ea_cm_linear_store_res16_6x8(&s);
    }
  }
}

}  // namespace cm_linear_helium
}  // namespace kernels
}  // namespace edgeattn

#endif  // __ARM_FEATURE_MVE
