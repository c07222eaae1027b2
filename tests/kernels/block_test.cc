// The transformer-block primitives (requant.h contracts 4, 5b and 6:
// integer LayerNorm, the residual in a projection's epilogue, activation
// table) against float64 oracles written here. Expected values never come from the functions under test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "test_util.h"

namespace ek = edgeattn::kernels;
using eatest::Rng;

namespace {

TEST(Isqrt, ExactOnEdgesAndRandomValues) {
  std::vector<uint64_t> xs = {0, 1, 2, 3, 4, 15, 16, 17, 99, 100, 101, (uint64_t{1} << 62) - 1,
                              uint64_t{1} << 62, UINT64_MAX};
  for (uint64_t r : {uint64_t{46340}, uint64_t{1} << 30, (uint64_t{1} << 31) - 1, uint64_t{3037000499}}) {
    xs.push_back(r * r - 1);
    xs.push_back(r * r);
    xs.push_back(r * r + 1);
  }
  Rng rng(7);
  for (int i = 0; i < 20000; ++i) {
    const int bits = static_cast<int>(rng.uniform_int(1, 63));
    xs.push_back(static_cast<uint64_t>(rng.uniform_int(0, (int64_t{1} << (bits - 1)) - 1)) |
                 (uint64_t{1} << (bits - 1)));
  }
  for (uint64_t x : xs) {
    const uint64_t r = ek::isqrt_u64(x);
    // floor(sqrt(x)) is the r < 2^32 with r^2 <= x < (r + 1)^2; (r + 1)^2
    // fits 64 bits unless r + 1 = 2^32, which exceeds every uint64.
    ASSERT_LE(r, 0xFFFFFFFFull) << x;
    EXPECT_LE(r * r, x) << x;
    if (r < 0xFFFFFFFFull) {
      EXPECT_GT((r + 1) * (r + 1), x) << x;
    }
  }
}

TEST(LayerNormNumerics, FracBitsKeepTheNormalizedRowInSixteenBits) {
  // f = 14 - ceil(ceil(log2 d) / 2): sqrt(d) 2^f <= 2^14, and as large as that allows.
  for (int d = 1; d <= 16384; ++d) {
    const int f = ek::layernorm_frac_bits(d);
    EXPECT_LE(std::sqrt(static_cast<double>(d)) * std::ldexp(1.0, f), 16384.0 + 1e-9) << d;
    EXPECT_GT(std::sqrt(static_cast<double>(d)) * std::ldexp(1.0, f + 1), 16384.0 / 1.5) << d;
  }
  EXPECT_EQ(ek::layernorm_frac_bits(1), 14);
  EXPECT_EQ(ek::layernorm_frac_bits(64), 11);
  EXPECT_EQ(ek::layernorm_frac_bits(65), 10);
  EXPECT_EQ(ek::layernorm_frac_bits(16384), 7);
}

// A quantized LayerNorm as the converter makes it, with its float64 truth.
struct LayerNormCase {
  int rows = 0, dim = 0;
  double s_in = 0, eps = 0, s_out = 0;
  int32_t zp_in = 0, zp_out = 0;
  std::vector<double> gain, bias;
  std::vector<int8_t> x;
  // quantized
  std::vector<int16_t> g;
  std::vector<int32_t> b;
  int64_t eps_term = 0;
  int32_t mult = 0, shift = 0;

  void Quantize() {
    double gmax = 0;
    for (double v : gain) gmax = std::fmax(gmax, std::fabs(v));
    const double s_g = gmax > 0 ? gmax / 32767.0 : 1.0 / 32767.0;
    const int f = ek::layernorm_frac_bits(dim);
    g.resize(dim);
    b.resize(dim);
    for (int i = 0; i < dim; ++i) {
      g[i] = static_cast<int16_t>(std::lround(gain[i] / s_g));
      b[i] = static_cast<int32_t>(std::llround(bias[i] / (s_g * std::ldexp(1.0, -f))));
    }
    eps_term = std::max<int64_t>(1, std::llround(65536.0 * dim * dim * eps / (s_in * s_in)));
    ASSERT_TRUE(ek::quantize_multiplier(s_g * std::ldexp(1.0, -f) / s_out, &mult, &shift));
  }
  double Truth(int r, int i) const {
    const int8_t* xr = x.data() + static_cast<size_t>(r) * dim;
    double mean = 0, var = 0;
    for (int k = 0; k < dim; ++k) mean += s_in * (xr[k] - zp_in);
    mean /= dim;
    for (int k = 0; k < dim; ++k) var += std::pow(s_in * (xr[k] - zp_in) - mean, 2);
    var /= dim;
    return (s_in * (xr[i] - zp_in) - mean) / std::sqrt(var + eps) * gain[i] + bias[i];
  }
  std::vector<int8_t> Run() const {
    std::vector<int8_t> y(x.size());
    ek::QS8LayerNormArgs a = {};
    a.rows = rows; a.dim = dim; a.x = x.data(); a.x_stride = dim; a.eps_term = eps_term;
    a.gain = g.data(); a.bias = b.data(); a.mult = mult; a.shift = shift; a.y_zp = zp_out;
    a.y = y.data(); a.y_stride = dim;
    ek::qs8_layernorm__ref(a);
    return y;
  }
};

LayerNormCase RandomCase(Rng& rng, int dim, int rows) {
  LayerNormCase c;
  c.rows = rows;
  c.dim = dim;
  c.s_in = 0.02 + rng.uniform01() * 0.1;
  c.zp_in = static_cast<int32_t>(rng.uniform_int(-20, 20));
  c.eps = 1e-5;
  for (int i = 0; i < dim; ++i) {
    c.gain.push_back(0.5 + rng.uniform01());
    c.bias.push_back(0.3 * rng.normal());
  }
  // Output range: the normalized row stays within +-sqrt(dim - 1); use 4 sigma.
  c.s_out = (4.0 * 1.5 + 1.0) / 127.0;
  c.zp_out = static_cast<int32_t>(rng.uniform_int(-5, 5));
  const int spread = static_cast<int>(rng.uniform_int(1, 127));
  for (int i = 0; i < rows * dim; ++i) {
    c.x.push_back(static_cast<int8_t>(rng.uniform_int(-spread, std::min(127, spread))));
  }
  c.Quantize();
  return c;
}

TEST(QS8LayerNorm, WithinOneStepOfFloat64OnRaggedWidths) {
  Rng rng(11);
  for (int dim : {1, 2, 3, 5, 16, 17, 60, 64, 65, 127, 256, 1000, 1024, 4096}) {
    for (int rep = 0; rep < 4; ++rep) {
      LayerNormCase c = RandomCase(rng, dim, 3);
      const std::vector<int8_t> y = c.Run();
      for (int r = 0; r < c.rows; ++r) {
        for (int i = 0; i < dim; ++i) {
          const double want = std::fmin(127, std::fmax(-128, c.Truth(r, i) / c.s_out + c.zp_out));
          ASSERT_LE(std::fabs(y[static_cast<size_t>(r) * dim + i] - want), 1.0)
              << "dim " << dim << " row " << r << " i " << i;
        }
      }
    }
  }
}

TEST(QS8LayerNorm, ZeroVarianceRowGivesTheBias) {
  Rng rng(12);
  for (int dim : {1, 4, 60, 333}) {
    LayerNormCase c = RandomCase(rng, dim, 2);
    for (size_t i = 0; i < c.x.size(); ++i) c.x[i] = i < static_cast<size_t>(dim) ? int8_t{-128} : int8_t{77};
    const std::vector<int8_t> y = c.Run();
    for (int r = 0; r < 2; ++r) {
      for (int i = 0; i < dim; ++i) {
        const double want = std::fmin(127, std::fmax(-128, c.bias[i] / c.s_out + c.zp_out));
        EXPECT_LE(std::fabs(y[static_cast<size_t>(r) * dim + i] - want), 0.5 + 1e-6) << dim << " " << i;
      }
    }
  }
}

TEST(QS8LayerNorm, ExtremeRowsStayDefined) {
  // Rows that alternate -128/127 at the widest dim: the largest variance, the
  // largest centred values; in place (y == x).
  const int dim = 16384;
  Rng rng(13);
  LayerNormCase c = RandomCase(rng, dim, 1);
  for (int i = 0; i < dim; ++i) c.x[i] = (i % 2) ? int8_t{127} : int8_t{-128};
  std::vector<int8_t> y = c.x;
  ek::QS8LayerNormArgs a = {};
  a.rows = 1; a.dim = dim; a.x = y.data(); a.x_stride = dim; a.eps_term = c.eps_term;
  a.gain = c.g.data(); a.bias = c.b.data(); a.mult = c.mult; a.shift = c.shift; a.y_zp = c.zp_out;
  a.y = y.data(); a.y_stride = dim;
  ek::qs8_layernorm__ref(a);
  for (int i = 0; i < dim; ++i) {
    const double want = std::fmin(127, std::fmax(-128, c.Truth(0, i) / c.s_out + c.zp_out));
    ASSERT_LE(std::fabs(y[i] - want), 1.0) << i;
  }
}

// Contract 5b against the real sum it stands for: y = (s_x s_w acc + s_a (a -
// zp_a)) / s_y + zp_y, with every scale drawn here, its multipliers rounded
// as the converter rounds them, and the bound of one rounding plus the
// multipliers' own (M_c to 31 bits, A to 2^-(n+1) per unit of |a - zp_a|).
TEST(QS8LinearRes, WithinHalfAStepOfTheRealSum) {
  Rng rng(41);
  for (int rep = 0; rep < 150; ++rep) {
    const int rows = static_cast<int>(rng.uniform_int(1, 5));
    const int out = static_cast<int>(rng.uniform_int(1, 40));
    const int in = static_cast<int>(rng.uniform_int(1, 70));
    const double sx = 0.005 + rng.uniform01() * 0.05, sa = 0.01 + rng.uniform01() * 0.1;
    const double sy = 0.01 + rng.uniform01() * 0.1;
    const int32_t za = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t zy = static_cast<int32_t>(rng.uniform_int(-128, 127));
    int n = ek::kResidualMaxShift;
    while (std::lround(sa / sy * std::ldexp(1.0, n)) > ek::kResidualMaxMultiplier) --n;
    const ek::ResidualTerm term = {static_cast<int32_t>(std::lround(sa / sy * std::ldexp(1.0, n))), n, za, zy};
    std::vector<int8_t> x(static_cast<size_t>(rows) * in), w(static_cast<size_t>(out) * in);
    std::vector<int8_t> a(static_cast<size_t>(rows) * out), y(a.size());
    for (auto& v : x) v = rng.s8();
    for (auto& v : w) v = rng.s8();
    for (auto& v : a) v = rng.s8();
    std::vector<double> sw(out);
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (int c = 0; c < out; ++c) {
      sw[c] = 0.001 + rng.uniform01() * 0.01;
      bias[c] = static_cast<int32_t>(rng.uniform_int(-20000, 20000));
      ASSERT_TRUE(ek::quantize_multiplier(sx * sw[c] / sy * std::ldexp(1.0, n), &mult[c], &shift[c]));
    }
    std::vector<int8_t> packed(ek::packed_weight_bytes(out, in));
    ek::pack_weights_k4n16(out, in, w.data(), in, packed.data());
    const ek::QS8Residual res = {a.data(), out, term};
    ek::qs8_linear_res__ref(rows, out, in, x.data(), in, packed.data(), bias.data(), mult.data(), shift.data(), 1,
                            res, y.data(), out);
    for (int m = 0; m < rows; ++m) {
      for (int c = 0; c < out; ++c) {
        double acc = bias[c];
        for (int k = 0; k < in; ++k) acc += static_cast<double>(w[c * in + k]) * x[m * in + k];
        const int32_t ai = a[m * out + c] - za;
        const double real = (sx * sw[c] * acc + sa * ai) / sy + zy;
        const double want = std::fmin(127, std::fmax(-128, real));
        const double bound = 0.5 + std::fabs(ai) * std::ldexp(1.0, -n - 1) + std::fabs(real - zy) * 1e-8 + 1e-9;
        ASSERT_LE(std::fabs(y[m * out + c] - want), bound) << "rep " << rep << " m " << m << " c " << c;
      }
    }
  }
}

// Sums past the clamp: a projection far beyond the int8 range saturates
// even against the largest residual of the other sign.
TEST(QS8LinearRes, ClampedSumsStillSaturate) {
  const int n = 16;
  const ek::ResidualTerm term = {int32_t{1} << n, n, 0, 0};
  std::vector<int8_t> x = {1}, w = {1}, a = {-128, 127};
  std::vector<int8_t> packed(ek::packed_weight_bytes(2, 1));
  std::vector<int8_t> w2 = {1, 1};
  ek::pack_weights_k4n16(2, 1, w2.data(), 1, packed.data());
  std::vector<int32_t> bias = {INT32_MAX - 1, INT32_MIN + 1}, mult = {1 << 30, 1 << 30}, shift = {30, 30};
  std::vector<int8_t> y(2);
  const ek::QS8Residual res = {a.data(), 2, term};
  // Residual -128 against a huge positive sum, +127 against a huge negative one.
  ek::qs8_linear_res__ref(1, 2, 1, x.data(), 1, packed.data(), bias.data(), mult.data(), shift.data(), 1, res,
                          y.data(), 2);
  EXPECT_EQ(y[0], 127);
  EXPECT_EQ(y[1], -128);
}

TEST(QS8Lut, ReadsTheTableAtXPlus128InPlace) {
  std::vector<int8_t> table(256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<int8_t>(127 - i);  // y = -1 - x
  std::vector<int8_t> x(256);
  for (int i = 0; i < 256; ++i) x[i] = static_cast<int8_t>(i - 128);
  ek::qs8_lut__ref(2, 128, x.data(), 128, table.data(), x.data(), 128);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(x[i], -1 - (i - 128)) << i;
}

TEST(F32Activation, MatchesTheDefinitions) {
  std::vector<float> xs = {-4.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f, 6.0f};
  for (int32_t act : {ek::kActRelu, ek::kActGeluErf, ek::kActGeluTanh, ek::kActSilu}) {
    std::vector<float> y = xs;
    ek::f32_activation__ref(1, static_cast<int>(y.size()), y.data(), 0, act);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double v = xs[i];
      double want = 0;
      switch (act) {
        case ek::kActRelu: want = v > 0 ? v : 0; break;
        case ek::kActGeluErf: want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); break;
        case ek::kActGeluTanh:
          want = 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
          break;
        default: want = v / (1 + std::exp(-v)); break;
      }
      EXPECT_NEAR(y[i], want, 1e-5) << act << " " << v;
    }
  }
}

TEST(F32LayerNorm, MatchesFloat64) {
  Rng rng(31);
  const int dim = 37;
  std::vector<float> x(2 * dim), g(dim), b(dim), y(2 * dim);
  for (auto& v : x) v = static_cast<float>(rng.normal() * 3 + 1);
  for (auto& v : g) v = static_cast<float>(rng.uniform01() + 0.5);
  for (auto& v : b) v = static_cast<float>(rng.normal());
  ek::f32_layernorm__ref(2, dim, x.data(), dim, 1e-5f, g.data(), b.data(), y.data(), dim);
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < dim; ++i) mean += x[r * dim + i];
    mean /= dim;
    for (int i = 0; i < dim; ++i) var += (x[r * dim + i] - mean) * (x[r * dim + i] - mean);
    var /= dim;
    for (int i = 0; i < dim; ++i) {
      EXPECT_NEAR(y[r * dim + i], (x[r * dim + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i], 1e-4);
    }
  }
}

}  // namespace
