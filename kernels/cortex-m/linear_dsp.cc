// qs8_linear with the Armv7E-M DSP extension on packed K4N16 weights
// (packed_weights.h). In a 64-byte group, channel n's 4 inputs are one 32-bit
// word at (n % 16) * 4, so a word of weights and a word of the activation row
// line up byte for byte: SXTB16 sign-extends bytes 0,2 (and, with a rotate by
// 8, bytes 1,3) into two halfwords, and SMLAD adds both 16x16 products to the
// channel's accumulator. Four channels per pass share one activation word
// (loaded and extended once for all four). The sum is the reference's exact
// int32 dot product (|acc| < 2^31, see ref/linear.cc) in another order, so the
// result is bit-identical.
//
// A partial last group of inputs is copied into a zeroed word, so no load
// reads the row past in_features and the padding weights it meets are
// multiplied by zero. A pass computes 4 channels even past out_features
// (their weights are padding inside the block) but stores only real ones.
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

// acc + one channel's 4 weights (the word at wp) . the row's 4 inputs, given
// as xe = inputs 0,2 and xo = inputs 1,3 (sign-extended halfwords).
__attribute__((always_inline)) inline int32_t mac4(const int8_t* wp, uint32_t xe, uint32_t xo,
                                                   int32_t acc) {
  const uint32_t wv = load4(wp);
  return __smlad(sxtb16_ror8(wv), xo, __smlad(__sxtb16(wv), xe, acc));
}

}  // namespace

void qs8_linear__dsp(int rows, int out_features, int in_features, const int8_t* x, int x_stride,
                     const int8_t* w, const int32_t* bias, const int32_t* mult,
                     const int32_t* shift, int per_channel, int32_t y_zp, int8_t* y, int y_stride) {
  const int groups = in_features / kPackK;
  const int rem = in_features - groups * kPackK;
  const ptrdiff_t block_bytes = static_cast<ptrdiff_t>(packed_block_bytes(in_features));
  for (int m = 0; m < rows; ++m) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(m) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(m) * y_stride;
    uint32_t tail = 0;
    std::memcpy(&tail, xr + groups * kPackK, static_cast<size_t>(rem));
    for (int n0 = 0; n0 < out_features; n0 += 4) {
      const int8_t* wq = w + (n0 / kPackN) * block_bytes + (n0 % kPackN) * kPackK;
      // Named accumulators: at -Os an array would live on the stack.
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      // The whole groups, then the partial one: as a select inside the loop
      // (with its bounds check and a stack reload) it made each step of 16
      // multiply-accumulates 34 instructions instead of 27.
      const int8_t* xg = xr;
      for (const int8_t* xend = xr + groups * kPackK; xg != xend; xg += kPackK, wq += kPackN * kPackK) {
        const uint32_t xw = load4(xg);
        const uint32_t xe = __sxtb16(xw), xo = sxtb16_ror8(xw);
        a0 = mac4(wq, xe, xo, a0);
        a1 = mac4(wq + 4, xe, xo, a1);
        a2 = mac4(wq + 8, xe, xo, a2);
        a3 = mac4(wq + 12, xe, xo, a3);
      }
      if (rem != 0) {
        const uint32_t xe = __sxtb16(tail), xo = sxtb16_ror8(tail);
        a0 = mac4(wq, xe, xo, a0);
        a1 = mac4(wq + 4, xe, xo, a1);
        a2 = mac4(wq + 8, xe, xo, a2);
        a3 = mac4(wq + 12, xe, xo, a3);
      }
      const int32_t acc[4] = {a0, a1, a2, a3};
      const int cnt = out_features - n0 < 4 ? out_features - n0 : 4;
      for (int c = 0; c < cnt; ++c) {
        const int n = n0 + c;
        const int q = per_channel ? n : 0;
        yr[n] = cm::requantize_s8(acc[c] + bias[n], mult[q], shift[q], y_zp);
      }
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
