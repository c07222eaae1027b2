// Every listed SIMD variant of qs16_narrow (requant.h contract 1 on int16
// values: the 16-bit stream's input to a block's GEMMs) against the
// reference, byte for byte, with canaries past the last element.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)

EA_VARIANT_SUITE(Qs16Narrow, qs16_narrow);

// Ragged lengths, int16 values with the ends and zero mixed in, and
// multipliers and shifts over the whole range the loader accepts (both of
// the SIMD requantization forms: n = 31 - shift below and above 32).
TEST_P(Qs16Narrow, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng rng(7100 + seed);
    const size_t n = static_cast<size_t>(rng.uniform_int(0, 2) ? rng.uniform_int(1, 70) : rng.uniform_int(1, 4096));
    const auto x = RandS16(rng, n);
    const int32_t mult = static_cast<int32_t>(rng.uniform_int(int64_t{1} << 30, (int64_t{1} << 31) - 1));
    const int32_t shift = static_cast<int32_t>(rng.uniform_int(0, 1) ? rng.uniform_int(-16, 0)
                                                                     : rng.uniform_int(ek::kMinShift, ek::kMaxShift));
    const int32_t zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    std::vector<int8_t> want(n + 16, kCanary);
    ek::qs16_narrow__ref(n, x.data(), mult, shift, zp, want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(n + 16, kCanary);
      uk.fn(n, x.data(), mult, shift, zp, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " element " << j << " of " << n << " x " << (j < n ? x[j] : 0)
                                   << " mult " << mult << " shift " << shift << " zp " << zp << " seed " << seed;
      }
    }
  }
}

// Every int16 value, at the stream's usual ratio (an int8 step about 2^8
// int16 steps), at 1:1 (saturating most values) and at the shift ends.
TEST_P(Qs16Narrow, EveryInt16Value) {
  const auto variants = Only(GetParam());
  std::vector<int16_t> x(65536);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int16_t>(static_cast<int32_t>(i) - 32768);
  const int32_t cases[][3] = {{1518500250, -8, 3}, {1073741824, 1, -128}, {2147483647, ek::kMaxShift, 127},
                              {1073741824, ek::kMinShift, 0},  {1879048192, -7, -5}};
  for (const auto& c : cases) {
    std::vector<int8_t> want(x.size());
    ek::qs16_narrow__ref(x.size(), x.data(), c[0], c[1], c[2], want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(x.size());
      uk.fn(x.size(), x.data(), c[0], c[1], c[2], got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " x " << x[j] << " mult " << c[0] << " shift " << c[1];
      }
    }
  }
}

}  // namespace
