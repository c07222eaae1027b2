// qs8_linear with the Armv7E-M DSP extension on packed K4N16 weights
// (packed_weights.h). In a 64-byte group, channel n's 4 inputs are one 32-bit
// word at (n % 16) * 4, so a word of weights and a word of the activation row
// line up byte for byte: SXTB16 sign-extends bytes 0,2 (and, with a rotate by
// 8, bytes 1,3) into two halfwords, and SMLAD adds both 16x16 products to the
// channel's accumulator. A pass computes two rows x two channels: each
// extended activation word serves two channels and each extended weight word
// two rows (22 instructions per 16 multiply-accumulates; one row x four
// channels took 27). The sum is the reference's exact int32 dot product
// (|acc| < 2^31, see ref/linear.cc) in another order, so the result is
// bit-identical.
//
// A partial last group of inputs is copied into a zeroed word, so no load
// reads a row past in_features and the padding weights it meets are
// multiplied by zero. A pass computes 2 channels even past out_features
// (their weights are padding inside the block) but stores only real ones; an
// odd last row is computed twice (as both rows of a pass) and stored once.
#include "cortex-m/cortexm_kernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "dsp_common.h"
#include "requant_cm.h"

namespace edgeattn {
namespace kernels {
namespace {

using dsp::load4;
using dsp::sxtb16_ror8;

// a0c += row 0's whole groups . channel c's weights, a1c for row 1; rows x0
// and x1 (x0 + 4 groups = x0_end), channels wq and wq + 4. Written out: GCC
// -Os kept neither the four extended activations nor the pointers in
// registers.
struct Acc2x2 {
  int32_t a00, a01, a10, a11;
};
__attribute__((always_inline)) inline void mac_2x2(const int8_t* x0, const int8_t* x1, const int8_t* x0_end,
                                                   const int8_t* wq, Acc2x2& a) {
  if (x0 == x0_end) return;
  uint32_t xe0, xo0, xe1, xo1, w, t;
  __asm__(
      "1:\n\t"
      "ldr %[xo0], [%[x0]], #4\n\t"
      "ldr %[xo1], [%[x1]], #4\n\t"
      "sxtb16 %[xe0], %[xo0]\n\t"
      "sxtb16 %[xo0], %[xo0], ror #8\n\t"
      "sxtb16 %[xe1], %[xo1]\n\t"
      "sxtb16 %[xo1], %[xo1], ror #8\n\t"
      "ldr %[w], [%[wq]], #64\n\t"  // channel 0
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a00], %[xe0], %[t], %[a00]\n\t"
      "smlad %[a10], %[xe1], %[t], %[a10]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a00], %[xo0], %[t], %[a00]\n\t"
      "smlad %[a10], %[xo1], %[t], %[a10]\n\t"
      "ldr %[w], [%[wq], #-60]\n\t"  // channel 1
      "sxtb16 %[t], %[w]\n\t"
      "smlad %[a01], %[xe0], %[t], %[a01]\n\t"
      "smlad %[a11], %[xe1], %[t], %[a11]\n\t"
      "sxtb16 %[t], %[w], ror #8\n\t"
      "smlad %[a01], %[xo0], %[t], %[a01]\n\t"
      "smlad %[a11], %[xo1], %[t], %[a11]\n\t"
      "cmp %[x0], %[end]\n\t"
      "bne 1b"
      : [a00] "+r"(a.a00), [a01] "+r"(a.a01), [a10] "+r"(a.a10), [a11] "+r"(a.a11), [x0] "+r"(x0), [x1] "+r"(x1),
        [wq] "+r"(wq), [xe0] "=&r"(xe0), [xo0] "=&r"(xo0), [xe1] "=&r"(xe1), [xo1] "=&r"(xo1), [w] "=&r"(w),
        [t] "=&r"(t)
      : [end] "r"(x0_end)
      : "cc", "memory");
}

// a += the partial group: the rows' tail words t0, t1 (zero-padded), channels wq, wq + 4.
inline void mac_tail_2x2(uint32_t t0, uint32_t t1, const int8_t* wq, Acc2x2& a) {
  const uint32_t xe0 = __sxtb16(t0), xo0 = sxtb16_ror8(t0), xe1 = __sxtb16(t1), xo1 = sxtb16_ror8(t1);
  uint32_t w = load4(wq), we = __sxtb16(w), wo = sxtb16_ror8(w);
  a.a00 = __smlad(wo, xo0, __smlad(we, xe0, a.a00));
  a.a10 = __smlad(wo, xo1, __smlad(we, xe1, a.a10));
  w = load4(wq + 4), we = __sxtb16(w), wo = sxtb16_ror8(w);
  a.a01 = __smlad(wo, xo0, __smlad(we, xe0, a.a01));
  a.a11 = __smlad(wo, xo1, __smlad(we, xe1, a.a11));
}

// One channel's outputs of both rows: requantize_s8(acc + bias) in 32 bits
// when shift <= -2 (n = 31 - shift >= 33: requant_cm.h's SMMLA form; the
// projections of real models), the clamp to [-512, 512] before the zero
// point as SSAT #10 ([-512, 511]: 511 + zp and 512 + zp saturate to the same
// int8, as zp >= -128), else requant_cm.h's requantize_s8.
__attribute__((always_inline)) inline void store_channel(int32_t a0, int32_t a1, bool two, int32_t bias,
                                                         int32_t mult, int32_t shift, int32_t zp, int8_t* y0,
                                                         int8_t* y1) {
  if (shift > -2) {
    *y0 = cm::requantize_s8(a0 + bias, mult, shift, zp);
    if (two) *y1 = cm::requantize_s8(a1 + bias, mult, shift, zp);
    return;
  }
  const int32_t round = int32_t{1} << (-shift - 2), sh = -shift - 1;
  int32_t r0, r1;
  __asm__("smmla %0, %1, %2, %3" : "=r"(r0) : "r"(a0 + bias), "r"(mult), "r"(round));
  __asm__("smmla %0, %1, %2, %3" : "=r"(r1) : "r"(a1 + bias), "r"(mult), "r"(round));
  *y0 = static_cast<int8_t>(__ssat(__ssat(r0 >> sh, 10) + zp, 8));
  if (two) *y1 = static_cast<int8_t>(__ssat(__ssat(r1 >> sh, 10) + zp, 8));
}
}  // namespace

void qs8_linear__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  const int groups = in_features / kPackK;
  const int rem = in_features - groups * kPackK;
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  for (int m = 0; m < rows; m += 2) {
    const int pair_rows = rows - m >= 2 ? 2 : 1;
    const int8_t* x0 = x + static_cast<ptrdiff_t>(m) * x_stride;
    const int8_t* x1 = pair_rows == 2 ? x0 + x_stride : x0;
    uint32_t tail0 = 0, tail1 = 0;
    std::memcpy(&tail0, x0 + groups * kPackK, static_cast<size_t>(rem));
    std::memcpy(&tail1, x1 + groups * kPackK, static_cast<size_t>(rem));
    int8_t* y0 = y + static_cast<ptrdiff_t>(m) * y_stride;
    int8_t* y1 = pair_rows == 2 ? y0 + y_stride : y0;
    for (int n0 = 0; n0 < out_features; n0 += 2) {
      const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
      Acc2x2 a{0, 0, 0, 0};  // rows 0, 1 x channels n0, n0 + 1
      mac_2x2(x0, x1, x0 + groups * kPackK, wq, a);
      if (rem != 0) mac_tail_2x2(tail0, tail1, wq + groups * kPackN * kPackK, a);
      const int q = per_channel ? n0 : 0;
      store_channel(a.a00, a.a10, pair_rows == 2, bias[n0], mult[q], shift[q], y_zp, y0 + n0, y1 + n0);
      if (n0 + 1 < out_features) {
        const int q1 = per_channel ? n0 + 1 : 0;
        store_channel(a.a01, a.a11, pair_rows == 2, bias[n0 + 1], mult[q1], shift[q1], y_zp, y0 + n0 + 1,
                      y1 + n0 + 1);
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
