// qs16_layernorm (requant.h contract 4b: the 16-bit residual stream's
// LayerNorm) on the Cortex-M DSP extension (DSP-only builds; Helium builds
// have qs16-layernorm-helium.cc). Per row: S and Q two elements per step (one
// word of two int16, SMLAD with 0x00010001 for S, SMLALD for Q into 64 bits;
// an odd last element alone), the row scale by layernorm_row.h's
// layernorm16_row_scale_fast (the SIMD paths', tested against the
// reference), then step 4 per element in 32-bit instructions:
// (c inv + 2^(s-1)) >> s is, for s >= 33, SMMLA(c, inv, 2^(s-33)) >> (s -
// 32) (adding the integer 2^(s-33) inside the floor by 2^32 adds it
// outside; |c inv| < 2^60, so the high word is exact), else the 64-bit
// product as the reference. The clamp to +-32767 is SSAT #16 and a max with
// -32767 (never binding: |y_q| <= 2^14, contract 4b); acc = y_q gain + bias
// as the reference (int32), the outputs through requant_cm.h's requantize
// (exact for every shift in [-31, 30]).
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstring>

#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

namespace {

// The outputs of one element from its y_q (the clamped step 4).
__attribute__((always_inline)) inline void ln16_out(const QS16LayerNormArgs& a, int i, int32_t q, int8_t* y8,
                                                    int16_t* y16) {
  const int32_t acc = q * a.gain[i] + a.bias[i];
  if (y8 != nullptr) y8[i] = cm::requantize_s8(acc, a.mult, a.shift, a.y_zp);
  if (y16 != nullptr) y16[i] = static_cast<int16_t>(__ssat(cm::requantize(acc, a.mult16, a.shift16), 16));
}

__attribute__((always_inline)) inline int32_t clamp_q(int32_t q) {
  q = __ssat(q, 16);
  return q < -32767 ? -32767 : q;
}

}  // namespace

void qs16_layernorm__dsp(const QS16LayerNormArgs& a) {
  const int d = a.dim;
  for (int r = 0; r < a.rows; ++r) {
    const int16_t* x = a.x + static_cast<ptrdiff_t>(r) * a.x_stride;
    int32_t sum = 0;
    int64_t sum_sq = 0;
    int i = 0;
    for (; i + 2 <= d; i += 2) {
      int32_t w;
      std::memcpy(&w, x + i, sizeof w);  // an unaligned LDR where x is not word-aligned
      sum = __smlad(w, 0x00010001, sum);
      sum_sq = __smlald(w, w, sum_sq);
    }
    if (i < d) {
      sum += x[i];
      sum_sq += static_cast<int32_t>(x[i]) * x[i];
    }
    const LayerNormRowScale rs = layernorm16_row_scale_fast(d, sum, sum_sq, a.eps_term);
    int8_t* y8 = a.y8 != nullptr ? a.y8 + static_cast<ptrdiff_t>(r) * a.y8_stride : nullptr;
    int16_t* y16 = a.y16 != nullptr ? a.y16 + static_cast<ptrdiff_t>(r) * a.y16_stride : nullptr;
    const int32_t inv = rs.inv, s = rs.shift;
    const bool fast = s >= 33;  // one loop for flash: the form is a test per element
    const int32_t round = fast ? int32_t{1} << (s - 33) : 0, sh = s - 32;
    for (int j = 0; j < d; ++j) {
      const int32_t c = d * x[j] - sum;
      int32_t q;
      if (fast) {
        __asm__("smmla %0, %1, %2, %3" : "=r"(q) : "r"(c), "r"(inv), "r"(round));
        q = clamp_q(q >> sh);
      } else {
        q = layernorm_normalized_q(c, rs);
      }
      ln16_out(a, j, q, y8, y16);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
#endif
