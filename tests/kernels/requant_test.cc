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

// Exact 32767 * 2^(-z / 4096) (the scale of e: the row maximum is 32767).
long double exp2_q15_exact(uint32_t z) { return 32767.0L * std::exp2(-static_cast<long double>(z) / 4096.0L); }

TEST(Exp2NegQ15, EveryInputWithinPolynomialAndRoundingError) {
  // The contract: w = 32767 2^-u from a degree-4 polynomial whose error,
  // rounding steps included, is at most 1.66 Q15 steps (measured over every
  // fraction when the coefficients were chosen); the shift by n divides that
  // error by 2^n and adds at most half a step of rounding. Checked for every z.
  long double max_err = 0.0L;
  uint32_t worst = 0;
  int32_t prev = INT32_MAX;
  for (uint32_t z = 0; z < ek::kExpZeroQ12; ++z) {
    const int32_t e = ek::exp2_neg_q15(z);
    const int n = static_cast<int>(z >> 12);
    const long double err = std::fabs(static_cast<long double>(e) - exp2_q15_exact(z));
    const long double bound = 1.66L / static_cast<long double>(1 << n) + (n > 0 ? 0.5L : 0.0L);
    if (err > max_err) {
      max_err = err;
      worst = z;
    }
    ASSERT_LE(err, bound) << "z=" << z << " e=" << e << " exact=" << static_cast<double>(exp2_q15_exact(z));
    ASSERT_LE(e, prev) << "not monotone at z=" << z;
    prev = e;
  }
  RecordProperty("max_abs_err_lsb", std::to_string(static_cast<double>(max_err)));
  std::printf("exp2_neg_q15: max |err| = %.6f LSB at z = %u\n", static_cast<double>(max_err), worst);
}

TEST(Exp2NegQ15, HornerStepsFitInt16) {
  // The SIMD paths run the polynomial in 16-bit lanes: every intermediate of
  // every fraction must be an int16 (and never -32768, VQRDMULH's saturating
  // operand). Recomputed here from the coefficients with 64-bit arithmetic.
  for (int64_t f = 0; f < 4096; ++f) {
    const int64_t u = f << 3;
    int64_t h = ek::kExp2Coeff[3];
    for (int step = 2; step >= -1; --step) {
      const int64_t prod = (h * u + (1 << 14)) >> 15;
      h = (step >= 0 ? ek::kExp2Coeff[step] : ek::kProbMax) + prod;
      ASSERT_GT(h, -32768) << "f=" << f << " step=" << step;
      ASSERT_LE(h, 32767) << "f=" << f << " step=" << step;
    }
  }
}

TEST(Exp2NegQ15, FixedPointsAndCutoff) {
  EXPECT_EQ(ek::exp2_neg_q15(0), 32767);  // the row maximum
  for (int n = 1; n < 16; ++n) {
    // Exact powers of two: u = 0, so w = 32767 and e = round(32767 / 2^n).
    EXPECT_EQ(ek::exp2_neg_q15(static_cast<uint32_t>(n) << 12), (32767 + (1 << (n - 1))) >> n) << "n = " << n;
  }
  EXPECT_NEAR(ek::exp2_neg_q15(1 << 11), 23170, 2);  // 32767 / sqrt(2) = 23169.8
  EXPECT_EQ(ek::exp2_neg_q15(ek::kExpZeroQ12), 0);   // 2^-16 and below
  EXPECT_EQ(ek::exp2_neg_q15(0xFFFFFFFFu), 0);
  EXPECT_EQ(ek::exp2_neg_q15(ek::kExpZeroQ12 - 1), 1);  // exact 0.50008 -> 1
  EXPECT_EQ(ek::kExpZeroQ12, 0xFFFFu);
}

// ------------------------------------------------------ softmax exponent ----

TEST(SoftmaxExponent, ParamsNeverOverflow) {
  // For every shift and the extreme multipliers: M in range, D M < 2^32 and
  // (D M) >> r reaches the cut-off, so the clamp at D loses nothing.
  for (int32_t shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
    for (int32_t m : {kM30, kM30 + 1, int32_t{0x5A5A5A5A}, kMMax - 16383, kMMax}) {
      const ek::SoftmaxExpParams x = ek::softmax_exp_params(m, shift);
      ASSERT_GE(x.multiplier, 1u);
      ASSERT_LT(x.multiplier, 1u << 16);
      ASSERT_LE(x.post_shift, 16u);
      ASSERT_LE(x.pre_shift, 31u);
      const uint64_t dm = uint64_t{x.limit} * x.multiplier;
      ASSERT_LT(dm, uint64_t{1} << 32) << "shift=" << shift << " m=" << m;
      ASSERT_GE(dm >> x.post_shift, 0xFFFFu) << "shift=" << shift << " m=" << m;
      ASSERT_LT((uint64_t{x.limit - 1} * x.multiplier) >> x.post_shift, 0xFFFFu) << "D is not the smallest";
    }
  }
}

TEST(SoftmaxExponent, WithinTwoQ12StepsOfTheExactDistance) {
  // z approximates d M_s 2^(shift_s - 35) (the Q16 argument of contract 1,
  // divided by 16): the 16-bit multiplier is within 2^-16 relative, and the
  // two floors (d >> p, then >> r) lose less than one Q12 step each.
  Rng rng(0x5EED0005);
  for (int i = 0; i < 400000; ++i) {
    const int32_t a = static_cast<int32_t>(rng.uniform_int(INT32_MIN, INT32_MAX));
    const int32_t b = static_cast<int32_t>(i % 2 ? rng.uniform_int(INT32_MIN, a) : rng.uniform_int(a - (a > INT32_MIN + 100000 ? 100000 : 0), a));
    const int32_t m = static_cast<int32_t>(rng.uniform_int(kM30, kMMax));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(-31, 30));
    const long double d = static_cast<long double>(a) - static_cast<long double>(b);
    const long double exact = d * static_cast<long double>(m) * std::exp2(static_cast<long double>(shift - 35));
    const uint32_t z = ek::softmax_exponent_q12(a, b, ek::softmax_exp_params(m, shift));
    if (z < ek::kExpZeroQ12) {
      ASSERT_LE(std::fabs(static_cast<long double>(z) - exact), 2.0L + exact * 0x1p-16L)
          << "case " << i << " max=" << a << " s=" << b << " m=" << m << " shift=" << shift;
    } else {
      ASSERT_GE(exact, 65535.0L - 2.0L - 65535.0L * 0x1p-16L) << "cut off too early, case " << i;
    }
  }
}

// ------------------------------------------------------ prob normalizer ----

TEST(ProbNormalizer, Properties) {
  Rng rng(0x5EED0006);
  for (int i = 0; i < 200000; ++i) {
    // Every row sum the softmax can produce: [32767, 65536 * 32767].
    const uint32_t sum = static_cast<uint32_t>(rng.uniform_int(32767, int64_t{65536} * 32767));
    const ek::ProbNormalizer norm = ek::prob_normalizer(sum);
    int b = 0;
    while ((uint64_t{1} << b) <= sum) ++b;  // bit length, independently
    ASSERT_EQ(norm.shift, b) << "sum=" << sum;
    ASSERT_GE(norm.multiplier, 32767u) << "sum=" << sum;
    ASSERT_LT(norm.multiplier, 65536u) << "sum=" << sum;
    // m = floor((2^(b+15) - 1) / sum): m sum <= 2^(b+15) - 1 < (m + 1) sum.
    const uint64_t m = norm.multiplier;
    ASSERT_LE(m * sum, (uint64_t{1} << (b + 15)) - 1) << "sum=" << sum;
    ASSERT_GT((m + 1) * sum, (uint64_t{1} << (b + 15)) - 1) << "sum=" << sum;
  }
}

// Checks one row of e_j against the exact e_j 32768 / sum: e m / 2^b is below
// it by less than 2 e / 2^b (m is the floor of a value within 1 of
// 2^(b+15)/sum), the rounding adds at most 1/2 and the cap at 32767 at most
// one more step. The row sum is within the sum of those bounds of 32768.
void CheckNormalizedRow(const std::vector<int32_t>& e, uint64_t seed) {
  uint64_t sum = 0;
  for (int32_t v : e) sum += static_cast<uint32_t>(v);
  ASSERT_LT(sum, uint64_t{1} << 31);
  const ek::ProbNormalizer norm = ek::prob_normalizer(static_cast<uint32_t>(sum));
  const long double two_b = std::exp2(static_cast<long double>(norm.shift));
  int64_t psum = 0;
  long double slack = 0.0L;
  for (size_t j = 0; j < e.size(); ++j) {
    const int32_t p = ek::normalize_prob_q15(e[j], norm);
    psum += p;
    ASSERT_LE(p, 32767);
    const long double exact = static_cast<long double>(e[j]) * 32768.0L / static_cast<long double>(sum);
    const long double bound = 0.5L + 2.0L * e[j] / two_b + (p == 32767 ? 1.0L : 0.0L);
    slack += bound;
    ASSERT_LE(std::fabs(static_cast<long double>(p) - exact), bound)
        << "seed " << seed << " n=" << e.size() << " j=" << j << " e=" << e[j] << " sum=" << sum;
  }
  ASSERT_LE(std::fabs(static_cast<long double>(psum) - 32768.0L), slack) << "seed " << seed << " sum of p=" << psum;
}

TEST(ProbNormalizer, RandomRows) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 7919);
    const int n = static_cast<int>(seed % 4 == 0 ? rng.uniform_int(1, 4096) : rng.uniform_int(1, 64));
    std::vector<int32_t> e(n);
    const int mode = static_cast<int>(seed % 3);
    for (int j = 0; j < n; ++j) {
      if (mode == 0) e[j] = static_cast<int32_t>(rng.uniform_int(0, 32767));
      if (mode == 1) e[j] = static_cast<int32_t>(rng.uniform_int(0, 3));           // many tiny
      if (mode == 2) e[j] = static_cast<int32_t>(rng.uniform_int(32700, 32767));   // near uniform
    }
    e[static_cast<size_t>(rng.uniform_int(0, n - 1))] = 32767;  // the row maximum
    CheckNormalizedRow(e, seed);
    if (HasFatalFailure()) return;
  }
}

TEST(ProbNormalizer, ExtremeRows) {
  CheckNormalizedRow({32767}, 0);  // one key -> 1.0, capped at 32767
  EXPECT_EQ(ek::normalize_prob_q15(32767, ek::prob_normalizer(32767)), 32767);
  CheckNormalizedRow(std::vector<int32_t>(1024, 32767), 1);  // uniform 1024 -> 32 each
  EXPECT_EQ(ek::normalize_prob_q15(32767, ek::prob_normalizer(1024u * 32767u)), 32);
  CheckNormalizedRow(std::vector<int32_t>(65536, 32767), 2);  // the documented maximum row
  std::vector<int32_t> one_big(4096, 1);
  one_big[17] = 32767;
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
