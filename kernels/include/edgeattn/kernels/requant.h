// The int8 arithmetic of edgeattn, written once in scalar C++.
//
// Every kernel (reference, AVX2, NEON, Cortex-M) must produce exactly the
// integers these functions define. docs/quantization.md derives the scheme and
// its error bounds; the comments here say what each step computes and why.
// Only integer arithmetic appears here, so the int8 path needs no FPU.
#ifndef EDGEATTN_KERNELS_REQUANT_H_
#define EDGEATTN_KERNELS_REQUANT_H_

#include <cstdint>

namespace edgeattn {
namespace kernels {

// ---------------------------------------------------------------------------
// Requantization: y = round(acc * r) for a real multiplier r > 0.
//
// r is stored as an integer multiplier M in [2^30, 2^31) and a shift s with
// r = M * 2^(s - 31), s in [-31, 30]. With n = 31 - s (1 <= n <= 62) the
// result is (acc * M + 2^(n-1)) >> n: one 64-bit product, one rounding,
// "round half up" (ties go towards +infinity), then saturation to int32.
// acc * M fits in 63 bits and adding 2^(n-1) <= 2^61 cannot overflow.
// Right shifts of negative values are arithmetic (floor) on every compiler we
// target (GCC, Clang; guaranteed by C++20).
// ---------------------------------------------------------------------------
constexpr int32_t kMinShift = -31;
constexpr int32_t kMaxShift = 30;

inline int32_t requantize(int32_t acc, int32_t multiplier, int32_t shift) {
  const int n = 31 - shift;
  const int64_t product = static_cast<int64_t>(acc) * multiplier;
  const int64_t rounded = (product + (int64_t{1} << (n - 1))) >> n;
  if (rounded > INT32_MAX) return INT32_MAX;
  if (rounded < INT32_MIN) return INT32_MIN;
  return static_cast<int32_t>(rounded);
}

inline int8_t saturate_s8(int32_t v) {
  return static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
}

// Requantize an accumulator to an int8 activation with zero point zp.
inline int8_t requantize_s8(int32_t acc, int32_t multiplier, int32_t shift, int32_t zp) {
  const int32_t y = requantize(acc, multiplier, shift);
  // y + zp cannot overflow in practice (zp is in [-128, 127]) but saturate first
  // so that the definition holds for every int32.
  const int32_t clamped = y < -512 ? -512 : (y > 512 ? 512 : y);
  return saturate_s8(clamped + zp);
}

// ---------------------------------------------------------------------------
// Integer softmax.
//
// Input: raw int32 scores s_j of one query row (for Q.K^T, the exact integer
// sum_i (q_i - zq)(k_ji - zk)) and the real factor c that maps a score to the
// softmax argument: x_j = c * s_j (c = s_q * s_k * attention scale).
//
//  1. d_j = max_k s_k - s_j >= 0, so every exponent is <= 0 (exact; saturated
//     to int32, which only affects terms that underflow to 0 anyway).
//  2. z_j = requantize(d_j, M, s) with M * 2^(s-31) = c * log2(e) * 2^16:
//     z_j = -x'_j * log2(e) in Q16, i.e. exp(x_j - x_max) = 2^(-z_j / 2^16).
//     This is where any input scale and zero point enter: the zero points are
//     already removed from s_j, the scales sit in (M, s).
//  3. e_j = 2^(-z_j / 2^16) in Q15 (so e_j in [0, 32768], the max is 32768):
//     integer part n = z >> 16 shifts, fraction f = z & 0xFFFF goes through a
//     degree-5 polynomial for 2^-u on [0, 1) in Q30 (max error 1.4e-7, 200x
//     below one Q15 step), see exp2_neg_q15().
//  4. sum = sum_j e_j (>= 32768 because the maximum contributes 32768;
//     < 2^31 for rows of up to 65535 keys).
//  5. p_j = round(e_j * 2^15 / sum) via one reciprocal per row:
//     b = bit length of sum, m = floor(2^(b+30) / sum) in (2^30, 2^31],
//     p_j = (e_j * m + 2^(b+14)) >> (b+15). Probabilities are 16-bit Q15
//     (1.0 = 32768), so rows of 1024 keys keep ~5 significant bits per
//     uniform weight instead of 8-bit's zero.
// ---------------------------------------------------------------------------

constexpr int32_t kProbOne = 32768;             // 1.0 in Q15
constexpr int32_t kExpCutoffQ16 = 16 << 16;     // 2^-16 in Q15 rounds below 1: treat as 0

// Coefficients of 2^-u = 1 + u*(c1 + u*(c2 + u*(c3 + u*(c4 + u*c5)))) on [0,1),
// least-squares fit, Q30. Fixed forever: changing them changes every int8 result.
constexpr int32_t kExp2Coeff[5] = {-744257869, 257897393, -59396016, 9912516, -1027080};

// e = round(2^15 * 2^(-z / 2^16)) for z >= 0, in [0, 32768].
// Horner steps use floor((h * u) / 2^31) (an arithmetic shift), which maps to
// a widening multiply + shift on every ISA.
inline int32_t exp2_neg_q15(int32_t z) {
  if (z >= kExpCutoffQ16) return 0;
  const int32_t n = z >> 16;                        // integer part, 0..15
  const int64_t u = static_cast<int64_t>(z & 0xFFFF) << 15;  // fraction in Q31
  int64_t h = kExp2Coeff[4];
  h = kExp2Coeff[3] + ((h * u) >> 31);
  h = kExp2Coeff[2] + ((h * u) >> 31);
  h = kExp2Coeff[1] + ((h * u) >> 31);
  h = kExp2Coeff[0] + ((h * u) >> 31);
  const int64_t v = (int64_t{1} << 30) + ((h * u) >> 31);  // 2^-u in Q30, (2^29, 2^30]
  const int s = 15 + n;                             // Q30 -> Q15, then 2^-n
  return static_cast<int32_t>((v + (int64_t{1} << (s - 1))) >> s);
}

// Softmax argument of one score: z = requantize(max - s) (>= 0).
inline int32_t softmax_exponent_q16(int32_t row_max, int32_t score, int32_t multiplier,
                                    int32_t shift) {
  int64_t d = static_cast<int64_t>(row_max) - score;
  if (d > INT32_MAX) d = INT32_MAX;
  return requantize(static_cast<int32_t>(d), multiplier, shift);
}

// The per-row reciprocal of step 5: p = (e * multiplier + 2^(shift-1)) >> shift.
struct ProbNormalizer {
  uint32_t multiplier;  // (2^30, 2^31]
  int32_t shift;        // b + 15, 31..46
};

// Number of significant bits (0 for 0): one CLZ where the compiler has it
// (a bit-by-bit loop was ~10 % of a 128-key softmax row on x86).
inline int bit_length_u32(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return x == 0 ? 0 : 32 - __builtin_clz(x);
#else
  int b = 0;
  while (x != 0) {
    ++b;
    x >>= 1;
  }
  return b;
#endif
}

// sum must be >= 1 (it is >= 32768 whenever the row has a valid key).
inline ProbNormalizer prob_normalizer(uint32_t sum) {
  const int b = bit_length_u32(sum);
  const uint64_t m = (uint64_t{1} << (b + 30)) / sum;
  return ProbNormalizer{static_cast<uint32_t>(m), b + 15};
}

inline uint16_t normalize_prob_q15(int32_t e, ProbNormalizer norm) {
  const uint64_t product = static_cast<uint64_t>(static_cast<uint32_t>(e)) * norm.multiplier;
  return static_cast<uint16_t>((product + (uint64_t{1} << (norm.shift - 1))) >> norm.shift);
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_REQUANT_H_
