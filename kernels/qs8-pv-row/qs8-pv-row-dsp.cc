// qs8_pv_row on the Cortex-M DSP extension (qs8_pv_row__ref's contract):
// SMLAD on the probabilities of two keys against one channel's two values.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>

#include <cstddef>
#include <cstring>

#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "isa/cortex-m/dsp_common.h"
#include "isa/cortex-m/requant_cm.h"

namespace edgeattn {
namespace kernels {

namespace {
using dsp::load4;
using dsp::pkhbt;
using dsp::pkhtb;
using dsp::sxtb16_ror8;
}  // namespace

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

}  // namespace kernels
}  // namespace edgeattn
#endif
