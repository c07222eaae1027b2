// Every listed SIMD variant of qs8_linear against the reference, bit for bit.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8Linear, qs8_linear);

// ---------------------------------------------------------------- linear ----

TEST_P(Qs8Linear, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 120; ++seed) {
    Rng rng(1000 + seed);
    // Rows 1..20 reach every row tile (up to 8 rows) and its tail; one seed
    // in 8 takes 21..80 rows: the AMX passes of 32 and 16 rows and the rows
    // after them.
    const int rows = static_cast<int>(seed % 8 == 3 ? rng.uniform_int(21, 80) : rng.uniform_int(1, 20));
    const int out = rng.uniform_int(0, 2) ? static_cast<int>(rng.uniform_int(1, 150))
                                          : kDims[rng.uniform_int(0, 10)];
    const int in = rng.uniform_int(0, 2) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    // x rows sometimes tight (the last row ends at the end of the buffer).
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-(1 << 20), 1 << 20));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    for (int n = 0; n < out; ++n) {
      if (rng.uniform_int(0, 19) == 0) {  // extremes of the (M, s) range
        mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
        shift[n] = rng.uniform_int(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else {
        Multiplier(rng.log_uniform(1e-6, 1e-1), &mult[n], &shift[n]);
      }
    }
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear(rows, out, in, x.data(), x_stride, w.data(), bias.data(),
                     mult.data(), shift.data(), per_channel, y_zp, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, y_zp,
                                      got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed
                                   << " rows " << rows << " out " << out << " in " << in;
      }
    }
  }
}

// Outputs past 256 channels: the dot-product kernel lays out its biases and
// requantization vectors in chunks of 16 blocks (256 channels) and packs the
// inputs of each row tile once per chunk (in_features <= 528), so several
// chunks, a ragged last one, and inputs on both sides of 528 are needed.
TEST_P(Qs8Linear, WideOutputsMatchRefExactly) {
  const auto variants = Only(GetParam());
  const int kOuts[] = {256, 257, 300, 512, 529};
  const int kIns[] = {16, 100, 128, 527, 528, 529, 544};
  for (uint64_t seed = 0; seed < 14; ++seed) {
    Rng rng(5000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 13));
    const int out = kOuts[seed % 5];
    const int in = kIns[seed % 7];
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-(1 << 20), 1 << 20));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    for (int n = 0; n < out; ++n) Multiplier(rng.log_uniform(1e-6, 1e-1), &mult[n], &shift[n]);
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                     per_channel, y_zp, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, y_zp,
            got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows
                                   << " out " << out << " in " << in;
      }
    }
  }
}

// Every requantization shift s in -31..30 (per tensor, or per channel around
// s), with biases that put the results near and across the int8 range: the
// Arm kernels requantize in 32-bit lanes with separate forms for s >= 0 and
// s < 0 (neon_common.h, requantize32_x4), including inputs whose left shift
// saturates.
TEST_P(Qs8Linear, EveryShift) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 124; ++seed) {
    Rng rng(9000 + seed);
    const int s0 = static_cast<int>(seed % 62) - 31;
    const int rows = static_cast<int>(rng.uniform_int(1, 10));
    const int out = static_cast<int>(rng.uniform_int(1, 40));
    const int in = static_cast<int>(rng.uniform_int(1, 40));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    std::vector<int32_t> mult(out), shift(out), bias(out);
    for (int n = 0; n < out; ++n) {
      mult[n] = static_cast<int32_t>(rng.uniform_int(int64_t{1} << 30, INT32_MAX));
      const int sn = per_channel ? s0 + static_cast<int>(rng.uniform_int(-2, 2)) : s0;
      shift[n] = std::min<int32_t>(ek::kMaxShift, std::max<int32_t>(ek::kMinShift, sn));
      if (!per_channel) { mult[n] = mult[0]; shift[n] = shift[0]; }
      // acc ~ y / (M 2^(s - 31)) for a target y in [-700, 700].
      const double r = std::ldexp(static_cast<double>(mult[n]), shift[n] - 31);
      const double b = rng.uniform(-700.0, 700.0) / r;
      // Within the headroom Model::Load requires (|bias| <= 2^31 - 1 - in * 2^14),
      // so the reference's int32 sum cannot overflow.
      const double lim = 2147483647.0 - 16384.0 * in;
      bias[n] = static_cast<int32_t>(std::max(-lim, std::min(lim, b)));
    }
    // Small products where one accumulator step is already many int8 steps.
    const int mag = s0 >= -10 ? 2 : 127;
    std::vector<int8_t> x(static_cast<size_t>(rows) * in), w_rows(static_cast<size_t>(out) * in);
    for (auto& v : x) v = static_cast<int8_t>(rng.uniform_int(-mag, mag));
    for (auto& v : w_rows) v = static_cast<int8_t>(rng.uniform_int(-mag, mag));
    const auto w = PackedWithGarbagePadding(rng, out, in, w_rows);
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * out);
    Ref().qs8_linear(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(),
                     per_channel, y_zp, want.data(), out);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(),
                                      shift.data(), per_channel, y_zp, got.data(), out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed
                                   << " shift " << s0 << " per_channel " << per_channel;
      }
    }
  }
}

}  // namespace
