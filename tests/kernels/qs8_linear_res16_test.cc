// Every listed SIMD variant of qs8_linear_res16 (requant.h contract 5c, the
// 16-bit residual stream) against the reference, bit for bit, with canaries.
#include "edgeattn/kernels/task_split.h"
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::Rng;

EA_VARIANT_SUITE(Qs8LinearRes16, qs8_linear_res16);

constexpr int16_t kCanary16 = 0x5A5A;

// Ragged shapes as Qs8LinearRes.MatchesRefExactly (rows 1..20, outputs
// 1..150 and past 256, inputs 1..600, strides with padding), n over 1..13,
// A over [0, 2^13] with its ends, projection terms from small to past the
// 2^29 clamp and past int32 (large biases, any multiplier and shift: NEON's
// saturated requantization lanes).
TEST_P(Qs8LinearRes16, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  const int kWideOuts[] = {256, 257, 300, 529};
  const int32_t kEdgeA[] = {0, 1, (1 << 13) - 1, ek::kResidual16MaxMultiplier};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(37700 + seed);
    const bool wide = seed % 8 == 7;
    // One seed in 8 takes 21..80 rows (the AMX passes of 32 and 16 rows).
    const int rows = static_cast<int>(rng.uniform_int(1, wide ? 9 : 20) + (seed % 8 == 3 ? 60 : 0));
    const int out = wide ? kWideOuts[seed / 8 % 4]
                         : (rng.uniform_int(0, 2) ? static_cast<int>(rng.uniform_int(1, 150)) : kDims[rng.uniform_int(0, 10)]);
    const int in = rng.uniform_int(0, 2) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const int r_stride = out + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto res = RandS16(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::Residual16Term term = {};
    term.shift = static_cast<int32_t>(seed % 5 == 0 ? 13 : rng.uniform_int(1, ek::kResidual16MaxShift));
    term.mult = seed % 4 == 1 ? kEdgeA[seed / 4 % 4]
                              : static_cast<int32_t>(std::min<double>(
                                    ek::kResidual16MaxMultiplier,
                                    std::lround(rng.uniform(0.25, 2.0) * std::ldexp(1.0, term.shift))));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    const int32_t bias_mag = rng.uniform_int(0, 3) == 0 ? (1 << 30) : (1 << 20);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) {
      if (rng.uniform_int(0, 9) == 0) {
        mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
        shift[n] = static_cast<int32_t>(rng.uniform_int(ek::kMinShift, ek::kMaxShift));
      } else {  // the projection's r_c 2^n for an int16 output
        Multiplier(rng.log_uniform(1e-4, 10.0) * std::ldexp(1.0, term.shift), &mult[n], &shift[n]);
      }
    }
    const ek::QS16Residual r = {res.data(), r_stride, term};
    std::vector<int16_t> want(static_cast<size_t>(rows) * y_stride, kCanary16);
    Ref().qs8_linear_res16(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                           per_channel, r, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int16_t> got(want.size(), kCanary16);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, r,
            got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows
                                   << " out " << out << " in " << in << " n " << term.shift << " A " << term.mult;
      }
    }
  }
}

// Residual row stride 0 (contract 5c-out: a standalone mha layer's int16
// output reads one zero row for every output row; any row works the same):
// every variant equals the reference, the reference equals itself on the
// row copied to every row at a dense stride, and the row is never written.
// Ragged shapes (rows up to 20: Helium's sixes and pairs with an odd last
// row, the DSP's threes), sums saturating at both int16 ends.
TEST_P(Qs8LinearRes16, ResidualStrideZero) {
  const auto variants = Only(GetParam());
  int at_min = 0, at_max = 0;  // outputs at -32768 / 32767 (the cases reach both ends)
  for (uint64_t seed = 0; seed < 120; ++seed) {
    Rng rng(37900 + seed);
    const bool out_row = seed % 2 == 0;  // 5c-out itself: a zero row, A = 0, n = 13
    const int rows = static_cast<int>(rng.uniform_int(1, 20));
    const int out = rng.uniform_int(0, 2) ? static_cast<int>(rng.uniform_int(1, 150)) : kDims[rng.uniform_int(0, 10)];
    const int in = rng.uniform_int(0, 2) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const std::vector<int16_t> row = out_row ? std::vector<int16_t>(static_cast<size_t>(out), 0) : RandS16(rng, out);
    std::vector<int16_t> dense(static_cast<size_t>(rows) * out);
    for (int m = 0; m < rows; ++m) std::copy(row.begin(), row.end(), dense.begin() + static_cast<ptrdiff_t>(m) * out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::Residual16Term term = {};
    term.shift = out_row ? ek::kResidual5cOutShift : static_cast<int32_t>(rng.uniform_int(1, ek::kResidual16MaxShift));
    term.mult = out_row ? 0 : static_cast<int32_t>(rng.uniform_int(0, ek::kResidual16MaxMultiplier));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    // Half the seeds: biases far past an int16 step 2^n, so outputs pile up at -32768 and 32767.
    const int32_t bias_mag = seed % 4 < 2 ? (1 << 30) : (1 << 18);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) Multiplier(rng.log_uniform(1e-3, 40.0) * std::ldexp(1.0, term.shift), &mult[n], &shift[n]);
    const ek::QS16Residual zero_stride = {row.data(), 0, term}, full = {dense.data(), out, term};
    std::vector<int16_t> want(static_cast<size_t>(rows) * y_stride, kCanary16), ref(want);
    Ref().qs8_linear_res16(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                           per_channel, full, want.data(), y_stride);
    Ref().qs8_linear_res16(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                           per_channel, zero_stride, ref.data(), y_stride);
    ASSERT_EQ(ref, want) << "reference, seed " << seed;
    at_min += static_cast<int>(std::count(want.begin(), want.end(), int16_t{-32768}));
    at_max += static_cast<int>(std::count(want.begin(), want.end(), int16_t{32767}));
    for (const auto& uk : variants) {
      std::vector<int16_t> got(want.size(), kCanary16);
      const std::vector<int16_t> before = row;
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel,
            zero_stride, got.data(), y_stride);
      ASSERT_EQ(row, before) << uk.name << " wrote the residual row, seed " << seed;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows << " out "
                                   << out << " in " << in << " n " << term.shift << " A " << term.mult;
      }
    }
  }
  EXPECT_GT(at_min, 0);
  EXPECT_GT(at_max, 0);
}

// Contract 5c-out saturates at both int16 ends (a case worked by hand).
TEST(Qs8LinearRes16Ref, StrideZeroCasesSaturate) {
  // One 5c-out case worked by hand: acc = bias (no inputs past zero weights),
  // y = (requantize(bias, M, s) + 2^12) >> 13 with M 2^(s-31) = 1: bias 2^29
  // gives 2^16 > 32767, -2^29 gives -2^16 < -32768.
  const int8_t x[4] = {0, 0, 0, 0};
  std::vector<int8_t> w(static_cast<size_t>(ek::kLinearChannelBlock) * 4, 0);
  const int32_t bias[2] = {1 << 29, -(1 << 29)}, mult[1] = {1 << 30}, shift[1] = {1};
  const int16_t zero[2] = {0, 0};
  const ek::QS16Residual r = {zero, 0, {0, ek::kResidual5cOutShift}};
  int16_t y[2] = {0, 0};
  Ref().qs8_linear_res16(1, 2, 4, x, 4, w.data(), bias, mult, shift, 0, r, y, 2);
  EXPECT_EQ(y[0], 32767);
  EXPECT_EQ(y[1], -32768);
}

}  // namespace
