// Tests of the int8 numerics spec (requant.h, quantize_multiplier.h) against
// exact rational arithmetic (128-bit, test_util.h) and float64 math. Expected values are
// never produced by the functions under test.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/requant.h"
#include "test_util.h"

namespace ek = edgeattn::kernels;
using eatest::exact_requantize;
using eatest::exact_requantize_s8;
using eatest::Rng;

namespace {

constexpr int32_t kM30 = int32_t{1} << 30;      // smallest valid multiplier (r = 0.5 * 2^shift)
constexpr int32_t kMMax = INT32_MAX;            // largest valid multiplier

// ------------------------------------------------------------ requantize ----

TEST(Requantize, OracleSelfCheck) {
  // The oracle itself, on hand-computed values (so a broken oracle cannot
  // make the comparisons below vacuous). r = 2^30 * 2^(0-31) = 0.5.
  EXPECT_EQ(exact_requantize(5, kM30, 0), 3);    // 2.5 -> 3
  EXPECT_EQ(exact_requantize(-5, kM30, 0), -2);  // -2.5 -> -2
  EXPECT_EQ(exact_requantize(-7, kM30, 0), -3);  // -3.5 -> -3
  EXPECT_EQ(exact_requantize(-6, kM30, 0), -3);  // -3 exactly
  EXPECT_EQ(exact_requantize(7, kM30, 1), 7);    // r = 1
  EXPECT_EQ(exact_requantize(int64_t{1} << 40, kM30, 1), INT32_MAX);
}

TEST(Requantize, TiesRoundHalfUp) {
  // r = 0.5 (M = 2^30, shift 0): acc odd gives an exact .5 tie.
  struct Case { int32_t acc; int32_t want; };
  const Case cases[] = {{1, 1},   {-1, 0},  {3, 2},   {-3, -1}, {5, 3},
                        {-5, -2}, {0, 0},   {2, 1},   {-2, -1}, {INT32_MAX, 1073741824},
                        {INT32_MIN + 1, -1073741823}};
  for (const Case& c : cases) {
    EXPECT_EQ(ek::requantize(c.acc, kM30, 0), c.want) << "acc=" << c.acc << " r=0.5";
  }
  // r = 0.25 (shift -1): acc = 2 (mod 4) are ties: 2*0.25 = 0.5 -> 1, -0.5 -> 0, -1.5 -> -1.
  EXPECT_EQ(ek::requantize(2, kM30, -1), 1);
  EXPECT_EQ(ek::requantize(-2, kM30, -1), 0);
  EXPECT_EQ(ek::requantize(-6, kM30, -1), -1);
  EXPECT_EQ(ek::requantize(6, kM30, -1), 2);
  // Just off the tie: 3*0.25 = 0.75 -> 1, -3*0.25 = -0.75 -> -1, 1*0.25 -> 0, -1*0.25 -> 0.
  EXPECT_EQ(ek::requantize(3, kM30, -1), 1);
  EXPECT_EQ(ek::requantize(-3, kM30, -1), -1);
  EXPECT_EQ(ek::requantize(1, kM30, -1), 0);
  EXPECT_EQ(ek::requantize(-1, kM30, -1), 0);
  // Tie with a non power-of-two multiplier: M = 3 * 2^29 (r = 0.75 * 2^(s)), shift -1
  // -> r = 0.375; acc = 4 -> 1.5 -> 2; acc = -4 -> -1.5 -> -1.
  EXPECT_EQ(ek::requantize(4, 3 * (1 << 29), -1), 2);
  EXPECT_EQ(ek::requantize(-4, 3 * (1 << 29), -1), -1);
}

TEST(Requantize, ShiftExtremes) {
  // shift = -31 (n = 62): r = M * 2^-62, at most 2^-31.
  // INT32_MIN * 2^30 * 2^-62 = -0.5 exactly: a tie, rounds up to 0.
  EXPECT_EQ(ek::requantize(INT32_MIN, kM30, -31), 0);
  // INT32_MIN * (2^31 - 1) * 2^-62 = -(1 - 2^-31) -> -1;  INT32_MAX * same = 1 - 3*2^-31 + 2^-62 -> 1.
  EXPECT_EQ(ek::requantize(INT32_MIN, kMMax, -31), -1);
  EXPECT_EQ(ek::requantize(INT32_MAX, kMMax, -31), 1);
  // INT32_MAX * 2^30 * 2^-62 = 0.5 - 2^-32 -> 0 (just below the tie).
  EXPECT_EQ(ek::requantize(INT32_MAX, kM30, -31), 0);
  // shift = 30 (n = 1): r = M / 2, between 2^29 and 2^30.
  EXPECT_EQ(ek::requantize(1, kM30, 30), 1 << 29);
  EXPECT_EQ(ek::requantize(3, kM30, 30), 3 << 29);
  EXPECT_EQ(ek::requantize(4, kM30, 30), INT32_MAX);   // 2^31 saturates
  EXPECT_EQ(ek::requantize(-4, kM30, 30), INT32_MIN);  // -2^31 is representable
  EXPECT_EQ(ek::requantize(-5, kM30, 30), INT32_MIN);
  EXPECT_EQ(ek::requantize(1, kMMax, 30), 1073741824);  // (2^31-1)/2 = 2^30 - 0.5 -> tie up -> 2^30
  EXPECT_EQ(ek::requantize(-1, kMMax, 30), -1073741823);  // -(2^30 - 0.5) -> tie up
  for (int32_t shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
    for (int32_t acc : {0, 1, -1, 2, -2, 12345, -12345, INT32_MAX, INT32_MIN}) {
      for (int32_t m : {kM30, kM30 + 1, 1518500250, kMMax - 1, kMMax}) {
        EXPECT_EQ(ek::requantize(acc, m, shift), exact_requantize(acc, m, shift))
            << "acc=" << acc << " M=" << m << " shift=" << shift;
      }
    }
  }
}

TEST(Requantize, SaturationAndMinTimesMin) {
  // The largest product: INT32_MIN * (2^31 - 1) at shift 30 -> far below INT32_MIN.
  EXPECT_EQ(ek::requantize(INT32_MIN, kMMax, 30), INT32_MIN);
  EXPECT_EQ(ek::requantize(INT32_MAX, kMMax, 30), INT32_MAX);
  EXPECT_EQ(ek::requantize(INT32_MIN, kM30, 30), INT32_MIN);
  // r = 1 exactly (M = 2^30, shift 1) is the identity, including at the int32 ends.
  EXPECT_EQ(ek::requantize(INT32_MIN, kM30, 1), INT32_MIN);
  EXPECT_EQ(ek::requantize(INT32_MAX, kM30, 1), INT32_MAX);
  // r = 2: just over the edge on both sides.
  EXPECT_EQ(ek::requantize(1 << 30, kM30, 2), INT32_MAX);
  EXPECT_EQ(ek::requantize(-(1 << 30), kM30, 2), INT32_MIN);
  EXPECT_EQ(ek::requantize((1 << 30) - 1, kM30, 2), INT32_MAX - 1);
  EXPECT_EQ(ek::requantize(-(1 << 30) - 1, kM30, 2), INT32_MIN);
}

TEST(Requantize, RandomAgainstExactRational) {
  Rng rng(0x5EED0001);
  constexpr int kCases = 2000000;
  int failures = 0;
  for (int i = 0; i < kCases && failures < 20; ++i) {
    // Spread acc over all magnitudes: a random bit width, then random bits.
    const int bits = static_cast<int>(rng.uniform_int(0, 31));
    int64_t acc = rng.uniform_int(-(int64_t{1} << bits), (int64_t{1} << bits) - 1);
    if (i % 1000 == 0) acc = (i / 1000) % 2 ? INT32_MIN : INT32_MAX;
    const int32_t m = static_cast<int32_t>(rng.uniform_int(kM30, kMMax));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(ek::kMinShift, ek::kMaxShift));
    const int32_t got = ek::requantize(static_cast<int32_t>(acc), m, shift);
    const int32_t want = exact_requantize(acc, m, shift);
    if (got != want) {
      ++failures;
      ADD_FAILURE() << "case " << i << " seed 0x5EED0001: acc=" << acc << " M=" << m
                    << " shift=" << shift << " got " << got << " want " << want;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Requantize, TiesRandom) {
  // Construct exact ties: acc * M = (2k + 1) * 2^(n-1), i.e. acc = (2k+1) * 2^(n-1) / M
  // with M = 2^30 (so acc = (2k+1) * 2^(n-31)) for n >= 31, i.e. shift <= 0.
  Rng rng(0x5EED0002);
  for (int i = 0; i < 100000; ++i) {
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(-30, 0));
    const int n = 31 - shift;              // 31..61
    const int e = n - 31;                  // acc = odd * 2^e, so acc*2^30 = odd * 2^(n-1)
    const int64_t lim = int64_t{1} << (30 - e);   // acc in [-2^31 + 2^e, 2^31 - 2^e]
    const int64_t k = rng.uniform_int(-lim, lim - 1);
    const int64_t acc = (2 * k + 1) * (int64_t{1} << e);
    ASSERT_GE(acc, INT32_MIN);
    ASSERT_LE(acc, INT32_MAX);
    // acc * 2^30 / 2^n = (2k+1)/2 -> rounds half up to k + 1.
    ASSERT_EQ(ek::requantize(static_cast<int32_t>(acc), kM30, shift), k + 1)
        << "case " << i << " seed 0x5EED0002: acc=" << acc << " shift=" << shift;
  }
}

TEST(Requantize, S8OutputWithZeroPoint) {
  Rng rng(0x5EED0003);
  for (int i = 0; i < 500000; ++i) {
    const int bits = static_cast<int>(rng.uniform_int(0, 31));
    const int64_t acc = rng.uniform_int(-(int64_t{1} << bits), (int64_t{1} << bits) - 1);
    const int32_t m = static_cast<int32_t>(rng.uniform_int(kM30, kMMax));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(-31, 8));
    const int32_t zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    ASSERT_EQ(ek::requantize_s8(static_cast<int32_t>(acc), m, shift, zp),
              exact_requantize_s8(acc, m, shift, zp))
        << "case " << i << " seed 0x5EED0003: acc=" << acc << " M=" << m << " shift=" << shift
        << " zp=" << zp;
  }
  // Saturation at both ends, whatever the zero point.
  for (int32_t zp : {-128, 0, 127}) {
    EXPECT_EQ(ek::requantize_s8(INT32_MAX, kMMax, 30, zp), 127) << "zp=" << zp;
    EXPECT_EQ(ek::requantize_s8(INT32_MIN, kMMax, 30, zp), -128) << "zp=" << zp;
  }
  EXPECT_EQ(ek::requantize_s8(0, kM30, 0, -128), -128);
  EXPECT_EQ(ek::requantize_s8(0, kM30, 0, 127), 127);
  EXPECT_EQ(ek::requantize_s8(255, kM30, 1, -128), 127);   // 255 - 128
  EXPECT_EQ(ek::requantize_s8(256, kM30, 1, -128), 127);   // saturates
  EXPECT_EQ(ek::requantize_s8(-255, kM30, 1, 127), -128);
}

// -------------------------------------------------- quantize_multiplier ----

TEST(QuantizeMultiplier, RoundTripRelativeError) {
  Rng rng(0x5EED0004);
  for (int i = 0; i < 200000; ++i) {
    // log-uniform over the representable range [2^-32, 2^30) (slightly inside it).
    const double r = std::ldexp(1.0, -32) * std::exp2(rng.uniform(0.0, 61.999));
    int32_t m = 0, s = 0;
    ASSERT_TRUE(ek::quantize_multiplier(r, &m, &s)) << "case " << i << " seed 0x5EED0004 r=" << r;
    ASSERT_GE(m, kM30) << "r=" << r;
    ASSERT_LE(s, ek::kMaxShift) << "r=" << r;
    ASSERT_GE(s, ek::kMinShift) << "r=" << r;
    // |M - r 2^(31-s)| <= 1/2 with M >= 2^30 -> relative error <= 2^-31.
    const long double back = eatest::real_multiplier(m, s);
    const long double rel = std::fabs(back - static_cast<long double>(r)) / r;
    ASSERT_LE(rel, std::ldexp(1.0L, -31)) << "case " << i << " r=" << r << " M=" << m << " s=" << s;
    ASSERT_EQ(ek::dequantize_multiplier(m, s), static_cast<double>(back));
  }
}

TEST(QuantizeMultiplier, ExactValuesAndBoundaries) {
  int32_t m = 0, s = 0;
  ASSERT_TRUE(ek::quantize_multiplier(1.0, &m, &s));
  EXPECT_EQ(m, kM30);
  EXPECT_EQ(s, 1);
  ASSERT_TRUE(ek::quantize_multiplier(0.5, &m, &s));
  EXPECT_EQ(m, kM30);
  EXPECT_EQ(s, 0);
  ASSERT_TRUE(ek::quantize_multiplier(0.75, &m, &s));
  EXPECT_EQ(m, 3 << 29);
  EXPECT_EQ(s, 0);
  // Smallest representable: 2^-32 = 2^30 * 2^(-31-31).
  ASSERT_TRUE(ek::quantize_multiplier(std::ldexp(1.0, -32), &m, &s));
  EXPECT_EQ(m, kM30);
  EXPECT_EQ(s, -31);
  // Largest representable: (2^31 - 1) * 2^(30-31) = 2^30 - 0.5.
  ASSERT_TRUE(ek::quantize_multiplier(1073741823.5, &m, &s));
  EXPECT_EQ(m, kMMax);
  EXPECT_EQ(s, 30);
  // A fraction that rounds up into the next power of two carries: 1 - 2^-40 -> 1.0.
  ASSERT_TRUE(ek::quantize_multiplier(1.0 - std::ldexp(1.0, -40), &m, &s));
  EXPECT_EQ(m, kM30);
  EXPECT_EQ(s, 1);
}

TEST(QuantizeMultiplier, Rejects) {
  const double bad[] = {0.0,
                        -0.0,
                        -1.0,
                        -1e-10,
                        std::numeric_limits<double>::quiet_NaN(),
                        -std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity(),
                        std::ldexp(1.0, 30),   // first value above the range
                        std::ldexp(1.0, 31),
                        1e20,
                        DBL_MAX,
                        std::ldexp(1.0, -33),  // below 2^-32 (and not rounding up into it)
                        1e-20,
                        DBL_MIN,
                        std::numeric_limits<double>::denorm_min()};
  for (double r : bad) {
    int32_t m = 12345, s = 678;
    EXPECT_FALSE(ek::quantize_multiplier(r, &m, &s)) << "r=" << r;
    EXPECT_EQ(m, 12345) << "outputs must be untouched on rejection, r=" << r;
    EXPECT_EQ(s, 678) << "r=" << r;
  }
}

// ---------------------------------------------------------- exp2_neg_q15 ----

// Exact e = 2^15 * 2^(-z / 2^16) in long double.
long double exp2_q15_exact(int32_t z) { return 32768.0L * std::exp2(-static_cast<long double>(z) / 65536.0L); }

TEST(Exp2NegQ15, EveryInputWithinHalfLsbPlusPolynomialError) {
  // The spec: e = round(2^15 2^(-z/2^16)) computed with a polynomial of max
  // relative error 1.4e-7 (= 0.0046 LSB at e = 32768) plus Horner truncation
  // (4 floors of 2^-31 relative each). So |e - exact| <= 0.5 + 0.01 for every z,
  // which also implies the brief's |err| <= 1 LSB. Checked for all 2^20 inputs.
  long double max_err = 0.0L;
  int32_t worst = -1;
  int32_t prev = INT32_MAX;
  for (int32_t z = 0; z < ek::kExpCutoffQ16; ++z) {
    const int32_t e = ek::exp2_neg_q15(z);
    const long double err = std::fabs(static_cast<long double>(e) - exp2_q15_exact(z));
    if (err > max_err) {
      max_err = err;
      worst = z;
    }
    ASSERT_LE(err, 0.51L) << "z=" << z << " e=" << e << " exact=" << static_cast<double>(exp2_q15_exact(z));
    ASSERT_LE(e, prev) << "not monotone at z=" << z;
    prev = e;
  }
  RecordProperty("max_abs_err_lsb", std::to_string(static_cast<double>(max_err)));
  std::printf("exp2_neg_q15: max |err| = %.6f LSB at z = %d\n", static_cast<double>(max_err), worst);
}

TEST(Exp2NegQ15, FixedPointsAndCutoff) {
  EXPECT_EQ(ek::exp2_neg_q15(0), 32768);
  for (int n = 0; n < 16; ++n) {
    // Exact powers of two: 2^(15-n), and 2^-16 * 2^15 = 0.5 would round to 1 but
    // is at the cutoff, see below.
    EXPECT_EQ(ek::exp2_neg_q15(n << 16), 32768 >> n) << "z = " << n << " << 16";
  }
  EXPECT_EQ(ek::exp2_neg_q15(1 << 15), 23170);  // 2^15 / sqrt(2) = 23170.475
  // At and beyond the cutoff (exact value <= 0.5 LSB) the result is 0.
  EXPECT_EQ(ek::exp2_neg_q15(ek::kExpCutoffQ16), 0);
  EXPECT_EQ(ek::exp2_neg_q15(ek::kExpCutoffQ16 + 1), 0);
  EXPECT_EQ(ek::exp2_neg_q15(INT32_MAX), 0);
  // Just below the cutoff the exact value is 0.500005 -> 1.
  EXPECT_EQ(ek::exp2_neg_q15(ek::kExpCutoffQ16 - 1), 1);
  EXPECT_EQ(ek::kExpCutoffQ16, 16 << 16);
}

TEST(SoftmaxExponent, IsRequantizedDistance) {
  Rng rng(0x5EED0005);
  for (int i = 0; i < 200000; ++i) {
    const int32_t a = static_cast<int32_t>(rng.uniform_int(INT32_MIN, INT32_MAX));
    const int32_t b = static_cast<int32_t>(rng.uniform_int(INT32_MIN, a));
    const int32_t m = static_cast<int32_t>(rng.uniform_int(kM30, kMMax));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(-31, 10));
    int64_t d = static_cast<int64_t>(a) - b;
    if (d > INT32_MAX) d = INT32_MAX;  // documented saturation of the distance
    ASSERT_EQ(ek::softmax_exponent_q16(a, b, m, shift), exact_requantize(d, m, shift))
        << "case " << i << " seed 0x5EED0005: max=" << a << " s=" << b;
  }
}

// ------------------------------------------------------ prob normalizer ----

TEST(ProbNormalizer, Properties) {
  Rng rng(0x5EED0006);
  for (int i = 0; i < 200000; ++i) {
    // Every row sum the softmax can produce: [32768, 65535 * 32768].
    const uint32_t sum = static_cast<uint32_t>(rng.uniform_int(32768, int64_t{65535} * 32768));
    const ek::ProbNormalizer norm = ek::prob_normalizer(sum);
    int b = 0;
    while ((uint64_t{1} << b) <= sum) ++b;  // bit length, independently
    ASSERT_EQ(norm.shift, b + 15) << "sum=" << sum;
    ASSERT_GT(norm.multiplier, uint32_t{1} << 30) << "sum=" << sum;
    ASSERT_LE(norm.multiplier, uint32_t{1} << 31) << "sum=" << sum;
    // m = floor(2^(b+30) / sum), checked as m*sum <= 2^(b+30) < (m+1)*sum.
    // m <= 2^31 and sum < 2^31: the products fit in 64 bits.
    const uint64_t m = norm.multiplier;
    ASSERT_LE(m * sum, uint64_t{1} << (b + 30)) << "sum=" << sum;
    ASSERT_GT((m + 1) * sum, uint64_t{1} << (b + 30)) << "sum=" << sum;
  }
}

// Checks one row of e_j: every p_j is within 1 of round(e_j 32768 / sum) and,
// more precisely, |p_j - e_j 32768/sum| <= 1/2 + 2^-16 (the truncated
// reciprocal m = floor(2^(b+30)/sum) under-estimates e_j 32768/sum by less than
// e_j / 2^(b+15) <= 2^-16 because e_j <= 2^15 and b >= 16); the row sum is
// within n/2 + 1 of 32768 (n roundings of at most 1/2 + 2^-16 each).
void CheckNormalizedRow(const std::vector<int32_t>& e, uint64_t seed) {
  uint64_t sum = 0;
  for (int32_t v : e) sum += static_cast<uint32_t>(v);
  ASSERT_LT(sum, uint64_t{1} << 31);
  const ek::ProbNormalizer norm = ek::prob_normalizer(static_cast<uint32_t>(sum));
  int64_t psum = 0;
  for (size_t j = 0; j < e.size(); ++j) {
    const int64_t p = ek::normalize_prob_q15(e[j], norm);
    psum += p;
    // round(e*32768/sum) exactly (half up): floor((2 e 32768 + sum) / (2 sum)).
    const int64_t want = (2 * int64_t{e[j]} * 32768 + static_cast<int64_t>(sum)) / (2 * static_cast<int64_t>(sum));
    ASSERT_LE(std::llabs(p - want), 1) << "seed " << seed << " n=" << e.size() << " j=" << j << " e=" << e[j]
                                        << " sum=" << sum;
    // 2^16 |p sum - e 2^15| <= 2^15 sum + sum
    // p <= 2^16, sum < 2^31: every product below fits in 64 bits.
    const int64_t dev = static_cast<int64_t>(p) * static_cast<int64_t>(sum) - static_cast<int64_t>(e[j]) * 32768;
    const int64_t adev = dev < 0 ? -dev : dev;
    ASSERT_LE(adev * 65536, static_cast<int64_t>(sum) * 32768 + static_cast<int64_t>(sum))
        << "seed " << seed << " j=" << j << " p=" << p << " e=" << e[j] << " sum=" << sum;
  }
  const int64_t n = static_cast<int64_t>(e.size());
  ASSERT_LE(std::llabs(psum - 32768), n / 2 + 1) << "seed " << seed << " n=" << n << " sum of p=" << psum;
}

TEST(ProbNormalizer, RandomRows) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 7919);
    const int n = static_cast<int>(seed % 4 == 0 ? rng.uniform_int(1, 4096) : rng.uniform_int(1, 64));
    std::vector<int32_t> e(n);
    const int mode = static_cast<int>(seed % 3);
    for (int j = 0; j < n; ++j) {
      if (mode == 0) e[j] = static_cast<int32_t>(rng.uniform_int(0, 32768));
      if (mode == 1) e[j] = static_cast<int32_t>(rng.uniform_int(0, 3));           // many tiny
      if (mode == 2) e[j] = static_cast<int32_t>(rng.uniform_int(32700, 32768));   // near uniform
    }
    e[static_cast<size_t>(rng.uniform_int(0, n - 1))] = 32768;  // the row maximum
    CheckNormalizedRow(e, seed);
    if (HasFatalFailure()) return;
  }
}

TEST(ProbNormalizer, ExtremeRows) {
  CheckNormalizedRow({32768}, 0);                       // one key -> exactly 1.0
  EXPECT_EQ(ek::normalize_prob_q15(32768, ek::prob_normalizer(32768)), 32768);
  CheckNormalizedRow(std::vector<int32_t>(1024, 32768), 1);   // uniform 1024 -> 32 each
  EXPECT_EQ(ek::normalize_prob_q15(32768, ek::prob_normalizer(1024u * 32768u)), 32);
  CheckNormalizedRow(std::vector<int32_t>(65535, 32768), 2);  // the documented maximum row
  std::vector<int32_t> one_big(4096, 1);
  one_big[17] = 32768;
  CheckNormalizedRow(one_big, 3);
}

}  // namespace

#if defined(__SIZEOF_INT128__)
// The portable 128-bit oracle of test_util.h against the compiler's __int128,
// so 32-bit targets (which only have the former) test against the same truth.
TEST(ExactOracle, WideMatchesInt128) {
  Rng rng(0x5EED0128);
  for (int i = 0; i < 300000; ++i) {
    const int64_t acc = i % 3 == 0 ? static_cast<int64_t>(rng.next()) : rng.uniform_int(INT32_MIN, INT32_MAX);
    const int32_t m = static_cast<int32_t>(rng.uniform_int(int64_t{1} << 30, (int64_t{1} << 31) - 1));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(-31, 30));
    const int n = 31 - shift;
    const __int128 num = 2 * static_cast<__int128>(acc) * m + (static_cast<__int128>(1) << n);
    const __int128 d = static_cast<__int128>(1) << (n + 1);
    __int128 q = num / d;
    if (num % d != 0 && num < 0) --q;
    const int32_t want = q > INT32_MAX ? INT32_MAX : (q < INT32_MIN ? INT32_MIN : static_cast<int32_t>(q));
    ASSERT_EQ(eatest::exact_requantize(acc, m, shift), want) << "acc=" << acc << " m=" << m << " shift=" << shift;
  }
}
#endif
