// qs8_linear with Helium (M-profile Vector Extension) on packed K4N16
// weights (packed_weights.h). Channel n's inputs 4g..4g+3 are the 32-bit word
// at (n % 16) * 4 of group g, groups 64 bytes apart. A word gather
// (VLDRW.U32 with byte offsets 0, 64, 128, 192) collects channel n's words of
// 4 consecutive groups: its 16 weights for inputs k..k+15, in input order, so
// VMLADAVA.S8 against 16 contiguous activations adds all 16 exact products to
// the channel's 32-bit scalar accumulator. Four channels per pass share one
// activation vector, and two activation rows share each gathered weight
// vector (a last odd row runs alone). The sum is the reference's exact int32
// dot product in another order, so the result is bit-identical.
//
// Tail (in_features % 16 inputs): the activations load under a VCTP8
// predicate (inactive lanes are not read and load as zero, so the padding
// weights of a partial group are multiplied by zero) and the gather under a
// VCTP32 predicate over the groups that exist, so no load leaves the row or
// the packed block. A pass computes 4 channels even past out_features (their
// weights are padding inside the block) but stores only real ones. The pass's
// four outputs get their bias as a vector and are requantized as one vector
// (requant_cm.h's requantize_s8_x4) when every channel's shift allows, else
// one by one (store_pass).
//
// MVE word loads (gathers included) raise an unaligned UsageFault on
// addresses that are not 4-byte aligned, whatever CCR.UNALIGN_TRP says (qemu
// does not model this). The runtime gives 16-byte aligned weights
// (EA_ALIGNMENT); anything else takes the reference kernel.
#include "cortex-m/cortexm_kernels.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

#include <cstddef>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "requant_cm.h"

namespace edgeattn {
namespace kernels {
namespace {

inline int8x16_t gather4(const int8_t* p, uint32x4_t offs) {
  return vreinterpretq_s8_s32(vldrwq_gather_offset_s32(reinterpret_cast<const int32_t*>(p), offs));
}

inline int8x16_t gather4_z(const int8_t* p, uint32x4_t offs, mve_pred16_t pw) {
  return vreinterpretq_s8_s32(
      vldrwq_gather_offset_z_s32(reinterpret_cast<const int32_t*>(p), offs, pw));
}

// The outputs one by one (a shift requant_cm.h's vector form does not take).
__attribute__((noinline)) void store_scalar(int32x4_t acc, int n0, int cnt, const int32_t* mult,
                                            const int32_t* shift, int per_channel, int32_t y_zp, int8_t* yr) {
  int32_t a[4];
  vst1q_s32(a, acc);
  for (int c = 0; c < cnt; ++c) {
    const int q = per_channel ? n0 + c : 0;
    yr[n0 + c] = cm::requantize_s8(a[c], mult[q], shift[q], y_zp);
  }
}

// Requantizes and stores the pass's cnt (1-4) outputs of channels n0.. for
// one row (acc_b null) or two (the same channels, the same constants): bias
// added as a vector, the four outputs as one vector when their shifts allow
// (requant_cm.h), else one by one (out of line, so this stays a leaf that
// saves few registers).
__attribute__((noinline)) void store_pass(int32x4_t acc_a, const int32x4_t* acc_b, int n0, int cnt,
                                          const int32_t* bias, const int32_t* mult, const int32_t* shift,
                                          int per_channel, int32_t y_zp, int8_t* ya, int8_t* yb) {
  const mve_pred16_t pc = vctp32q(static_cast<uint32_t>(cnt));
  const int32x4_t bv = vldrwq_z_s32(bias + n0, pc);
  acc_a = vaddq_s32(acc_a, bv);
  const int32x4_t mv = per_channel ? vldrwq_z_s32(mult + n0, pc) : vdupq_n_s32(mult[0]);
  const int32x4_t sv = per_channel ? vldrwq_z_s32(shift + n0, pc) : vdupq_n_s32(shift[0]);
  cm::RequantX4 r;
  if (cm::requant_x4_setup(mv, sv, pc, &r)) {
    cm::requant_x4_store(acc_a, r, y_zp, ya + n0, pc);
    if (acc_b != nullptr) cm::requant_x4_store(vaddq_s32(*acc_b, bv), r, y_zp, yb + n0, pc);
    return;
  }
  store_scalar(acc_a, n0, cnt, mult, shift, per_channel, y_zp, ya);
  if (acc_b != nullptr) store_scalar(vaddq_s32(*acc_b, bv), n0, cnt, mult, shift, per_channel, y_zp, yb);
}

__attribute__((always_inline)) inline int32x4_t lanes4(int32_t a0, int32_t a1, int32_t a2, int32_t a3) {
  int32x4_t v = vdupq_n_s32(a0);
  v = vsetq_lane_s32(a1, v, 1);
  v = vsetq_lane_s32(a2, v, 2);
  return vsetq_lane_s32(a3, v, 3);
}

// The kernel proper; w is 4-byte aligned. Two activation rows per pass when
// there are two left: each weight gather then feeds two VMLADAVA.
__attribute__((noinline)) void linear_aligned(int rows, int out_features, int in_features,
                                              const int8_t* x, int x_stride, const int8_t* w,
                                              const int32_t* bias, const int32_t* mult,
                                              const int32_t* shift, int per_channel,
                                              int32_t y_zp, int8_t* y, int y_stride) {
  constexpr int kGroupBytes = kPackN * kPackK;
  const int chunks = in_features / 16;
  const int rem = in_features - chunks * 16;
  const mve_pred16_t px = vctp8q(static_cast<uint32_t>(rem));
  const mve_pred16_t pw = vctp32q(static_cast<uint32_t>((rem + kPackK - 1) / kPackK));
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0u, 1), kGroupBytes);  // 0 64 128 192
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  int m = 0;
  for (; m + 2 <= rows; m += 2) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    for (int n0 = 0; n0 < out_features; n0 += 4) {
      const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
      // Named accumulators: at -Os an array would live on the stack.
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
      const int8_t* xp = xr;
      for (int j = 0; j < chunks; ++j, wq += 4 * kGroupBytes, xp += 16) {
        const int8x16_t xa = vldrbq_s8(xp), xb = vldrbq_s8(xp + x_stride);
        int8x16_t g = gather4(wq, offs);
        a0 = vmladavaq_s8(a0, xa, g);
        b0 = vmladavaq_s8(b0, xb, g);
        g = gather4(wq + 4, offs);
        a1 = vmladavaq_s8(a1, xa, g);
        b1 = vmladavaq_s8(b1, xb, g);
        g = gather4(wq + 8, offs);
        a2 = vmladavaq_s8(a2, xa, g);
        b2 = vmladavaq_s8(b2, xb, g);
        g = gather4(wq + 12, offs);
        a3 = vmladavaq_s8(a3, xa, g);
        b3 = vmladavaq_s8(b3, xb, g);
      }
      if (rem != 0) {
        const int8x16_t xa = vldrbq_z_s8(xp, px), xb = vldrbq_z_s8(xp + x_stride, px);
        int8x16_t g = gather4_z(wq, offs, pw);
        a0 = vmladavaq_s8(a0, xa, g);
        b0 = vmladavaq_s8(b0, xb, g);
        g = gather4_z(wq + 4, offs, pw);
        a1 = vmladavaq_s8(a1, xa, g);
        b1 = vmladavaq_s8(b1, xb, g);
        g = gather4_z(wq + 8, offs, pw);
        a2 = vmladavaq_s8(a2, xa, g);
        b2 = vmladavaq_s8(b2, xb, g);
        g = gather4_z(wq + 12, offs, pw);
        a3 = vmladavaq_s8(a3, xa, g);
        b3 = vmladavaq_s8(b3, xb, g);
      }
      const int cnt = out_features - n0 < 4 ? out_features - n0 : 4;
      const int32x4_t acc_b = lanes4(b0, b1, b2, b3);
      store_pass(lanes4(a0, a1, a2, a3), &acc_b, n0, cnt, bias, mult, shift, per_channel, y_zp, yr, yr + y_stride);
    }
  }
  for (; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    for (int n0 = 0; n0 < out_features; n0 += 4) {
      const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const int8_t* xp = xr;
      for (int j = 0; j < chunks; ++j, wq += 4 * kGroupBytes, xp += 16) {
        const int8x16_t xv = vldrbq_s8(xp);
        a0 = vmladavaq_s8(a0, xv, gather4(wq, offs));
        a1 = vmladavaq_s8(a1, xv, gather4(wq + 4, offs));
        a2 = vmladavaq_s8(a2, xv, gather4(wq + 8, offs));
        a3 = vmladavaq_s8(a3, xv, gather4(wq + 12, offs));
      }
      if (rem != 0) {
        const int8x16_t xv = vldrbq_z_s8(xp, px);
        a0 = vmladavaq_s8(a0, xv, gather4_z(wq, offs, pw));
        a1 = vmladavaq_s8(a1, xv, gather4_z(wq + 4, offs, pw));
        a2 = vmladavaq_s8(a2, xv, gather4_z(wq + 8, offs, pw));
        a3 = vmladavaq_s8(a3, xv, gather4_z(wq + 12, offs, pw));
      }
      const int cnt = out_features - n0 < 4 ? out_features - n0 : 4;
      store_pass(lanes4(a0, a1, a2, a3), nullptr, n0, cnt, bias, mult, shift, per_channel, y_zp, yr, nullptr);
    }
  }
}

}  // namespace

// The alignment test sits in front of the kernel's frame setup (inline, GCC
// builds the whole frame first); both calls are tail branches.
void qs8_linear__helium(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                        const int8_t* w, const int32_t* bias, const int32_t* mult,
                        const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y,
                        int y_stride) {
  if ((reinterpret_cast<uintptr_t>(w) & 3u) != 0) {
    return qs8_linear__ref(rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                           per_channel, y_zp, y, y_stride);
  }
  return linear_aligned(rows, out_features, in_features, x, x_stride, w, bias, mult, shift,
                        per_channel, y_zp, y, y_stride);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
