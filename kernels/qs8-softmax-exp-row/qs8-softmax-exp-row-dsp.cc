// The integer softmax of requant.h (steps 1-5) on the Cortex-M DSP extension
// and on Helium, the same integers as qs8_softmax_exp_row__ref and
// qs8_softmax_row__ref for every row.
//
// DSP (M4, M7, M33; on Helium builds the cmsis-dsp table keeps the
// reference softmax, isa/cortex-m/cortexm.h):
//  - steps 1-4 one score at a time in 32-bit registers (exp_row_dsp below):
//    the exponent d' M >> r needs 32 bits, and each Horner step of exp2 is
//    one SMLABB and one shift; no 16-bit pair form is shorter (two
//    products, two shifts and a repack per pair).
//  - step 5 on pairs of probabilities (one word): when the row sum has
//    b >= 17 bits, with m' = m 2^(32-b) (< 2^31, as m < 2^16),
//    SMLAWB(m', e, 2^15) = floor((e m' + 2^31) / 2^16), and its top half is
//    floor((e m' + 2^31) / 2^32) = floor((e m + 2^(b-1)) / 2^b), the
//    reference's p (nested floors). SMLAWB / SMLAWT take e from the bottom /
//    top half of the word and PKHTB packs the two top halves: five
//    instructions per two probabilities with the load and the store. p <=
//    16384 there (e <= 32767, m <= 2^(b+15) / sum, sum >= 2^(b-1)), so the
//    32767 cap cannot bind. Rows with b <= 16 (one key of weight) take the
//    reference's normalize_prob_q15.
//
// This file: steps 1-4; step 5 is qs8-softmax-row-dsp.cc.
#include "isa/cortex-m/cortexm.h"
#include "microkernels.h"

#if EA_CM_DSP_ONLY
#include <arm_acle.h>

#include <cstring>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {
// Largest of s[0, n), n >= 1: two scores per load (LDM), so the loop's own
// instructions are shared by two.
int32_t row_max_dsp(int n, const int32_t* s) {
  int32_t m = s[0];
  const int32_t* end = s + (n & ~1);
  for (; s != end; s += 2) {
    const int32_t a = s[0], b = s[1];
    m = a > m ? a : m;
    m = b > m ? b : m;
  }
  if (n & 1) m = *s > m ? *s : m;
  return m;
}

// Steps 1-4 from the row maximum, 23 instructions per live score (25 with
// p > 0) and 9 per dead one:
// - A key is live (e > 0) exactly when its pre-shifted difference is below
//   the layer's limit D, i.e. when s >= lo = row_max - D 2^p + 1 (at least
//   INT32_MIN: then every key is live), one compare.
// - p = 0: z = (d M) >> r with d M = row_max M - s M (mod 2^32), one MLS,
//   exact as d M < 2^32 for live keys (D is the smallest d reaching 0xFFFF).
// - The Horner steps on u = z & 0xFFF (Q12) instead of 8u (Q15):
//   (h 8u + 2^14) >> 15 = (h u + 2^11) >> 12, and c + that is
//   (h u + 2^11 + c 2^12) >> 12, one SMLABB and one shift per step.
// - The last step and e = (w + 2^(k-1)) >> k, k = z >> 12, in one: nested
//   floors, e = (h u + last_round(k)) >> (12 + k) with last_round(k) =
//   2^11 + (32767 + floor(2^k / 2)) 2^12 (< 2^28: no overflow).
// The loop is written out: GCC -Os kept the output pointer, the loop end
// and a constant in memory (27 instructions per live score). Its 14
// registers leave no room for the Horner constants: two LDRD per score
// bring them from kExpTable, whose last 16 words are last_round(k).
constexpr int32_t horner_round(int c) { return (1 << 11) + c * (1 << 12); }
constexpr int32_t last_round(int k) { return (1 << 11) + (kProbMax + ((1 << k) >> 1)) * (1 << 12); }
constexpr int32_t kExpTable[20] = {
    kExp2Coeff[3],  horner_round(kExp2Coeff[2]), horner_round(kExp2Coeff[1]), horner_round(kExp2Coeff[0]),
    last_round(0),  last_round(1),  last_round(2),  last_round(3),  last_round(4),  last_round(5),
    last_round(6),  last_round(7),  last_round(8),  last_round(9),  last_round(10), last_round(11),
    last_round(12), last_round(13), last_round(14), last_round(15)};

// The step from z (in x) on: e (in h) stored, added to sum; the loop end.
#define EA_EXP_HORNER_STORE_LOOP                    \
  "ubfx %[u], %[x], #0, #12\n\t"                    \
  "lsr %[x], %[x], #12\n\t"                         \
  "ldrd %[c1], %[c2], [%[tab], #-16]\n\t"           \
  "smlabb %[h], %[c1], %[u], %[c2]\n\t"             \
  "asr %[h], %[h], #12\n\t"                         \
  "ldrd %[c1], %[c2], [%[tab], #-8]\n\t"            \
  "smlabb %[h], %[h], %[u], %[c1]\n\t"              \
  "asr %[h], %[h], #12\n\t"                         \
  "smlabb %[h], %[h], %[u], %[c2]\n\t"              \
  "asr %[h], %[h], #12\n\t"                         \
  "ldr %[c1], [%[tab], %[x], lsl #2]\n\t"           \
  "smlabb %[h], %[h], %[u], %[c1]\n\t"              \
  "add %[x], %[x], #12\n\t"                         \
  "asr %[h], %[h], %[x]\n\t"                        \
  "2:\n\t"                                          \
  "strh %[h], [%[e]], #2\n\t"                       \
  "add %[sum], %[sum], %[h]\n\t"                    \
  "cmp %[s], %[end]\n\t"                            \
  "bne 1b\n\t"                                      \
  "b 4f\n\t"                                        \
  "3:\n\t"                                          \
  "movs %[h], #0\n\t"                               \
  "b 2b\n\t"                                        \
  "4:"

// n >= 1. kPre (p > 0, so r = 16): z = ((d >> p) M) >> 16; else
// z = (row_max M - s M) >> r.
template <bool kPre>
uint32_t exp_row_dsp(int n, const int32_t* s, int32_t row_max, const SoftmaxExpParams& x, uint16_t* e) {
  const int64_t lo64 = int64_t{row_max} + 1 - static_cast<int64_t>(uint64_t{x.limit} << x.pre_shift);
  const int32_t lo = lo64 < INT32_MIN ? INT32_MIN : static_cast<int32_t>(lo64);
  const uint32_t m = x.multiplier, shift = kPre ? x.pre_shift : x.post_shift;
  // kPre: the row maximum; else row_max M (mod 2^32).
  const uint32_t top = kPre ? static_cast<uint32_t>(row_max) : static_cast<uint32_t>(row_max) * m;
  const int32_t* end = s + n;
  const int32_t* tab = kExpTable + 4;
  uint32_t sum = 0, z, u, h, c1, c2;
  // volatile: the stores to e are effects the outputs do not show.
  if (kPre) {
    __asm__ volatile(
        "1:\n\t"
        "ldr %[x], [%[s]], #4\n\t"
        "cmp %[x], %[lo]\n\t"
        "blt 3f\n\t"
        "sub %[x], %[top], %[x]\n\t"
        "lsr %[x], %[x], %[shift]\n\t"
        "mul %[x], %[x], %[m]\n\t"
        "lsr %[x], %[x], #16\n\t" EA_EXP_HORNER_STORE_LOOP
        : [s] "+r"(s), [e] "+r"(e), [sum] "+r"(sum), [x] "=&r"(z), [u] "=&r"(u), [h] "=&r"(h), [c1] "=&r"(c1),
          [c2] "=&r"(c2)
        : [end] "r"(end), [lo] "r"(lo), [top] "r"(top), [m] "r"(m), [shift] "r"(shift), [tab] "r"(tab)
        : "cc", "memory");
  } else {
    __asm__ volatile(
        "1:\n\t"
        "ldr %[x], [%[s]], #4\n\t"
        "cmp %[x], %[lo]\n\t"
        "blt 3f\n\t"
        "mls %[x], %[x], %[m], %[top]\n\t"
        "lsr %[x], %[x], %[shift]\n\t" EA_EXP_HORNER_STORE_LOOP
        : [s] "+r"(s), [e] "+r"(e), [sum] "+r"(sum), [x] "=&r"(z), [u] "=&r"(u), [h] "=&r"(h), [c1] "=&r"(c1),
          [c2] "=&r"(c2)
        : [end] "r"(end), [lo] "r"(lo), [top] "r"(top), [m] "r"(m), [shift] "r"(shift), [tab] "r"(tab)
        : "cc", "memory");
  }
  return sum;
}
#undef EA_EXP_HORNER_STORE_LOOP
}  // namespace

uint32_t qs8_softmax_exp_row__dsp(int n, const int32_t* scores, int32_t mult, int32_t shift, uint16_t* e) {
  const int32_t row_max = row_max_dsp(n, scores);
  const SoftmaxExpParams x = softmax_exp_params(mult, shift);
  return x.pre_shift > 0 ? exp_row_dsp<true>(n, scores, row_max, x, e) : exp_row_dsp<false>(n, scores, row_max, x, e);
}

}  // namespace kernels
}  // namespace edgeattn
#endif
