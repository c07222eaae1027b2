// Linear kernels and the int8 attention row primitives (QK scores, PV) against
// float64 / exact integer oracles computed in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "test_util.h"

namespace ek = edgeattn::kernels;
using eatest::kSentinel;
using eatest::kSentinel8;
using eatest::Rng;

namespace {


// ----------------------------------------------------------- f32_linear ----

TEST(F32Linear, RandomShapesAgainstFloat64) {
  const int in_sizes[] = {1, 2, 3, 15, 16, 17, 31, 64, 100, 257, 1024};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed * 0x1001);
    const int rows = static_cast<int>(rng.uniform_int(1, 6));
    const int in = in_sizes[rng.uniform_int(0, 10)];
    const int out = static_cast<int>(rng.uniform_int(1, 40));
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 5));
    const int w_stride = (in + 15) / 16 * 16 + 16 * static_cast<int>(rng.uniform_int(0, 1));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const bool has_bias = rng.uniform_int(0, 3) != 0;
    std::vector<float> x(static_cast<size_t>(rows) * x_stride), w(static_cast<size_t>(out) * w_stride),
        b(out), y(static_cast<size_t>(rows) * y_stride, kSentinel);
    for (float& v : x) v = static_cast<float>(rng.normal() * 2.0);
    for (float& v : w) v = static_cast<float>(rng.normal() * 0.3);
    for (float& v : b) v = static_cast<float>(rng.normal());
    ek::f32_linear__ref(rows, out, in, x.data(), x_stride, w.data(), w_stride,
                        has_bias ? b.data() : nullptr, y.data(), y_stride);
    for (int m = 0; m < rows; ++m) {
      for (int n = 0; n < y_stride; ++n) {
        const float got = y[static_cast<size_t>(m) * y_stride + n];
        if (n >= out) {
          ASSERT_EQ(got, kSentinel) << "seed " << seed << " wrote padding y[" << m << "][" << n << "]";
          continue;
        }
        double ref = has_bias ? b[n] : 0.0, mag = has_bias ? std::fabs(b[n]) : 0.0;
        for (int k = 0; k < in; ++k) {
          const double t = static_cast<double>(w[static_cast<size_t>(n) * w_stride + k]) *
                           x[static_cast<size_t>(m) * x_stride + k];
          ref += t;
          mag += std::fabs(t);
        }
        // Float32 recursive dot product of in products + bias: in roundings of
        // products and in additions, so |err| <= gamma_(in+1) * (|b| + sum |w x|)
        // (Higham, Thm 3.1/3.5). Rigorous; a wrong index or missing term fails it.
        const double tol = eatest::gamma_f32(in + 1) * mag;
        ASSERT_LE(std::fabs(got - ref), tol)
            << "seed " << seed << " y[" << m << "][" << n << "] rows=" << rows << " in=" << in << " out=" << out;
      }
    }
  }
}

// ----------------------------------------------------------- qs8_linear ----

struct QLinearCase {
  int rows, out, in, x_stride, w_stride, y_stride, per_channel;
  int32_t y_zp;
  std::vector<int8_t> x, w;
  std::vector<int32_t> bias, mult, shift;
};

void CheckQS8Linear(const QLinearCase& c, uint64_t seed) {
  std::vector<int8_t> y(static_cast<size_t>(c.rows) * c.y_stride, kSentinel8);
  // The kernel reads the packed layout; the expected values below read c.w row-major.
  std::vector<int8_t> packed(ek::packed_weight_bytes(c.out, c.in));
  ek::pack_weights_k4n16(c.out, c.in, c.w.data(), c.w_stride, packed.data());
  ek::qs8_linear__ref(c.rows, c.out, c.in, c.x.data(), c.x_stride, packed.data(), c.bias.data(),
                      c.mult.data(), c.shift.data(), c.per_channel, c.y_zp, y.data(), c.y_stride);
  for (int m = 0; m < c.rows; ++m) {
    for (int n = 0; n < c.y_stride; ++n) {
      const int8_t got = y[static_cast<size_t>(m) * c.y_stride + n];
      if (n >= c.out) {
        ASSERT_EQ(got, kSentinel8) << "seed " << seed << " wrote padding y[" << m << "][" << n << "]";
        continue;
      }
      int64_t acc = c.bias[n];
      for (int k = 0; k < c.in; ++k) {
        acc += int64_t{c.w[static_cast<size_t>(n) * c.w_stride + k]} * c.x[static_cast<size_t>(m) * c.x_stride + k];
      }
      const int ch = c.per_channel ? n : 0;
      const int8_t want = eatest::exact_requantize_s8(acc, c.mult[ch], c.shift[ch], c.y_zp);
      // Exact: the int8 path is defined bit for bit.
      ASSERT_EQ(got, want) << "seed " << seed << " y[" << m << "][" << n << "] acc=" << acc
                           << " M=" << c.mult[ch] << " shift=" << c.shift[ch] << " zp=" << c.y_zp;
    }
  }
}

TEST(QS8Linear, RandomExact) {
  const int in_sizes[] = {1, 2, 15, 16, 17, 32, 60, 64, 100, 256, 1000};
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 0x2002);
    QLinearCase c;
    c.rows = static_cast<int>(rng.uniform_int(1, 6));
    c.in = in_sizes[rng.uniform_int(0, 10)];
    c.out = static_cast<int>(rng.uniform_int(1, 48));
    c.x_stride = c.in + static_cast<int>(rng.uniform_int(0, 7));
    c.w_stride = (c.in + 15) / 16 * 16;
    c.y_stride = c.out + static_cast<int>(rng.uniform_int(0, 3));
    c.per_channel = static_cast<int>(rng.uniform_int(0, 1));
    c.y_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    c.x.resize(static_cast<size_t>(c.rows) * c.x_stride);
    c.w.assign(static_cast<size_t>(c.out) * c.w_stride, 0);  // zero row padding, as in the file
    for (int8_t& v : c.x) v = rng.s8();
    for (int n = 0; n < c.out; ++n) {
      for (int k = 0; k < c.in; ++k) {
        c.w[static_cast<size_t>(n) * c.w_stride + k] = static_cast<int8_t>(rng.uniform_int(-127, 127));
      }
    }
    c.bias.resize(c.out);
    for (int32_t& v : c.bias) v = static_cast<int32_t>(rng.uniform_int(-(1 << 22), 1 << 22));
    const int channels = c.per_channel ? c.out : 1;
    // Typical accumulators are ~ 128*73*sqrt(in); real multipliers from 1e-7 to
    // 1e-2 give outputs from all-zero through mid-range to saturated.
    for (int ch = 0; ch < channels; ++ch) {
      int32_t m = 0, s = 0;
      ASSERT_TRUE(ek::quantize_multiplier(rng.log_uniform(1e-7, 1e-2), &m, &s));
      c.mult.push_back(m);
      c.shift.push_back(s);
    }
    CheckQS8Linear(c, seed);
    if (HasFatalFailure()) return;
  }
}

TEST(QS8Linear, ExtremeAccumulators) {
  // in = 4096 with x = -128 and w = -127 everywhere: acc = 66,584,576 + bias.
  QLinearCase c;
  c.rows = 2;
  c.out = 3;
  c.in = 4096;
  c.x_stride = c.w_stride = 4096;
  c.y_stride = 3;
  c.per_channel = 1;
  c.y_zp = -3;
  c.x.assign(2 * 4096, -128);
  for (int k = 0; k < 4096; ++k) c.x[4096 + k] = 127;
  c.w.assign(3 * 4096, -127);
  for (int k = 0; k < 4096; ++k) c.w[4096 + k] = 127;
  c.bias = {INT32_MAX / 2, -12345, INT32_MIN / 2};
  int32_t m = 0, s = 0;
  for (double r : {1e-6, 1.9e-6, 3e-9}) {
    ASSERT_TRUE(ek::quantize_multiplier(r, &m, &s));
    c.mult.push_back(m);
    c.shift.push_back(s);
  }
  CheckQS8Linear(c, 0);
}

// --------------------------------------------------- int8 row primitives ----

TEST(QS8Rows, QkRowExact) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed * 0x3003);
    const int n = static_cast<int>(rng.uniform_int(0, 300));
    const int dim = static_cast<int>(rng.uniform_int(1, 80));
    const int k_stride = dim + static_cast<int>(rng.uniform_int(0, 9));
    const int32_t q_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t k_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    std::vector<int8_t> q(dim), k(static_cast<size_t>(n) * k_stride + 1);
    for (int8_t& v : q) v = rng.s8();
    for (int8_t& v : k) v = rng.s8();
    std::vector<int32_t> scores(n + 1, 0x7EADBEEF);
    ek::qs8_qk_row__ref(n, dim, q.data(), q_zp, k.data(), k_stride, k_zp, scores.data());
    for (int j = 0; j < n; ++j) {
      int64_t want = 0;
      for (int i = 0; i < dim; ++i) want += (int64_t{q[i]} - q_zp) * (int64_t{k[static_cast<size_t>(j) * k_stride + i]} - k_zp);
      ASSERT_EQ(scores[j], want) << "seed " << seed << " j=" << j;
    }
    ASSERT_EQ(scores[n], 0x7EADBEEF) << "seed " << seed << " wrote past n";
  }
}

TEST(QS8Rows, PvRowExact) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed * 0x4004);
    const int n = static_cast<int>(rng.uniform_int(0, 500));
    const int v_dim = static_cast<int>(rng.uniform_int(1, 70));
    const int v_stride = v_dim + static_cast<int>(rng.uniform_int(0, 5));
    const int32_t v_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t out_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    // Probabilities as the softmax produces them: non-negative Q15, summing to ~32768.
    std::vector<uint16_t> p(n);
    int64_t left = 32768;
    for (int j = 0; j < n; ++j) {
      const int64_t take = j == n - 1 ? left : rng.uniform_int(0, left / 2);
      p[j] = static_cast<uint16_t>(take);
      left -= take;
    }
    std::vector<int8_t> v(static_cast<size_t>(n) * v_stride + 1);
    for (int8_t& x : v) x = rng.s8();
    int32_t m = 0, s = 0;
    // s_v / (2^15 s_out) with s_out/s_v in [0.3, 3]
    ASSERT_TRUE(ek::quantize_multiplier(rng.log_uniform(1.0 / 3, 3.3) / 32768.0, &m, &s));
    std::vector<int8_t> out(v_dim + 1, kSentinel8);
    ek::qs8_pv_row__ref(n, v_dim, p.data(), v.data(), v_stride, v_zp, m, s, out_zp, out.data());
    for (int c = 0; c < v_dim; ++c) {
      int64_t acc = 0;
      for (int j = 0; j < n; ++j) acc += int64_t{p[j]} * (v[static_cast<size_t>(j) * v_stride + c] - v_zp);
      ASSERT_EQ(out[c], eatest::exact_requantize_s8(acc, m, s, out_zp)) << "seed " << seed << " c=" << c;
    }
    ASSERT_EQ(out[v_dim], kSentinel8) << "seed " << seed << " wrote past v_dim";
  }
}

}  // namespace
