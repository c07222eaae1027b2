// The 16-bit residual stream's reference kernels (issue 37) against models
// written here: contract 5c (qs8_linear_res16__ref) and contract 4b
// (qs16_layernorm__ref) against exact int64 / 128-bit models of their prose
// and against float64 truths with the contracts' stated error bounds, plus
// hand-computed cases. Nothing here calls requant.h's functions to make an
// expected value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"
#include "test_util.h"

namespace {

namespace ek = edgeattn::kernels;
using eatest::Rng;

int16_t Sat16(int64_t v) { return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); }

// round-half-up(acc M 2^(shift - 31)) over the rationals, neither saturated
// to int32 nor clamped (limited to +-2^40, far past anything that does not
// saturate the int16 output).
int64_t ExactScaled(int64_t acc, int32_t mult, int32_t shift) {
  const int n = 31 - shift;
  eatest::Wide num = eatest::wide_mul(acc, mult);
  num = eatest::wide_add(num, num);
  num = eatest::wide_add(num, eatest::Wide{0, uint64_t{1} << n});
  return eatest::wide_floor_shift_clamped(num, n + 1, -(int64_t{1} << 40), int64_t{1} << 40);
}

// Contract 5c as written: sat16(floor((round(acc r_c) + A a + 2^(n-1)) / 2^n))
// in int64, without the int32 saturation and the clamp the kernel has (the
// contract says neither changes a result).
int16_t Model5c(int64_t acc, int32_t mult, int32_t shift, int32_t a, int32_t A, int32_t n) {
  const int64_t t = ExactScaled(acc, mult, shift) + static_cast<int64_t>(A) * a + (int64_t{1} << (n - 1));
  const int64_t q = t >= 0 ? t / (int64_t{1} << n) : -((-t + (int64_t{1} << n) - 1) / (int64_t{1} << n));
  return Sat16(q);
}

std::vector<int16_t> RandS16(Rng& rng, size_t count) {
  std::vector<int16_t> v(count);
  const int64_t mode = rng.uniform_int(0, 2);
  for (auto& x : v) {
    if (mode == 0) {
      x = rng.uniform_int(0, 1) ? int16_t{-32768} : int16_t{32767};
    } else if (mode == 1) {
      const int64_t u = rng.uniform_int(0, 3);
      x = u == 0 ? int16_t{-32768} : (u == 1 ? int16_t{32767} : static_cast<int16_t>(rng.uniform_int(-32768, 32767)));
    } else {
      x = static_cast<int16_t>(rng.uniform_int(-32768, 32767));
    }
  }
  return v;
}

// Hand-computed: acc = 3 (x = 1, w = 3, bias 0), r_c = 0.5 2^n (M = 2^30,
// shift 0 at n = 1: requantize(3) = round(1.5) = 2), A = 2, n = 1:
// (2 + 2 a + 1) >> 1 = a + 1 for every a; and at the int16 ends.
TEST(QS8LinearRes16, HandComputed) {
  const std::vector<int8_t> x = {1};
  std::vector<int8_t> w = {3, 3, 3, 3};
  std::vector<int8_t> packed(ek::packed_weight_bytes(4, 1));
  ek::pack_weights_k4n16(4, 1, w.data(), 1, packed.data());
  const std::vector<int32_t> bias = {0, 0, 0, 0}, mult = {1 << 30}, shift = {0};
  const std::vector<int16_t> a = {0, -1, 32766, -32768};
  std::vector<int16_t> y(4);
  const ek::QS16Residual res = {a.data(), 4, {2, 1}};
  ek::qs8_linear_res16__ref(1, 4, 1, x.data(), 1, packed.data(), bias.data(), mult.data(), shift.data(), 0, res,
                            y.data(), 4);
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], 32767);   // 32767
  EXPECT_EQ(y[3], -32767);  // (2 - 65536 + 1) >> 1 = -32767 (floor of -32766.5)
  // Ties go up twice: acc = 1 gives requantize = round(0.5) = 1; with A = 1,
  // a = 1, n = 2 the sum is (1 + 1 + 2) >> 2 = 1 (the real value 2 / 4 = 0.5).
  const std::vector<int8_t> one = {1};
  std::vector<int8_t> w1 = {1};
  std::vector<int8_t> p1(ek::packed_weight_bytes(1, 1));
  ek::pack_weights_k4n16(1, 1, w1.data(), 1, p1.data());
  const std::vector<int16_t> a1 = {1};
  std::vector<int16_t> y1(1);
  const ek::QS16Residual r1 = {a1.data(), 1, {1, 2}};
  ek::qs8_linear_res16__ref(1, 1, 1, one.data(), 1, p1.data(), bias.data(), mult.data(), shift.data(), 0, r1,
                            y1.data(), 1);
  EXPECT_EQ(y1[0], 1);
}

// Every (A, n) range end, residuals at the int16 ends and sums past the
// clamp and past int32 (requantize saturates): the kernel against the model
// without clamp or saturation, element by element.
TEST(QS8LinearRes16, MatchesTheInt64Model) {
  const int32_t kEdgeA[] = {0, 1, (1 << 13) - 1, ek::kResidual16MaxMultiplier};
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(37000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 6));
    const int out = static_cast<int>(rng.uniform_int(1, 70));
    const int in = static_cast<int>(rng.uniform_int(1, 90));
    const int r_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    std::vector<int8_t> x(static_cast<size_t>(rows) * in), w(static_cast<size_t>(out) * in);
    for (auto& v : x) v = rng.uniform_int(0, 3) == 0 ? int8_t{-128} : rng.s8();
    for (auto& v : w) v = rng.uniform_int(0, 3) == 0 ? int8_t{-128} : rng.s8();
    const std::vector<int16_t> a = RandS16(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    ek::Residual16Term term = {};
    term.shift = static_cast<int32_t>(rng.uniform_int(1, ek::kResidual16MaxShift));
    term.mult = seed % 3 == 0 ? kEdgeA[seed / 3 % 4]
                              : static_cast<int32_t>(rng.uniform_int(0, ek::kResidual16MaxMultiplier));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int32_t bmag = rng.uniform_int(0, 2) == 0 ? INT32_MAX / 2 : (1 << 20);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bmag, bmag));
    for (int c = 0; c < out; ++c) {
      mult[c] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      shift[c] = static_cast<int32_t>(rng.uniform_int(0, 5) == 0 ? rng.uniform_int(ek::kMinShift, ek::kMaxShift)
                                                                 : rng.uniform_int(-20, 2));
    }
    std::vector<int8_t> packed(ek::packed_weight_bytes(out, in));
    ek::pack_weights_k4n16(out, in, w.data(), in, packed.data());
    const ek::QS16Residual res = {a.data(), r_stride, term};
    std::vector<int16_t> y(static_cast<size_t>(rows) * out);
    ek::qs8_linear_res16__ref(rows, out, in, x.data(), in, packed.data(), bias.data(), mult.data(), shift.data(), 1,
                              res, y.data(), out);
    for (int m = 0; m < rows; ++m) {
      for (int c = 0; c < out; ++c) {
        int64_t acc = bias[c];
        for (int k = 0; k < in; ++k) acc += static_cast<int64_t>(w[static_cast<size_t>(c) * in + k]) * x[static_cast<size_t>(m) * in + k];
        const int16_t want = Model5c(acc, mult[c], shift[c], a[static_cast<size_t>(m) * r_stride + c], term.mult, term.shift);
        ASSERT_EQ(y[static_cast<size_t>(m) * out + c], want)
            << "seed " << seed << " m " << m << " c " << c << " acc " << acc << " A " << term.mult << " n " << term.shift;
      }
    }
  }
}

// Contract 5c against the real sum it stands for, (s_x s_w acc + s_a a) / s_y,
// with the converter's choice (the largest n <= 13 with A <= 2^13) and the
// bound of the contract: one rounding, A's own rounding (2^-(n+1) per unit
// of |a|) and M_c's (31 bits).
TEST(QS8LinearRes16, WithinHalfAStepOfTheRealSum) {
  Rng rng(4242);
  for (int rep = 0; rep < 200; ++rep) {
    const int rows = static_cast<int>(rng.uniform_int(1, 4));
    const int out = static_cast<int>(rng.uniform_int(1, 40));
    const int in = static_cast<int>(rng.uniform_int(1, 70));
    const double sx = 0.005 + rng.uniform01() * 0.05;
    const double sy = 1e-4 + rng.uniform01() * 1e-3;
    const double sa = rep % 4 == 0 ? sy : sy * rng.uniform(0.3, 3.0);  // a shared scale a quarter of the time
    int n = ek::kResidual16MaxShift;
    while (std::lround(sa / sy * std::ldexp(1.0, n)) > ek::kResidual16MaxMultiplier) --n;
    ASSERT_GE(n, 1);
    const ek::Residual16Term term = {static_cast<int32_t>(std::lround(sa / sy * std::ldexp(1.0, n))), n};
    if (sa == sy) {
      ASSERT_EQ(n, 13);
      ASSERT_EQ(term.mult, 1 << 13);
    }
    std::vector<int8_t> x(static_cast<size_t>(rows) * in), w(static_cast<size_t>(out) * in);
    for (auto& v : x) v = rng.s8();
    for (auto& v : w) v = rng.s8();
    const std::vector<int16_t> a = RandS16(rng, static_cast<size_t>(rows) * out);
    std::vector<double> sw(out);
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (int c = 0; c < out; ++c) {
      sw[c] = 0.001 + rng.uniform01() * 0.01;
      bias[c] = static_cast<int32_t>(rng.uniform_int(-20000, 20000));
      ASSERT_TRUE(ek::quantize_multiplier(sx * sw[c] / sy * std::ldexp(1.0, n), &mult[c], &shift[c]));
    }
    std::vector<int8_t> packed(ek::packed_weight_bytes(out, in));
    ek::pack_weights_k4n16(out, in, w.data(), in, packed.data());
    const ek::QS16Residual res = {a.data(), out, term};
    std::vector<int16_t> y(static_cast<size_t>(rows) * out);
    ek::qs8_linear_res16__ref(rows, out, in, x.data(), in, packed.data(), bias.data(), mult.data(), shift.data(), 1,
                              res, y.data(), out);
    for (int m = 0; m < rows; ++m) {
      for (int c = 0; c < out; ++c) {
        double acc = bias[c];
        for (int k = 0; k < in; ++k) acc += static_cast<double>(w[c * in + k]) * x[m * in + k];
        const int32_t ai = a[m * out + c];
        const double real = (sx * sw[c] * acc + sa * ai) / sy;
        const double want = std::fmin(32767, std::fmax(-32768, real));
        const double bound = 0.5 + std::fabs(ai) * std::ldexp(1.0, -n - 1) + std::fabs(real) * 1e-8 + 1e-9;
        ASSERT_LE(std::fabs(y[m * out + c] - want), bound) << "rep " << rep << " m " << m << " c " << c;
      }
    }
  }
}

// ------------------------------------------------------------- LayerNorm ----

// floor(sqrt(v)) for v < 2^62: a double estimate, then exact corrections.
uint64_t FloorSqrt(uint64_t v) {
  uint64_t r = static_cast<uint64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

int Bits(uint64_t v) {
  int b = 0;
  while (v != 0) {
    ++b;
    v >>= 1;
  }
  return b;
}

// f = 14 - ceil(ceil(log2 d) / 2), from its definition.
int FracBits(int d) {
  int lg = 0;
  while ((int64_t{1} << lg) < d) ++lg;
  return 14 - (lg + 1) / 2;
}

// Contract 4b's steps 2-3 from its prose: inv and s for a row's sums.
struct Model4bScale {
  int64_t inv;
  int shift;
};
Model4bScale Model4bRowScale(int d, int64_t s, int64_t q, int64_t eps_term) {
  int lg = 0;
  while ((int64_t{1} << lg) < d) ++lg;
  const int p = 14 - lg;
  const uint64_t dd = static_cast<uint64_t>(d * q - s * s) * (uint64_t{1} << (2 * p)) + static_cast<uint64_t>(eps_term);
  EXPECT_LT(dd, uint64_t{1} << 61);
  const int k = (62 - Bits(dd)) / 2;
  const uint64_t r = FloorSqrt(dd << (2 * k));
  EXPECT_GE(r, uint64_t{1} << 30);
  EXPECT_LT(r, uint64_t{1} << 31);
  const int64_t inv = static_cast<int64_t>(((uint64_t{1} << 60) + r / 2) / r);
  const int sh = 60 - k - p - FracBits(d);
  EXPECT_GE(sh, 2);
  EXPECT_LE(sh, 53);
  return Model4bScale{inv, sh};
}

// Contract 4b's normalized value y_q of element i of a row, from its prose,
// given the row's scale from Model4bRowScale and its sum S.
int32_t Model4bNormalized(const int16_t* x, int d, int i, int64_t s, const Model4bScale& rs) {
  const int64_t c = d * static_cast<int64_t>(x[i]) - s;
  const int64_t num = c * rs.inv + (int64_t{1} << (rs.shift - 1));
  const int sh = rs.shift;
  const int64_t y = num >= 0 ? num >> sh : -((-num + (int64_t{1} << sh) - 1) >> sh);  // floor, written out
  return static_cast<int32_t>(std::clamp<int64_t>(y, -32767, 32767));
}

// The row scale (inv, s) on sums of every int16 row shape: any S, Q from
// S^2 / d (Cauchy-Schwarz) up to 2^30 d, eps terms from 1 to 2^60.
TEST(QS16LayerNorm, RowScaleMatchesTheModel) {
  Rng rng(4703);
  for (int it = 0; it < 200000; ++it) {
    const int d = static_cast<int>(rng.uniform_int(0, 1) ? rng.uniform_int(1, 300) : rng.uniform_int(1, 16384));
    const int64_t s = rng.uniform_int(-32768LL * d, 32767LL * d);
    const int64_t qmin = (s * s + d - 1) / d;
    const int64_t q = rng.uniform_int(0, 2) ? qmin + rng.uniform_int(0, 3) : rng.uniform_int(qmin, (int64_t{1} << 30) * d);
    const int64_t e = rng.uniform_int(0, 2) == 0 ? int64_t{1} << rng.uniform_int(0, 60)
                                                 : static_cast<int64_t>(rng.log_uniform(1.0, 1e15));
    const Model4bScale want = Model4bRowScale(d, s, q, e);
    const ek::LayerNormRowScale got = ek::layernorm16_row_scale(d, static_cast<int32_t>(s), q, e);
    ASSERT_EQ(got.inv, want.inv) << "d " << d << " S " << s << " Q " << q << " E " << e;
    ASSERT_EQ(got.shift, want.shift) << "d " << d << " S " << s << " Q " << q << " E " << e;
  }
}

struct Ln16Case {
  int rows = 0, dim = 0, x_stride = 0;
  double s_in = 0, eps = 1e-5, s_out8 = 0, s_out16 = 0, s_g = 0;
  int32_t zp_out = 0;
  std::vector<double> gain, bias;
  std::vector<int16_t> x, g;
  std::vector<int32_t> b;
  ek::QS16LayerNormArgs args = {};

  // As the converter would: gain at max|gain| / 32767, bias at s_g 2^-f,
  // E = round(4^p d^2 eps / s_in^2) (at least 1), the two output multipliers.
  void Quantize() {
    double gmax = 0, bmax = 0;
    for (double v : gain) gmax = std::fmax(gmax, std::fabs(v));
    for (double v : bias) bmax = std::fmax(bmax, std::fabs(v));
    const int f = FracBits(dim);
    // The bias at s_g 2^-f must stay within kLayerNormMaxBias (2^30): a
    // coarser gain scale where it would not (narrow rows: f up to 14).
    s_g = std::fmax(gmax > 0 ? gmax / 32767.0 : 1.0 / 32767.0, bmax * std::ldexp(1.0, f - 30) * 1.001);
    g.resize(dim);
    b.resize(dim);
    for (int i = 0; i < dim; ++i) {
      g[i] = static_cast<int16_t>(std::lround(gain[i] / s_g));
      b[i] = static_cast<int32_t>(std::llround(bias[i] / (s_g * std::ldexp(1.0, -f))));
      ASSERT_LE(std::abs(b[i]), ek::kLayerNormMaxBias);
    }
    args.rows = rows;
    args.dim = dim;
    args.x = x.data();
    args.x_stride = x_stride;
    int lg = 0;
    while ((int64_t{1} << lg) < dim) ++lg;
    args.eps_term = std::max<int64_t>(
        1, std::llround(std::ldexp(static_cast<double>(dim) * dim * eps / (s_in * s_in), 2 * (14 - lg))));
    args.gain = g.data();
    args.bias = b.data();
    ASSERT_TRUE(ek::quantize_multiplier(s_g * std::ldexp(1.0, -f) / s_out8, &args.mult, &args.shift));
    ASSERT_TRUE(ek::quantize_multiplier(s_g * std::ldexp(1.0, -f) / s_out16, &args.mult16, &args.shift16));
    args.y_zp = zp_out;
  }
  // The float64 LayerNorm of row r, every element.
  std::vector<double> Truth(int r) const {
    const int16_t* xr = x.data() + static_cast<size_t>(r) * x_stride;
    double mean = 0, var = 0;
    for (int k = 0; k < dim; ++k) mean += s_in * xr[k];
    mean /= dim;
    for (int k = 0; k < dim; ++k) var += std::pow(s_in * xr[k] - mean, 2);
    var /= dim;
    std::vector<double> t(dim);
    for (int i = 0; i < dim; ++i) t[i] = (s_in * xr[i] - mean) / std::sqrt(var + eps) * gain[i] + bias[i];
    return t;
  }
};

// A row kind: uniform over int16, the int16 corners, constant (zero
// variance), constant with one element off by one, a narrow spread, one
// outlier among equal values (Samuelson's bound is tight there).
void FillRow(Rng& rng, int kind, int16_t* x, int d) {
  const int16_t base = static_cast<int16_t>(rng.uniform_int(-32768, 32767));
  const int spread = static_cast<int>(rng.uniform_int(1, 300));
  for (int i = 0; i < d; ++i) {
    switch (kind) {
      case 0: x[i] = static_cast<int16_t>(rng.uniform_int(-32768, 32767)); break;
      case 1: x[i] = rng.uniform_int(0, 1) ? int16_t{-32768} : int16_t{32767}; break;
      case 2:
      case 3:
      case 5: x[i] = base; break;
      default: x[i] = static_cast<int16_t>(std::clamp<int>(base + static_cast<int>(rng.uniform_int(-spread, spread)), -32768, 32767));
    }
  }
  if (kind == 3) x[rng.uniform_int(0, d - 1)] = static_cast<int16_t>(base == 32767 ? 32766 : base + 1);
  if (kind == 5) x[rng.uniform_int(0, d - 1)] = base < 0 ? int16_t{32767} : int16_t{-32768};
}

Ln16Case RandomLn16(Rng& rng, int rows, int dim, int kind) {
  Ln16Case c;
  c.rows = rows;
  c.dim = dim;
  c.x_stride = dim + static_cast<int>(rng.uniform_int(0, 3));
  c.s_in = std::ldexp(1.0, -static_cast<int>(rng.uniform_int(4, 14)));
  c.x.assign(static_cast<size_t>(rows - 1) * c.x_stride + dim, 0);
  for (int r = 0; r < rows; ++r) {
    FillRow(rng, kind < 0 ? static_cast<int>(rng.uniform_int(0, 5)) : kind, c.x.data() + static_cast<size_t>(r) * c.x_stride, dim);
  }
  for (int i = 0; i < dim; ++i) {
    c.gain.push_back(rng.uniform_int(0, 9) == 0 ? -rng.uniform(0.1, 2.0) : rng.uniform(0.1, 2.0));
    c.bias.push_back(0.3 * rng.normal());
  }
  // Outputs: |y| <= sqrt(d - 1) max|gain| + max|bias|; int8 over 4 sigma
  // (saturating beyond), int16 over the whole bound.
  c.s_out8 = (4.0 * 2.0 + 1.5) / 127.0;
  c.s_out16 = (std::sqrt(static_cast<double>(dim)) * 2.0 + 1.5) / 32767.0;
  c.zp_out = static_cast<int32_t>(rng.uniform_int(-128, 127));
  c.Quantize();
  return c;
}

// Both outputs against the model of the prose (exact, element by element)
// and against float64 with the contract's error bound: the final rounding,
// y_q's (2^-(f+1) of a standard deviation), the gain's and bias's roundings.
void CheckLn16(Ln16Case& c, const std::string& what) {
  const int d = c.dim;
  std::vector<int8_t> y8(static_cast<size_t>(c.rows) * d, 0x5A);
  std::vector<int16_t> y16(static_cast<size_t>(c.rows) * d, 0x5A5A);
  c.args.y8 = y8.data();
  c.args.y8_stride = d;
  c.args.y16 = y16.data();
  c.args.y16_stride = d;
  ek::qs16_layernorm__ref(c.args);
  const int f = FracBits(d);
  for (int r = 0; r < c.rows; ++r) {
    const int16_t* xr = c.x.data() + static_cast<size_t>(r) * c.x_stride;
    int64_t sum = 0, sum_sq = 0;
    for (int j = 0; j < d; ++j) {
      sum += xr[j];
      sum_sq += static_cast<int64_t>(xr[j]) * xr[j];
    }
    const Model4bScale rs = Model4bRowScale(d, sum, sum_sq, c.args.eps_term);
    const std::vector<double> truths = c.Truth(r);
    for (int i = 0; i < d; ++i) {
      const int32_t yq = Model4bNormalized(xr, d, i, sum, rs);
      ASSERT_LE(std::abs(yq), 16384) << what;
      const int64_t acc = static_cast<int64_t>(yq) * c.g[i] + c.b[i];
      const int8_t want8 = eatest::exact_requantize_s8(acc, c.args.mult, c.args.shift, c.zp_out);
      const int16_t want16 = Sat16(ExactScaled(acc, c.args.mult16, c.args.shift16));
      ASSERT_EQ(y8[static_cast<size_t>(r) * d + i], want8) << what << " row " << r << " i " << i;
      ASSERT_EQ(y16[static_cast<size_t>(r) * d + i], want16) << what << " row " << r << " i " << i;
      const double truth = truths[i];
      const double norm = std::fabs((truth - c.bias[i]) / (c.gain[i] != 0 ? c.gain[i] : 1));
      const double err = std::fabs(c.gain[i]) * std::ldexp(1.0, -f - 1) * 1.0001 + c.s_g * 0.5 * norm +
                         c.s_g * std::ldexp(1.0, -f - 1) + 1e-6 * (std::fabs(truth) + 1);
      const double want = std::fmin(32767, std::fmax(-32768, truth / c.s_out16));
      ASSERT_LE(std::fabs(y16[static_cast<size_t>(r) * d + i] - want), 0.5 + err / c.s_out16 + 1e-3)
          << what << " row " << r << " i " << i << " truth " << truth;
      const double want8f = std::fmin(127, std::fmax(-128, truth / c.s_out8 + c.zp_out));
      ASSERT_LE(std::fabs(y8[static_cast<size_t>(r) * d + i] - want8f), 0.5 + err / c.s_out8 + 1e-3)
          << what << " row " << r << " i " << i;
    }
  }
}

TEST(QS16LayerNorm, MatchesModelAndFloat64OnRaggedWidths) {
  Rng rng(4700);
  for (int dim : {1, 2, 3, 5, 16, 17, 60, 64, 65, 127, 256, 768, 1000, 1024, 4096, 16384}) {
    for (int kind = 0; kind < 6; ++kind) {
      for (int rep = 0; rep < 4; ++rep) {
        Ln16Case c = RandomLn16(rng, dim > 1000 ? 1 : 3, dim, kind);
        CheckLn16(c, "dim " + std::to_string(dim) + " kind " + std::to_string(kind) + " rep " + std::to_string(rep));
      }
    }
  }
}

// The widest row (d = 16384) at the int16 corners: the largest variance
// (d Q - S^2 = 2^58 - d^2 / 4 ... below 2^58) and centred values, eps terms
// at both ends (1 and 2^60).
TEST(QS16LayerNorm, WidestRowAtTheInt16Ends) {
  Rng rng(4701);
  for (int64_t e : {int64_t{1}, int64_t{1} << 40, int64_t{1} << 60}) {
    for (int kind : {1, 5}) {
      Ln16Case c = RandomLn16(rng, 1, 16384, kind);
      if (kind == 1) {
        for (int i = 0; i < 16384; ++i) c.x[i] = (i % 2) ? int16_t{32767} : int16_t{-32768};
      }
      c.args.eps_term = e;
      c.eps = static_cast<double>(e) * c.s_in * c.s_in / (16384.0 * 16384.0);  // p = 0 at d = 16384
      CheckLn16(c, "E " + std::to_string(e) + " kind " + std::to_string(kind));
    }
  }
}

// Zero variance: the output is the bias (hand-computed: c_i = 0, y_q = 0).
TEST(QS16LayerNorm, ZeroVarianceRowGivesTheBias) {
  for (int16_t v : {int16_t{-32768}, int16_t{0}, int16_t{32767}}) {
    const std::vector<int16_t> x(7, v), g(7, 1000);
    const std::vector<int32_t> b = {0, 1, -1, 100, -100, 1 << 20, -(1 << 20)};
    ek::QS16LayerNormArgs a = {};
    a.rows = 1;
    a.dim = 7;
    a.x = x.data();
    a.x_stride = 7;
    a.eps_term = 1;
    a.gain = g.data();
    a.bias = b.data();
    a.mult16 = 1 << 30;  // 2^30 2^(1 - 31) = 1: the output is the bias itself
    a.shift16 = 1;
    std::vector<int16_t> y(7);
    a.y16 = y.data();
    a.y16_stride = 7;
    ek::qs16_layernorm__ref(a);
    const std::vector<int16_t> want = {0, 1, -1, 100, -100, 32767, -32768};
    EXPECT_EQ(y, want);
  }
}

// y16 = x (in place), and the int8 output alone: the same integers.
TEST(QS16LayerNorm, InPlaceAndSingleOutputs) {
  Rng rng(4702);
  for (int dim : {1, 33, 300}) {
    Ln16Case c = RandomLn16(rng, 5, dim, -1);
    std::vector<int8_t> y8(static_cast<size_t>(c.rows) * dim);
    std::vector<int16_t> y16(static_cast<size_t>(c.rows) * dim);
    c.args.y8 = y8.data();
    c.args.y8_stride = dim;
    c.args.y16 = y16.data();
    c.args.y16_stride = dim;
    ek::qs16_layernorm__ref(c.args);
    std::vector<int16_t> inplace = c.x;
    std::vector<int8_t> only8(y8.size());
    ek::QS16LayerNormArgs a = c.args;
    a.x = inplace.data();
    a.y16 = inplace.data();
    a.y16_stride = c.x_stride;
    a.y8 = nullptr;
    ek::qs16_layernorm__ref(a);
    a = c.args;
    a.y16 = nullptr;
    a.y8 = only8.data();
    ek::qs16_layernorm__ref(a);
    EXPECT_EQ(only8, y8);
    for (int r = 0; r < c.rows; ++r) {
      for (int i = 0; i < dim; ++i) {
        ASSERT_EQ(inplace[static_cast<size_t>(r) * c.x_stride + i], y16[static_cast<size_t>(r) * dim + i]);
      }
    }
  }
}

}  // namespace
