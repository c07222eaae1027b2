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
// Integer softmax (numerics contract 2).
//
// Input: raw int32 scores s_j of one query row (for Q.K^T, the exact integer
// sum_i (q_i - zq)(k_ji - zk)) and the layer's (M_s, shift_s) with
// M_s * 2^(shift_s - 31) = c * log2(e) * 2^16, where c = s_q * s_k * scale maps
// a score to the softmax argument x_j = c * s_j. The zero points are already
// removed from s_j and the scales sit only in (M_s, shift_s), so the softmax is
// right for any input scale and zero point.
//
// Every step below is one 32-bit or 16-bit SIMD instruction on AVX-512 BW,
// AVX2 and NEON (contract 1 used 64-bit products and a Q30 polynomial, three
// quarters of the layer's softmax time):
//
//  1. d_j = max_k s_k - s_j as uint32 (exact: the difference is in [0, 2^32)).
//  2. z_j = min((min(d_j >> p, D) * M) >> r, 0xFFFF): -(x_j - x_max) log2(e) in
//     Q12, so exp(x_j - x_max) = 2^(-z_j / 4096). (p, M, r, D) are derived
//     from (M_s, shift_s) by softmax_exp_params(): M in [2^15, 2^16) keeps 15
//     bits of the multiplier, p drops score bits finer than one Q12 step, and
//     D is the smallest d' whose z reaches 0xFFFF, so d' * M never leaves 32
//     bits. z = 0xFFFF (2^-16 and below, less than half a Q15 step) means 0.
//  3. e_j = 2^(-z_j / 4096) in Q15 with the maximum at 32767 (int16): the
//     integer part n = z >> 12 is a rounding right shift, the fraction
//     u = (z & 0xFFF) << 3 (Q15) goes through
//       w = 32767 + u(a1 + u(a2 + u(a3 + u a4)))       (Q15, in [16367, 32767])
//     with Horner steps mulhrs(h, u) = (h u + 2^14) >> 15: VPMULHRSW on x86,
//     VQRDMULH on NEON (the same integers: u >= 0, so VQRDMULH's only
//     saturating case, -32768 * -32768, never occurs). Every intermediate
//     fits int16. e = (w + 2^(n-1)) >> n (w for n = 0).
//  4. sum = sum_j e_j, in [32767, 32767 L] (< 2^31 for L <= 65536).
//  5. p_j = min(32767, round(e_j * 2^15 / sum)) through one 16-bit reciprocal
//     per row: b = bit length of sum, m = floor((2^(b+15) - 1) / sum) in
//     [2^15 - 1, 2^16), p_j = min(32767, (e_j m + 2^(b-1)) >> b). Probabilities
//     are Q15 (1.0 = 32768) and fit int16; a row of 1024 equal scores still
//     keeps p_j = 32 (8-bit probabilities would give 0).
// docs/quantization.md bounds the error of each step.
// ---------------------------------------------------------------------------

constexpr int32_t kProbOne = 32768;   // 1.0 in Q15 (the P.V multiplier divides by it)
constexpr int32_t kProbMax = 32767;   // largest probability and largest e_j
constexpr uint32_t kExpZeroQ12 = 0xFFFF;  // z at or past 16 in Q12: e = 0

// Coefficients a1..a4 of 2^-u - 1 (times 32767) in Q15, fitted with the
// rounding of mulhrs included: max |w - 32767 2^-u| = 1.64 Q15 steps over all
// 4096 fractions. Fixed forever: changing them changes every int8 result.
constexpr int16_t kExp2Coeff[4] = {-22709, 7844, -1743, 225};

// Step 2's parameters for one layer (the same for every row).
struct SoftmaxExpParams {
  uint32_t pre_shift;   // p, 0..31
  uint32_t limit;       // D, >= 1
  uint32_t multiplier;  // M, [1, 2^16)
  uint32_t post_shift;  // r, 0..16
};

// From z16 = d M_s 2^(shift_s - 31) (Q16) to z12 = d M 2^-(p + r) (Q12):
// M = M_s / 2^15 (rounded) leaves p + r = 20 - shift_s. r takes up to 16 of
// it (so z is the high half of d' M), p the rest. When 20 - shift_s < 0 one
// score unit is worth more than 16 in log2: every key but the maximum is 0.
inline SoftmaxExpParams softmax_exp_params(int32_t mult, int32_t shift) {
  SoftmaxExpParams x{0, 0, 0xFFFF, 0};
  const int32_t t = 20 - shift;
  if (t >= 0) {
    const uint32_t ms = mult > 0 ? static_cast<uint32_t>(mult) : 1u;
    const uint32_t m = (ms + (1u << 14)) >> 15;
    x.multiplier = m == 0 ? 1u : (m > 0xFFFFu ? 0xFFFFu : m);
    x.post_shift = static_cast<uint32_t>(t < 16 ? t : 16);
    x.pre_shift = static_cast<uint32_t>(t - 16 > 31 ? 31 : (t > 16 ? t - 16 : 0));
  }
  // smallest D with (D M) >> r >= 0xFFFF: D M < 0xFFFF 2^r + M <= 2^32.
  // 32 bits suffice (one division instruction on 32-bit cores): r <= 16, so
  // 0xFFFF 2^r + M - 1 <= 0xFFFF0000 + 0xFFFE < 2^32.
  const uint32_t need = kExpZeroQ12 << x.post_shift;
  x.limit = (need + x.multiplier - 1) / x.multiplier;
  return x;
}

// Step 1 and 2 for one score.
inline uint32_t softmax_exponent_q12(int32_t row_max, int32_t score, const SoftmaxExpParams& x) {
  const uint32_t d = static_cast<uint32_t>(row_max) - static_cast<uint32_t>(score);
  const uint32_t dp = (d >> x.pre_shift) < x.limit ? (d >> x.pre_shift) : x.limit;
  const uint32_t z = (dp * x.multiplier) >> x.post_shift;
  return z < kExpZeroQ12 ? z : kExpZeroQ12;
}

// (a b + 2^14) >> 15 on int16 operands (the result fits int16 unless
// a = b = -32768, which the softmax never multiplies).
inline int32_t mulhrs16(int32_t a, int32_t b) { return (a * b + (1 << 14)) >> 15; }

// Step 3: e = 2^(-z / 4096) in Q15 (max 32767), 0 for z = 0xFFFF.
inline int32_t exp2_neg_q15(uint32_t z) {
  if (z >= kExpZeroQ12) return 0;
  const int n = static_cast<int>(z >> 12);               // 0..15
  const int32_t u = static_cast<int32_t>(z & 0xFFF) << 3;  // Q15 fraction
  int32_t h = kExp2Coeff[3];
  h = kExp2Coeff[2] + mulhrs16(h, u);
  h = kExp2Coeff[1] + mulhrs16(h, u);
  h = kExp2Coeff[0] + mulhrs16(h, u);
  const int32_t w = kProbMax + mulhrs16(h, u);
  return (w + ((1 << n) >> 1)) >> n;
}

// Step 5's per-row reciprocal.
struct ProbNormalizer {
  uint32_t multiplier;  // m, [2^15 - 1, 2^16)
  int32_t shift;        // b, 15..31
};

// Number of significant bits (0 for 0): one CLZ where the compiler has it.
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

// sum must be >= 1 (it is >= 32767 whenever the row has a visible key).
inline ProbNormalizer prob_normalizer(uint32_t sum) {
  const int b = bit_length_u32(sum);
  const uint64_t m = ((uint64_t{1} << (b + 15)) - 1) / sum;
  return ProbNormalizer{static_cast<uint32_t>(m), b};
}

// e m < 2^31 (e <= 32767, m < 2^16), so the rounding add stays in uint32.
inline uint16_t normalize_prob_q15(int32_t e, ProbNormalizer norm) {
  const uint32_t product = static_cast<uint32_t>(e) * norm.multiplier;
  const uint32_t p = (product + (1u << (norm.shift - 1))) >> norm.shift;
  return static_cast<uint16_t>(p < static_cast<uint32_t>(kProbMax) ? p : static_cast<uint32_t>(kProbMax));
}


// ---------------------------------------------------------------------------
// Integer LayerNorm (numerics contract 4), one row x[0..d) of int8, d <= 16384.
//
// LayerNorm does not change when a constant is added to its input, so the
// input zero point never appears: the raw int8 values are used.
//  1. S = sum_i x_i and Q = sum_i x_i^2, int32 (|S| <= 2^21, Q <= 2^28).
//  2. c_i = d x_i - S (= d (x_i - mean), |c_i| <= 255 d <= 2^22) and
//     D = 2^16 (d Q - S^2) + E (int64): 2^16 d^2 (var + eps) in input units
//     squared (d Q - S^2 <= 2^42). The converter writes
//     E = round(2^16 d^2 eps / s_in^2), at least 1 and at most 2^60; the 2^16
//     keeps eps's share exact to 1/65536 even when d^2 eps / s_in^2 < 1. A row
//     whose variance is zero has D = E > 0 and c_i = 0: the output is the bias.
//  3. 1 / sqrt(D) from one exact integer square root: D is scaled by 4^k so
//     that D 4^k has 61 or 62 bits (k = (62 - bits(D)) / 2), r = floor(sqrt(D 4^k))
//     is in [2^30, 2^31), and inv = round(2^60 / r) in [2^29, 2^30] (an int32,
//     so SIMD paths multiply c_i inv as 32 x 32 -> 64 bits).
//     Then y_i = c_i / sqrt(D 2^-16) = c_i inv 2^(k + 8 - 60) up to the two roundings.
//  4. y_i in Q(f), f = 14 - ceil(ceil(log2 d) / 2), so |y_i| <= sqrt(d - 1)
//     keeps |y_q| <= 2^14: y_q = (c_i inv + 2^(s-1)) >> s with
//     s = 52 - k - f (8 <= s <= 45; c_i inv fits 52 bits), clamped to +-32767.
//  5. acc_i = y_q gain_i + bias_i (gain int16 at one scale s_g, bias int32 at
//     s_g 2^-f, |bias| <= 2^30: acc fits int32), and the output is
//     requantize_s8(acc_i, M, shift, zp_out), M 2^(shift-31) = s_g 2^-f / s_out.
// ---------------------------------------------------------------------------
constexpr int32_t kLayerNormMaxBias = int32_t{1} << 30;
constexpr int64_t kLayerNormMaxEpsTerm = int64_t{1} << 60;

inline int bit_length_u64(uint64_t x) {
  const uint32_t hi = static_cast<uint32_t>(x >> 32);
  return hi != 0 ? 32 + bit_length_u32(hi) : bit_length_u32(static_cast<uint32_t>(x));
}

// floor(sqrt(x)), exact for every uint64 (bit by bit: 32 steps, no division).
inline uint32_t isqrt_u64(uint64_t x) {
  uint64_t root = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > x) bit >>= 2;
  while (bit != 0) {
    if (x >= root + bit) {
      x -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return static_cast<uint32_t>(root);
}

// Step 4's f for a row of d elements.
inline int layernorm_frac_bits(int d) {
  const int log2_ceil = d <= 1 ? 0 : bit_length_u32(static_cast<uint32_t>(d - 1));
  return 14 - (log2_ceil + 1) / 2;
}

// Steps 2-3 for one row: the multiplier inv and shift s of step 4.
struct LayerNormRowScale {
  int32_t inv;  // [2^29, 2^30]
  int shift;    // s, 8..45 (contract 4b: 2..53)
};
inline LayerNormRowScale layernorm_row_scale(int d, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  const int64_t var_d2 = static_cast<int64_t>(d) * sum_sq - static_cast<int64_t>(sum) * sum;
  const uint64_t big = (static_cast<uint64_t>(var_d2) << 16) + static_cast<uint64_t>(eps_term);  // >= 1
  const int k = (62 - bit_length_u64(big)) / 2;
  const uint64_t r = isqrt_u64(big << (2 * k));
  const int32_t inv = static_cast<int32_t>(((uint64_t{1} << 60) + (r >> 1)) / r);
  return LayerNormRowScale{inv, 52 - k - layernorm_frac_bits(d)};
}

// Step 4 for one element.
inline int32_t layernorm_normalized_q(int32_t centered, const LayerNormRowScale& rs) {
  const int64_t y = (static_cast<int64_t>(centered) * rs.inv + (int64_t{1} << (rs.shift - 1))) >> rs.shift;
  return static_cast<int32_t>(y > 32767 ? 32767 : (y < -32767 ? -32767 : y));
}

// ---------------------------------------------------------------------------
// Contract 5, a separate int8 add of two int8 tensors (model format 4), was
// replaced by 5b inside the blocks. Where no projection's epilogue can add
// (the norm on the sub-layer's output, before the add), the `add` kind does,
// with the add contract at the end of this file.
//
// Residual add in a projection's epilogue (numerics contract 5b): a block's
// output projection and second FFN linear add the residual stream a from
// their int32 sums, so the sub-layer output is never rounded to int8 on its
// own (docs/quantization.md, "Residual adds"):
//   y = sat8((clamp(requantize(acc, M_c, s_c), -2^29, 2^29) + A a + C) >> n)
// (M_c, s_c) maps the projection's sum to the output's int8 step times 2^n
// (r_c = s_x s_w,c 2^n / s_y), A = round(s_a 2^n / s_y) in [0, 2^20), and
// C = 2^(n-1) + zp_y 2^n - A zp_a folds both zero points and the rounding
// into one constant, n in [1, 16]. Bounds: A a + C = A (a - zp_a) + 2^(n-1)
// + zp_y 2^n is below 2^28 + 2^24 in magnitude and the clamped term at most
// 2^29, so the sum stays inside int32. The clamp never changes a result: a
// sum that does not saturate has |requantize(...)| <= 2^n 256 + |A (a -
// zp_a)| < 2^24 + 2^28. One rounding of the whole sum (the projection's
// 2^-n step is 1/65536 of an output step at n = 16).
// ---------------------------------------------------------------------------
constexpr int32_t kResidualMaxShift = 16;
constexpr int32_t kResidualMaxMultiplier = (int32_t{1} << 20) - 1;
constexpr int32_t kResidualClamp = int32_t{1} << 29;

// What a caller hands the epilogue: A, n and the two int8 zero points
// (the loader checks them); each path forms C from them once per call.
struct ResidualTerm {
  int32_t mult;   // A
  int32_t shift;  // n
  int32_t a_zp;   // zp_a, the residual input's zero point, [-128, 127]
  int32_t y_zp;   // zp_y, the output's, [-128, 127]
};

// C = 2^(n-1) + zp_y 2^n - A zp_a. With int8 zero points, A < 2^20 and
// n <= 16, |C| < 2^15 + 2^23 + 2^27 < 2^28: every term here fits int32.
inline int32_t residual_offset(const ResidualTerm& r) {
  return (int32_t{1} << (r.shift - 1)) + r.y_zp * (int32_t{1} << r.shift) - r.mult * r.a_zp;
}

// One output; offset is residual_offset(r), formed by the caller once per
// call rather than once per output.
inline int8_t residual_epilogue_s8(int32_t acc, int32_t multiplier, int32_t shift, int32_t a,
                                   const ResidualTerm& r, int32_t offset) {
  int32_t y = requantize(acc, multiplier, shift);
  y = y < -kResidualClamp ? -kResidualClamp : (y > kResidualClamp ? kResidualClamp : y);
  return saturate_s8((y + r.mult * a + offset) >> r.shift);
}

// ---------------------------------------------------------------------------
// Residual add into a 16-bit residual stream (numerics contract 5c, issue 37):
// the contract 5b epilogue with the residual a and the output y int16, both
// per tensor with zero point 0 (the stream is symmetric: no zero point to
// fold, and one more bit than an asymmetric int16 would waste on the sign):
//   y = sat16((clamp(requantize(acc, M_c, s_c), -2^29, 2^29) + A a + 2^(n-1)) >> n)
// (M_c, s_c) maps the projection's sum to y's step times 2^n (r_c = s_x
// s_w,c 2^n / s_y), A = round(s_a 2^n / s_y) in [0, 2^13] and n in [1, 13]:
// the converter takes the largest n with A <= 2^13 (n = 13, A = 2^13 when
// the residual and the output share one scale: the add is then exact up to
// its one rounding).
// Why these ranges: A and a both fit int16 (a in [-2^15, 2^15)), and so does
// the rounding constant 2^(n-1) <= 2^12, so A a + 2^(n-1) is one
// 16 x 16 -> 32 multiply-add on every ISA (one VPMADDWD of the pairs (a, 1)
// and (A, 2^(n-1)) on x86, VMLAL.S16 on NEON, SMLABB on the M4), and
// everything else stays in 32-bit lanes, as in 5b. The clamp is 5b's 2^29:
// the NEON requantization (requantize32_x4) gives lanes whose |requantize()|
// is at least 2^29 only as some value in [2^29, 2^30] of the right sign,
// which the clamp maps to the reference's integer. Bounds:
//  - |A a| <= 2^13 2^15 = 2^28, so |clamped + A a + 2^(n-1)|
//    <= 2^29 + 2^28 + 2^12 < 2^31: the sum fits int32.
//  - The clamp never changes a result: a term y_c >= 2^29 gives, for every
//    a, a sum of at least 2^29 - 2^28 + 2^(n-1) > 2^28 - 2^n >= 32767 2^n,
//    which saturates to 32767 as the unclamped sum does (it is no smaller);
//    a term <= -2^29 gives at most -2^29 + 2^13 (2^15 - 1) + 2^12
//    = -2^28 - 2^12 < -32767 2^n, which saturates to -32768 likewise.
// One rounding of the whole sum; the projection's part enters at 2^-n of an
// int16 step (1/8192 at n = 13). A's own rounding adds at most
// 2^15 2^-(n+1) = 2^(14-n) steps (2 at n = 13, 0 when s_a 2^n / s_y is an
// integer, as for a shared scale). 5b allowed n = 16 and A < 2^20; an int16
// residual is 2^8 times wider, so both shrink to keep int32.
// ---------------------------------------------------------------------------
constexpr int32_t kResidual16MaxShift = 13;
constexpr int32_t kResidual16MaxMultiplier = int32_t{1} << 13;  // inclusive
constexpr int32_t kResidual16Clamp = int32_t{1} << 29;

// What a caller hands the int16 epilogue: A and n (the loader checks them).
struct Residual16Term {
  int32_t mult;   // A, [0, 2^13]
  int32_t shift;  // n, [1, 13]
};

inline int16_t saturate_s16(int32_t v) {
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

// Contract 5c-out (issue 37, a standalone mha layer's int16 output,
// MultiHeadAttention.output16): contract 5c with a zero residual,
//   y = sat16((clamp(requantize(acc, M_c, s_c), -2^29, 2^29) + 2^(n-1)) >> n)
// through the same qs8_linear_res16 kernels: the residual is one row of
// zeros read at row stride 0 (every path reads it, never writes it) and
// the term is A = 0, n = kResidual5cOutShift. (M_c, s_c) maps the out
// projection's sum to y's step times 2^n (r_c = s_x s_w,c 2^n / s_y, y int16
// with zero point 0). Bounds: 5c's with a = 0 (the sum is at most
// 2^29 + 2^12 < 2^31, the clamp never changes a result); n = 13, 5c's
// largest, puts the projection's part at 1/8192 of an int16 step before its
// one rounding.
constexpr int32_t kResidual5cOutShift = kResidual16MaxShift;

// One output of contract 5c.
inline int16_t residual_epilogue_s16(int32_t acc, int32_t multiplier, int32_t shift, int32_t a,
                                     const Residual16Term& r) {
  int32_t y = requantize(acc, multiplier, shift);
  y = y < -kResidual16Clamp ? -kResidual16Clamp : (y > kResidual16Clamp ? kResidual16Clamp : y);
  return saturate_s16((y + r.mult * a + (int32_t{1} << (r.shift - 1))) >> r.shift);
}

// ---------------------------------------------------------------------------
// Integer LayerNorm of an int16 row (numerics contract 4b, issue 37): the
// residual stream's LayerNorm, x[0..d) int16 with zero point 0 (any zero
// point would do, as in contract 4), d <= 16384. Contract 4's steps with
// wider sums and a variance scale that depends on d:
//  1. S = sum_i x_i (int32: |S| <= 2^15 d <= 2^29) and Q = sum_i x_i^2, int64:
//     Q <= 2^30 d <= 2^44 (one x_i^2 alone is up to 2^30, so int32 holds only
//     one square; the x86 paths add pairs of squares as uint32, <= 2^31,
//     NEON single squares as int32, and both widen those to 64-bit lanes).
//  2. c_i = d x_i - S (|c_i| <= (2^16 - 1) d < 2^30, int32) and
//     D = 4^p (d Q - S^2) + E (int64) = 4^p d^2 (var + eps) in input units
//     squared, p = 14 - ceil(log2 d) (0..14): d Q <= 2^58 and S^2 <= 2^58
//     are int64, d Q - S^2 = d^2 var < d^2 2^30, so 4^p (d Q - S^2) < 2^58;
//     E = round(4^p d^2 eps / s_in^2) in [1, 2^60] (converter), 1 <= D < 2^61.
//     4^p d^2 is in (2^26, 2^28] for every d, so E keeps eps's share exact to
//     2^-27 of an input step squared or better (contract 4's 2^16 does the same;
//     without it a 3-wide row one step from constant was off by hundreds of
//     int16 steps, E rounding d^2 eps / s_in^2 = 0.02 up to 1).
//  3. As contract 4: k = (62 - bits(D)) / 2 (0..30), r = floor(sqrt(D 4^k))
//     in [2^30, 2^31), inv = round(2^60 / r) in [2^29, 2^30]; then
//     y_i = c_i 2^p / sqrt(D) = c_i inv 2^(k + p - 60).
//  4. y_q = clamp((c_i inv + 2^(s-1)) >> s, +-32767) with s = 60 - k - p - f,
//     f = layernorm_frac_bits(d) as in contract 4 (2 <= s <= 53;
//     |c_i inv| < 2^60, int64). |y_q| <= 2^14 for every row (Samuelson's
//     inequality as in contract 4).
//  5. acc_i = y_q gain_i + bias_i as contract 4 (int32), then
//     int8 output (the GEMM after it): requantize_s8(acc_i, M, shift, zp_y);
//     int16 output (the stream itself, post-norm blocks; zero point 0):
//       sat16(requantize(acc_i, M16, shift16)),
//     each with its own M 2^(shift-31) = s_g 2^-f / s_out.
// ---------------------------------------------------------------------------
// Step 2's p for a row of d elements.
inline int layernorm16_var_shift(int d) {
  return 14 - (d <= 1 ? 0 : bit_length_u32(static_cast<uint32_t>(d - 1)));
}

inline LayerNormRowScale layernorm16_row_scale(int d, int32_t sum, int64_t sum_sq, int64_t eps_term) {
  const int p = layernorm16_var_shift(d);
  const int64_t var_d2 = static_cast<int64_t>(d) * sum_sq - static_cast<int64_t>(sum) * sum;
  const uint64_t big = (static_cast<uint64_t>(var_d2) << (2 * p)) + static_cast<uint64_t>(eps_term);  // [1, 2^61)
  const int k = (62 - bit_length_u64(big)) / 2;
  const uint64_t r = isqrt_u64(big << (2 * k));
  const int32_t inv = static_cast<int32_t>(((uint64_t{1} << 60) + (r >> 1)) / r);
  return LayerNormRowScale{inv, 60 - k - p - layernorm_frac_bits(d)};
}

inline int16_t requantize_s16(int32_t acc, int32_t multiplier, int32_t shift) {
  return saturate_s16(requantize(acc, multiplier, shift));
}

// ---------------------------------------------------------------------------
// Activations (numerics contract 6): every element-wise int8 function (ReLU,
// GELU in its erf and tanh forms, SiLU) is a 256-entry table the converter
// builds from the input's and output's scales: y = table[x + 128]. Exact
// for int8 input by construction, no libm on the device, and the same bytes
// on every path.
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Positions (the positions contract, layer kind `positions`): an int8 row x
// at (s_in, zp_in) plus a positional table row pos, out at (s_out, zp_out):
//   y = sat8((A (x - zp_in) + P 2^(16 - b) + 2^15 + zp_out 2^16) >> 16)
// The converter writes A = round(s_in / s_out 2^16), an int32 in
// [0, 2^22) (input steps at most 64 output steps), and the table as int16
// P = round(pos / s_out 2^b) with b, the table's fraction bits, the largest
// in [3, 16] that keeps every |P| <= 32767 (so |pos| < 4096 output steps).
// So y is the exact real (s_in (x - zp_in) + pos) / s_out + zp_out rounded
// once (half up, the arithmetic shift), up to A's and P's own roundings:
// 255 2^-17 + 2^-(b+1) output steps (at most 0.064 at b = 3, 0.004 at
// b = 8). Bounds: |A (x - zp_in)| <= 255 (2^22 - 1) < 2^30,
// |P 2^(16 - b)| <= 2^15 2^13 = 2^28, |2^15 + zp_out 2^16| < 2^24: the sum
// stays below 2^31 in magnitude, one int32 per element, no 64-bit step.
// Class rows are constants (the converter writes their int8 outputs).
// ---------------------------------------------------------------------------
constexpr int32_t kPositionsMaxMultiplier = (int32_t{1} << 22) - 1;
constexpr int32_t kPositionsMinBits = 3;
constexpr int32_t kPositionsMaxBits = 16;

inline int8_t positions_s8(int32_t x, int32_t zp_in, int32_t a, int32_t p, int32_t bits, int32_t zp_out) {
  const int32_t v = a * (x - zp_in) + p * (int32_t{1} << (16 - bits)) + (int32_t{1} << 15) + zp_out * 65536;
  return saturate_s8(v >> 16);
}

// ---------------------------------------------------------------------------
// Positions into the 16-bit residual stream (the positions16 contract,
// issue 37: a `positions` layer whose output is the int16 stream of the
// block after it). The int8 row x at (s_in, zp_in) as above, the output
// int16 at s_out with zero point 0 (symmetric, as the stream):
//   y = sat16((A (x - zp_in) + P 2^(n - b) + 2^(n - 1)) >> n)
// The converter writes A = round(s_in / s_out 2^n) in [0, 2^22) and the
// table as int16 P = round(pos / s_out 2^b), taking the largest n in
// [1, 16] for which A fits and some b in [max(0, n - 13), n] keeps every
// |P| <= 32767, and the largest such b. Why n varies: an int16 output step
// is about 2^8 times finer than an int8 one, so the input's step is some
// 2^8 output steps (A < 2^22 then needs n <= 13) and the table reaches up
// to 32767 output steps (b = 0); the int8 contract's fixed n = 16 would
// need A up to 2^24 and b >= 3. Bounds (every term int32):
// |A (x - zp_in)| <= 255 (2^22 - 1) < 2^30, |P 2^(n - b)| <= 2^15 2^13 =
// 2^28 (n - b <= 13), 2^(n - 1) <= 2^15: the sum is below
// 2^30 + 2^28 + 2^15 < 2^31 in magnitude, one int32 per element, no 64-bit
// step. y is the real (s_in (x - zp_in) + pos) / s_out rounded once (half
// up) up to A's and P's own roundings, 255 2^-(n+1) + 2^-(b+1) output
// steps (0.52 int16 steps at worst, n = 8 and b = 0; 1/512 of an int8
// step). Class rows are constants (the converter writes their int16 outputs,
// rounded half up and saturated the same way).
// ---------------------------------------------------------------------------
constexpr int32_t kPositions16MinShift = 1;
constexpr int32_t kPositions16MaxShift = 16;
constexpr int32_t kPositions16MaxTableShift = 13;  // n - b

inline int16_t positions_s16(int32_t x, int32_t zp_in, int32_t a, int32_t p, int32_t bits, int32_t shift) {
  const int32_t v = a * (x - zp_in) + p * (int32_t{1} << (shift - bits)) + (int32_t{1} << (shift - 1));
  return saturate_s16(v >> shift);
}

// ---------------------------------------------------------------------------
// Positions with the stream's 16-bit entry (the positions16-in contract,
// issue 37, Positions.input16): the input row x is int16 at s_in with zero
// point 0 (a `linear` layer's int16 output, contract 5c-out), the output
// int16 at s_out with zero point 0, as positions16:
//   y = sat16((A x + P 2^(n - b) + 2^(n - 1)) >> n)          (int64)
// The converter writes A = round(s_in / s_out 2^n) in [0, 2^22), taking the
// largest n in [1, 30] for which A fits, and the table as int16
// P = round(pos / s_out 2^b) with the largest b in [0, n] that keeps every
// |P| <= 32767. Why 64 bits: an int16 x is 2^8 times wider than positions16's
// int8 one, and input and output steps are alike (A about 2^n), so A x
// needs 2^15 2^n; keeping int32 would cap n at about 15 and leave A's
// rounding at up to 2^(14-n) = 1/2 output step at the int16 ends. With
// int64 (one 32 x 32 -> 64 multiply, SMULL/SMLAL on Cortex-M, the same
// integers on every target): |A x| <= (2^22 - 1) 2^15 < 2^37,
// |P 2^(n - b)| <= 2^15 2^30 = 2^45, 2^(n - 1) <= 2^29, the sum is below
// 2^46. y is the real (s_in x + pos) / s_out rounded once (half up) up to
// A's and P's own roundings, 2^(14-n) + 2^-(b+1) output steps (1/128 +
// 2^-(b+1) at the usual n = 21).
// ---------------------------------------------------------------------------
constexpr int32_t kPositions16InMaxShift = 30;

inline int16_t positions_s16_in16(int32_t x, int32_t a, int32_t p, int32_t bits, int32_t shift) {
  const int64_t v = int64_t{a} * x + int64_t{p} * (int64_t{1} << (shift - bits)) + (int64_t{1} << (shift - 1));
  const int64_t y = v >> shift;
  return static_cast<int16_t>(y < -32768 ? -32768 : (y > 32767 ? 32767 : y));
}

// ---------------------------------------------------------------------------
// Row mean (the row-mean contract, layer kind `row_pool`): n int8 values
// x_j of one column at (s_in, zp_in), 1 <= n <= 65535, to their mean at
// (s_out, zp_out):
//  1. S = sum_j (x_j - zp_in), int32 (|S| <= 255 n < 2^24).
//  2. Q = floor((2^16 S + floor(n / 2)) / n): the mean in 2^-16 input steps,
//     rounded half up, one exact integer division. It is computed in 32
//     bits: with S = a n + b (floor division, 0 <= b < n),
//     Q = 2^16 a + floor((2^16 b + floor(n / 2)) / n), whose numerator is
//     below 65534 2^16 + 2^15 < 2^32 (uint32), and |Q| <= 255 2^16 < 2^24.
//  3. y = requantize_s8(Q, M, shift, zp_out), M 2^(shift - 31) =
//     s_in / (2^16 s_out) (contract 1: Q M fits 2^55, one rounding).
// Q is off the true mean by at most 2^-17 input steps, so y is the real mean
// rounded once up to s_in / s_out 2^-17 output steps (and M's 2^-31
// relative). n = 1 (mode "first", the class row) is the row itself; at
// s_out = s_in that is an exact copy: Q = 2^16 (x - zp_in), M = 2^30,
// shift = -15.
// ---------------------------------------------------------------------------
// The int16 stream (row-mean contract 16, issue 37: a `row_pool` reading
// the int16 residual stream, zero point 0): the same steps with S = sum_j
// x_j of int16 values, |S| <= 2^15 n <= 2^15 (2^16 - 1) < 2^31 (int32), and
// the mean in 2^-8 input steps, Q = floor((2^8 S + floor(n / 2)) / n):
// with S = a n + b as above, |a| <= 2^15, Q = 2^8 a + floor((2^8 b +
// floor(n / 2)) / n) with a numerator below 2^8 65535 + 2^15 < 2^24 and
// |Q| <= 2^23 + 2^8. Then requantize_s8(Q, M, shift, zp_out) (an int8
// output for the head) or sat16(requantize(Q, M, shift)) (int16, zero point
// 0, for a layernorm reading the stream), M 2^(shift - 31) = s_in /
// (2^8 s_out) (|Q M| < 2^55). Q is off the mean by at most 2^-9 int16 input
// steps (2^-17 of an int8 step's worth at the stream's ~2^8 finer scale).
// ---------------------------------------------------------------------------
// The mean of n values summing to `sum` in 2^-bits input steps, rounded half
// up: bits 16 (int8 rows, |sum| < 2^24) or 8 (int16 rows, |sum| < 2^31).
inline int32_t row_mean_q(int32_t sum, int32_t n, int bits) {
  int32_t a = sum / n;  // truncates; made a floor below
  int32_t b = sum - a * n;
  if (b < 0) {
    a -= 1;
    b += n;
  }
  const uint32_t un = static_cast<uint32_t>(n);
  const uint32_t f = ((static_cast<uint32_t>(b) << bits) + (un >> 1)) / un;
  return a * (int32_t{1} << bits) + static_cast<int32_t>(f);
}

constexpr int kRowMeanBits = 16;    // int8 rows
constexpr int kRowMean16Bits = 8;   // int16 rows (the residual stream)

inline int32_t row_mean_q16(int32_t sum, int32_t n) { return row_mean_q(sum, n, kRowMeanBits); }

// ---------------------------------------------------------------------------
// Add (the add contract, layer kind `add`): two int8 rows x at (s_x, zp_x)
// and r at (s_r, zp_r) to y = x + r at (s_y, zp_y):
//   y = sat8((A (x - zp_x) + B (r - zp_r) + 2^(n-1) + zp_y 2^n) >> n)
// The converter writes A = round(s_x / s_y 2^n) and B = round(s_r / s_y 2^n),
// both in [0, 2^21), taking the largest n in [1, 16] for which both fit
// (n = 16 unless an input step is 32 or more output steps). So y is the real
// (s_x (x - zp_x) + s_r (r - zp_r)) / s_y + zp_y rounded once (half up, the
// arithmetic shift), up to A's and B's own roundings, at most 2 255 2^-(n+1)
// output steps (0.004 at n = 16). Bounds: |A (x - zp_x)| and |B (r - zp_r)|
// are each at most 255 (2^21 - 1) < 2^29, and |2^(n-1) + zp_y 2^n|
// <= 2^15 + 2^23: the sum stays below 2^30 + 2^24 < 2^31 in magnitude, one
// int32 per element, the same integers on every target. (Blocks add in their
// projections' epilogues instead, contract 5b, where the sub-layer output is
// never rounded on its own; an add needs both inputs rounded to int8 first.)
// ---------------------------------------------------------------------------
constexpr int32_t kAddMaxMultiplier = (int32_t{1} << 21) - 1;
constexpr int32_t kAddMaxShift = 16;

inline int8_t add_s8(int32_t x, int32_t zp_x, int32_t a, int32_t r, int32_t zp_r, int32_t b, int32_t shift,
                     int32_t zp_y) {
  const int32_t v = a * (x - zp_x) + b * (r - zp_r) + (int32_t{1} << (shift - 1)) + zp_y * (int32_t{1} << shift);
  return saturate_s8(v >> shift);
}

// ---------------------------------------------------------------------------
// Add into the 16-bit residual stream (the add16 contract, issue 37: a
// branch-norm block's adds on the int16 stream, Add.residual16): x int8 at
// (s_x, zp_x), the residual r and y int16 at s_r, s_y with zero point 0:
//   y = sat16((A (x - zp_x) + B r + 2^(n-1)) >> n)            (int64)
// A = round(s_x / s_y 2^n), B = round(s_r / s_y 2^n), both in [0, 2^21),
// the converter taking the largest n in [1, 30] for which both fit (an int8
// step is some 2^8 int16 steps, so A ~ 2^(n+8) sets n near 13). Why 64
// bits: B r reaches 2^21 2^15 = 2^36. Bounds: |A (x - zp_x)| < 2^29,
// |B r| <= 2^36, 2^(n-1) <= 2^29: the sum is below 2^37, one 32 x 32 -> 64
// multiply-add per term (SMLAL on Cortex-M), the same integers everywhere.
// y is the real (s_x (x - zp_x) + s_r r) / s_y rounded once, up to A's and
// B's own roundings: 255 2^-(n+1) + 2^15 2^-(n+1) output steps (about 2
// int16 steps at n = 13 when the residual's scale differs from the output's,
// 0 for B when s_r 2^n / s_y is an integer).
// ---------------------------------------------------------------------------
constexpr int32_t kAdd16MaxShift = 30;

inline int16_t add_s16(int32_t x, int32_t zp_x, int32_t a, int32_t r, int32_t b, int32_t shift) {
  const int64_t v = int64_t{a} * (x - zp_x) + int64_t{b} * r + (int64_t{1} << (shift - 1));
  const int64_t y = v >> shift;
  return static_cast<int16_t>(y < -32768 ? -32768 : (y > 32767 ? 32767 : y));
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_REQUANT_H_
