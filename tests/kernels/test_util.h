// Shared helpers of the kernel tests: a seeded RNG with portable
// distributions, exact rational requantization (the oracle for every int8
// rounding step) and float64 reference math.
//
// Nothing here calls the code under test: expected values come from exact
// integer arithmetic (128-bit, see Wide) or from float64.
#ifndef EDGEATTN_TESTS_KERNELS_TEST_UTIL_H_
#define EDGEATTN_TESTS_KERNELS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <vector>

namespace eatest {

// splitmix64: same sequence on every platform (std:: distributions are not
// portable across standard libraries, so they are not used).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform integer in [lo, hi] (inclusive); the modulo bias of a 64-bit
  // draw over ranges < 2^33 is < 2^-31 and irrelevant for testing.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<int64_t>(next());  // full 64-bit range
    return lo + static_cast<int64_t>(next() % span);
  }
  // Uniform double in [0, 1).
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Log-uniform in [lo, hi), lo > 0.
  double log_uniform(double lo, double hi) {
    return std::exp(uniform(std::log(lo), std::log(hi)));
  }
  // Standard normal (Box-Muller).
  double normal() {
    double u1 = uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  int8_t s8() { return static_cast<int8_t>(uniform_int(-128, 127)); }

 private:
  uint64_t state_;
};

// Exact 128-bit two's-complement arithmetic for the requantization oracle,
// written out with 64-bit halves so it also runs on 32-bit targets (armv7
// has no __int128). Only what the oracle needs: products of an int64 and an
// int32, sums, and floor division by a power of two.
struct Wide {
  uint64_t hi, lo;
};

inline Wide wide_from(int64_t v) {
  return Wide{v < 0 ? ~uint64_t{0} : 0, static_cast<uint64_t>(v)};
}

inline Wide wide_add(Wide a, Wide b) {
  const uint64_t lo = a.lo + b.lo;
  return Wide{a.hi + b.hi + (lo < a.lo ? 1 : 0), lo};
}

inline Wide wide_neg(Wide a) { return wide_add(Wide{~a.hi, ~a.lo}, Wide{0, 1}); }

// a * b exactly (|a| < 2^63, |b| < 2^31 gives |a b| < 2^94).
inline Wide wide_mul(int64_t a, int32_t b) {
  const bool negative = (a < 0) != (b < 0);
  const uint64_t ua = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  const uint64_t ub = b < 0 ? 0 - static_cast<uint64_t>(static_cast<int64_t>(b)) : static_cast<uint64_t>(b);
  const uint64_t p0 = (ua & 0xFFFFFFFFu) * ub;
  const uint64_t p1 = (ua >> 32) * ub;
  const uint64_t lo = p0 + (p1 << 32);
  const Wide magnitude{(p1 >> 32) + (lo < p0 ? 1 : 0), lo};
  return negative ? wide_neg(magnitude) : magnitude;
}

// floor(a / 2^s) for 1 <= s <= 63, clamped to [lo_clamp, hi_clamp].
inline int64_t wide_floor_shift_clamped(Wide a, int s, int64_t lo_clamp, int64_t hi_clamp) {
  const int64_t hi = static_cast<int64_t>(a.hi);
  const int64_t q_hi = hi >> s;  // arithmetic: floor for the high half
  const uint64_t q_lo = (a.lo >> s) | (static_cast<uint64_t>(a.hi) << (64 - s));
  // The quotient fits in int64 iff its high half is the sign extension of q_lo.
  const int64_t sign = static_cast<int64_t>(q_lo) < 0 ? -1 : 0;
  if (q_hi != sign) return q_hi < 0 ? lo_clamp : hi_clamp;
  const int64_t q = static_cast<int64_t>(q_lo);
  return q < lo_clamp ? lo_clamp : (q > hi_clamp ? hi_clamp : q);
}

// Exact round-half-up of acc * M * 2^(shift - 31) over the rationals,
// saturated to int32: floor(acc*M / 2^n + 1/2) = floor((2*acc*M + 2^n) / 2^(n+1)).
inline int32_t exact_requantize(int64_t acc, int32_t multiplier, int32_t shift) {
  const int n = 31 - shift;  // 1..62
  Wide num = wide_mul(acc, multiplier);
  num = wide_add(num, num);
  num = wide_add(num, Wide{0, uint64_t{1} << n});
  return static_cast<int32_t>(wide_floor_shift_clamped(num, n + 1, INT32_MIN, INT32_MAX));
}

// The int8 output an exact implementation must produce: clamp(round(acc*r) + zp).
inline int8_t exact_requantize_s8(int64_t acc, int32_t multiplier, int32_t shift, int32_t zp) {
  // Clamping the rounded value to [-512, 512] before adding zp (|zp| <= 128)
  // cannot change the final int8 clamp.
  const int n = 31 - shift;
  Wide num = wide_mul(acc, multiplier);
  num = wide_add(num, num);
  num = wide_add(num, Wide{0, uint64_t{1} << n});
  const int64_t q = wide_floor_shift_clamped(num, n + 1, -512, 512) + zp;
  return static_cast<int8_t>(q < -128 ? -128 : (q > 127 ? 127 : q));
}

// Real value of a (multiplier, shift) pair, exact in long double (64-bit mantissa).
inline long double real_multiplier(int32_t multiplier, int32_t shift) {
  return std::ldexp(static_cast<long double>(multiplier), shift - 31);
}

// Fill values of output padding a kernel must leave alone (checked after
// each call).
constexpr float kSentinel = -7777.0f;
constexpr int8_t kSentinel8 = 0x5A;

// Unit roundoff of float32 and the classic gamma_n = n u / (1 - n u) of
// Higham, "Accuracy and Stability of Numerical Algorithms", ch. 3: a float
// dot product of n terms has |error| <= gamma_n * sum |terms|.
constexpr double kF32U = 5.9604644775390625e-08;  // 2^-24
inline double gamma_f32(int n) { return n * kF32U / (1.0 - n * kF32U); }

// Float64 softmax over x[0..n) (max-subtracted).
inline std::vector<double> softmax64(const std::vector<double>& x) {
  std::vector<double> p(x.size());
  if (x.empty()) return p;
  double m = x[0];
  for (double v : x) m = v > m ? v : m;
  double s = 0.0;
  for (size_t j = 0; j < x.size(); ++j) s += (p[j] = std::exp(x[j] - m));
  for (double& v : p) v /= s;
  return p;
}

// Independent statement of the mask rule of ref.h: key j is visible to query
// row r iff j < kv_valid_len, j < kv_len and (not causal or j <= r + offset).
inline bool key_visible(int r, int j, int kv_len, int kv_valid_len, bool causal, int offset) {
  if (j >= kv_len || j >= kv_valid_len) return false;
  if (causal && j > r + offset) return false;
  return true;
}

}  // namespace eatest

#endif  // EDGEATTN_TESTS_KERNELS_TEST_UTIL_H_
