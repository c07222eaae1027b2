// requantize() and requantize_s8() of requant.h in 32-bit instructions on
// Cortex-M cores with the DSP extension (M4, M7, M33, M55; Helium requires
// it). Include only from the Cortex-M kernel files (inside their
// __ARM_FEATURE_DSP or __ARM_FEATURE_MVE sections) and their firmware tests.
//
// requant.h computes (acc M + 2^(n-1)) >> n with a 64-bit product, n = 31 -
// shift; at -Os on Armv7E-M that is a long multiply, a 64-bit add and a
// variable 64-bit shift per output. When n >= 32 (a multiplier below 1/2:
// the projections and the weighted sums of real models) the same integer
// comes from the high word of the product: SMMLA adds its accumulator
// operand times 2^32, so with the accumulator 2^(n-33) it gives
// floor((acc M + 2^(n-1)) / 2^32), and the arithmetic shift by n - 32 then
// gives floor((acc M + 2^(n-1)) / 2^n) (nested floors). For n = 32 SMMLAR
// adds the rounding 2^31 itself. |acc M| < 2^62, so the result is below
// 2^30 in magnitude and requant.h's saturation to int32 cannot bind. Smaller
// n take a 64-bit multiply-accumulate and a 64-bit shift by hand (below).
//
// requantize_s8 is out of line on purpose: inlined at its seven call sites
// (the projections' and P.V's outputs) it cost 600 B (M4) / 870 B (M55) more
// flash for no measurable change in instructions (docs/footprint.md). The
// additive score row inlines requantize(), once per key and feature.
#ifndef EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_
#define EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_

#include <arm_acle.h>

#include <cstdint>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace cm {

// requantize() for n = 31 - shift >= 33, with round = 2^(n-33) and down =
// n - 32 formed once by a caller that requantizes many values alike.
__attribute__((always_inline)) inline int32_t requantize_high(int32_t acc, int32_t multiplier, int32_t round,
                                                              int32_t down) {
  int32_t y;
  __asm__("smmla %0, %1, %2, %3" : "=r"(y) : "r"(acc), "r"(multiplier), "r"(round));
  return y >> down;
}

// requantize() of requant.h: the same int32 for every acc, multiplier and
// shift in [-31, 30] (n = 31 - shift in [1, 62]).
__attribute__((always_inline)) inline int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift) {
  const int32_t n = 31 - shift;
  int32_t y;
  if (n >= 33) return requantize_high(acc, multiplier, int32_t{1} << (n - 33), n - 32);
  if (n == 32) {
    __asm__("smmlar %0, %1, %2, %3" : "=r"(y) : "r"(acc), "r"(multiplier), "r"(0));
    return y;
  }
  // n <= 31 (a multiplier of 1/2 or more, such as the additive layers'
  // pre-tanh step): X = acc M + 2^(n-1) in hi:lo with one SMLAL onto the
  // rounding term. X >> n fits int32 exactly when X >> (n + 31), which is
  // hi >> (n - 1), is 0 or -1; then its bits are hi:lo shifted by n. Else
  // requant.h saturates towards the sign of X.
  uint32_t lo = uint32_t{1} << (n - 1);
  int32_t hi = 0;
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(multiplier));
  const int32_t top = hi >> (n - 1);
  if (top != 0 && top != -1) return hi < 0 ? INT32_MIN : INT32_MAX;
  return static_cast<int32_t>((static_cast<uint32_t>(hi) << (32 - n)) | (lo >> n));
}

// The end of requant.h's requantize_s8 for a requantized y: clamp to
// [-512, 512], add the zero point (an int8 value, as the format requires),
// saturate to int8. The clamp is SSAT #10, [-512, 511]: 511 + zp and
// 512 + zp saturate to the same int8 for every zp >= -128 (both >= 383).
inline int8_t to_s8(int32_t y, int32_t zp) { return static_cast<int8_t>(__ssat(__ssat(y, 10) + zp, 8)); }

// requantize_s8() of requant.h on top of requantize() above.
__attribute__((noinline)) inline int8_t requantize_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                                      int32_t zp) {
  return to_s8(requantize(acc, multiplier, shift), zp);
}

// residual_epilogue_s8() of requant.h (contract 5b) from a requantized y
// with |y| <= 2^30 that agrees with requantize() wherever that is inside
// (-2^29, 2^29) and is on the same side of +-2^29 elsewhere: the clamp is
// then not needed. With requant.h's bound |A a + C| < 2^28 + 2^24 the sum
// fits int32, and any y beyond +-2^29 saturates the output to 127 / -128
// (the sum stays beyond +-2^27, and n <= 16), as the clamped one does.
// ResidualConst is the term with C = residual_offset() formed once per call.
struct ResidualConst {
  int32_t mult, offset, shift;  // A, C, n
};
inline ResidualConst residual_const(const ResidualTerm& t) { return {t.mult, residual_offset(t), t.shift}; }
__attribute__((always_inline)) inline int8_t residual_s8(int32_t y, int32_t a, const ResidualConst& t) {
  return static_cast<int8_t>(__ssat((y + t.mult * a + t.offset) >> t.shift, 8));
}
// Every shift: requantize() above, clamped to [-2^29, 2^29 - 1] by SSAT #30.
__attribute__((noinline)) inline int8_t requantize_residual_s8(int32_t acc, int32_t multiplier, int32_t shift,
                                                               int32_t a, const ResidualConst& t) {
  return residual_s8(__ssat(requantize(acc, multiplier, shift), 30), a, t);
}

// The residual's projections have shift >= -1 (their multiplier carries
// the residual's 2^n), where requantize() for the residual epilogue is
// SMMULR (VRMULH on Helium) of acc << s, s = shift + 1 in [0, 31],
// saturated: floor((acc 2^s M + 2^31) / 2^32) is requant.h's floor((acc M +
// 2^(n-1)) / 2^n), n = 31 - shift, while acc << s fits int32; when it does
// not, |acc| >= 2^(31-s), so requantize() is at least 2^29 in magnitude,
// and so is the saturated value's SMMULR (for M >= 2^30, as
// quantize_multiplier gives), with the same sign. |y| <= 2^30 in every
// case: what residual_s8 needs.
inline bool residual_rmul_form(int32_t multiplier, int32_t shift) {
  return shift >= -1 && shift <= 30 && multiplier >= (int32_t{1} << 30);
}
__attribute__((always_inline)) inline int32_t requantize_rmul(int32_t acc, int32_t multiplier, int32_t s) {
  int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc) << s);
  if ((a >> s) != acc) a = (acc >> 31) ^ INT32_MAX;  // saturated
  int32_t y;
  __asm__("smmulr %0, %1, %2" : "=r"(y) : "r"(a), "r"(multiplier));
  return y;
}

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
// requantize_s8 of four accumulators, each lane with its own multiplier and
// shift (per channel, or one broadcast), stored to out for the lanes of p,
// when every lane of p has n = 31 - shift >= 33, i.e. shift <= -2; returns
// false (nothing stored) otherwise. Adding the integer 2^(n-33) inside a
// floor by 2^32 adds it outside: floor((acc M + 2^(n-1)) / 2^32) =
// floor(acc M / 2^32) + 2^(n-33), and floor(acc M / 2^32) is VMULH's high
// word. A VSHL by 32 - n = shift + 1 (negative) then shifts right
// arithmetically (floor) by n - 32, the zero point and the int8 saturation
// follow requant.h (its clamp to [-512, 512] cannot change the byte, below),
// and VSTRB stores each lane's low byte.
struct RequantX4 {
  int32x4_t multiplier, round, shl;
};

// The lanes' constants, or false when a lane of p has shift > -2.
__attribute__((always_inline)) inline bool requant_x4_setup(int32x4_t multiplier, int32x4_t shift, mve_pred16_t p,
                                                            RequantX4* r) {
  if (vmaxvq_p_s32(INT32_MIN, shift, p) > -2) return false;
  r->multiplier = multiplier;
  r->round = vshlq_s32(vdupq_n_s32(1), vsubq_n_s32(vnegq_s32(shift), 2));  // 2^(n-33) = 1 << (-2 - shift)
  r->shl = vaddq_n_s32(shift, 1);                                           // 32 - n
  return true;
}

__attribute__((always_inline)) inline void requant_x4_store(int32x4_t acc, const RequantX4& r, int32_t zp, int8_t* out,
                                                            mve_pred16_t p) {
  // requant.h's clamp to [-512, 512] before the zero point is left out: |y|
  // < 2^30 (above), so y + zp cannot wrap, and for an int8 zp both
  // sat8(clamp(y) + zp) and sat8(y + zp) are 127 above 512 and -128 below -512.
  const int32x4_t y = vaddq_n_s32(vshlq_s32(vaddq_s32(vmulhq_s32(acc, r.multiplier), r.round), r.shl), zp);
  // The int8 saturation as two saturating narrows (int32 -> int16 -> int8,
  // each into the bottom half of its lane; the top halves are don't-care):
  // the low byte of each 32-bit lane, which VSTRB.32 stores, is then
  // sat8(sat16(y)) = sat8(y).
  const int16x8_t h = vqmovnbq_s32(vreinterpretq_s16_s32(y), y);
  vstrbq_p_s32(out, vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s16(h), h)), p);
}

__attribute__((always_inline)) inline bool requantize_s8_x4(int32x4_t acc, int32x4_t multiplier, int32x4_t shift,
                                                            int32_t zp, int8_t* out, mve_pred16_t p) {
  RequantX4 r;
  if (!requant_x4_setup(multiplier, shift, p, &r)) return false;
  requant_x4_store(acc, r, zp, out, p);
  return true;
}
#endif

}  // namespace cm
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CORTEX_M_REQUANT_CM_H_
