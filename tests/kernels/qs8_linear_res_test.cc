// Every listed SIMD variant of qs8_linear_res (requant.h contract 5b)
// against the reference, bit for bit.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8LinearRes, qs8_linear_res);

// qs8_linear_res (contract 5b): the same sums as qs8_linear, with the
// residual term added before the one rounding. Shapes as in
// Qs8LinearMatchesRefExactly and past 256 outputs; n over 1..16, A over its
// whole range, residual rows with their own stride, and biases that drive
// some sums into the +-2^26 clamp and the int8 ends.
TEST_P(Qs8LinearRes, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  const int kWideOuts[] = {256, 257, 300, 529};
  for (uint64_t seed = 0; seed < 160; ++seed) {
    Rng rng(13000 + seed);
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
    const auto res = RandS8(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::ResidualTerm term = {};
    term.shift = static_cast<int32_t>(rng.uniform_int(1, ek::kResidualMaxShift));
    term.mult = rng.uniform_int(0, 9) == 0 ? static_cast<int32_t>(rng.uniform_int(0, ek::kResidualMaxMultiplier))
                                           : static_cast<int32_t>(std::min<double>(
                                                 ek::kResidualMaxMultiplier,
                                                 std::lround(rng.uniform(0.3, 3.0) * std::ldexp(1.0, term.shift))));
    term.a_zp = SampleZp(rng);
    term.y_zp = SampleZp(rng);
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    const int32_t bias_mag = rng.uniform_int(0, 3) == 0 ? (1 << 28) : (1 << 20);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) {
      if (rng.uniform_int(0, 19) == 0) {
        mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
        shift[n] = rng.uniform_int(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else {  // the projection's r_c 2^n
        Multiplier(rng.log_uniform(1e-6, 1e-1) * std::ldexp(1.0, term.shift), &mult[n], &shift[n]);
      }
    }
    const ek::QS8Residual r = {res.data(), r_stride, term};
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear_res(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                         per_channel, r, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, r,
            got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows
                                   << " out " << out << " in " << in << " n " << term.shift << " zp_a "
                                   << term.a_zp << " zp_y " << term.y_zp;
      }
    }
  }
}

// The block's usual case, n = 16 with every channel's s >= 0, which the
// dot-product path runs with SQRDMLAH and the term's zero points (OutRes16 in
// isa/neondot/linear_rq_sdot.h): multipliers around 2^16 and at the edges (0, 2^16, 2^20 - 1,
// many trailing zeros), s up to kMaxShift (x << s saturates), large biases,
// zero points over int8 and every pair of its ends.
TEST_P(Qs8LinearRes, Shift16MatchesRefExactly) {
  const auto variants = Only(GetParam());
  const int32_t kEdgeMults[] = {0, 1, 1 << 16, (1 << 16) + (1 << 15), 3 << 17, ek::kResidualMaxMultiplier, 1 << 19};
  const int32_t kEdgeZps[4][2] = {{-128, -128}, {-128, 127}, {127, -128}, {127, 127}};
  for (uint64_t seed = 0; seed < 120; ++seed) {
    Rng rng(17000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 16));
    const int out = rng.uniform_int(0, 1) ? kDims[rng.uniform_int(0, 10)] : static_cast<int>(rng.uniform_int(1, 300));
    const int in = rng.uniform_int(0, 1) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    const int r_stride = out + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows) * in);
    const auto res = RandS8(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::ResidualTerm term = {};
    term.shift = ek::kResidualMaxShift;
    term.mult = seed % 4 == 3 ? kEdgeMults[seed / 4 % 7]
                              : static_cast<int32_t>(std::lround(rng.uniform(0.3, 3.0) * std::ldexp(1.0, 16)));
    term.a_zp = SampleZp(rng);
    term.y_zp = SampleZp(rng);
    if (seed % 8 == 5) {
      term.a_zp = kEdgeZps[seed / 8 % 4][0];
      term.y_zp = kEdgeZps[seed / 8 % 4][1];
    }
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    const int32_t bias_mag = rng.uniform_int(0, 3) == 0 ? (1 << 28) : (1 << 16);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) {
      mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      shift[n] = rng.uniform_int(0, 15) == 0 ? ek::kMaxShift : static_cast<int32_t>(rng.uniform_int(0, 10));
    }
    const ek::QS8Residual r = {res.data(), r_stride, term};
    std::vector<int8_t> want(static_cast<size_t>(rows) * out, 0x5A);
    Ref().qs8_linear_res(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(), per_channel,
                         r, want.data(), out);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(), per_channel, r, got.data(),
            out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows << " out "
                                   << out << " in " << in << " A " << term.mult << " zp_a " << term.a_zp
                                   << " zp_y " << term.y_zp;
      }
    }
  }
}

}  // namespace
