// Every listed SIMD variant of qs8_add (requant.h's add contract) against
// the reference, byte for byte, with canaries; in place too (y = x, y = r).
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)

EA_VARIANT_SUITE(Qs8Add, qs8_add);

TEST_P(Qs8Add, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng rng(7300 + seed);
    const size_t n = static_cast<size_t>(rng.uniform_int(0, 2) ? rng.uniform_int(1, 70) : rng.uniform_int(1, 4096));
    const auto x = RandS8(rng, n), r = RandS8(rng, n);
    const ek::QS8AddParams p = RandAddParams(rng, ek::kAddMaxShift);
    std::vector<int8_t> want(n + 32, kCanary);
    ek::qs8_add__ref(n, x.data(), r.data(), p, want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(n + 32, kCanary);
      uk.fn(n, x.data(), r.data(), p, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " element " << j << " of " << n << " " << DescribeAdd(p) << " seed " << seed;
      }
      std::vector<int8_t> in_x = x, in_r = r;
      uk.fn(n, in_x.data(), r.data(), p, in_x.data());
      uk.fn(n, x.data(), in_r.data(), p, in_r.data());
      for (size_t j = 0; j < n; ++j) {
        ASSERT_EQ(in_x[j], want[j]) << uk.name << " y = x, element " << j << " seed " << seed;
        ASSERT_EQ(in_r[j], want[j]) << uk.name << " y = r, element " << j << " seed " << seed;
      }
    }
  }
}

// All 65,536 byte pairs, at parameter sets with the terms at their largest.
TEST_P(Qs8Add, EveryPairOfBytes) {
  const auto variants = Only(GetParam());
  std::vector<int8_t> x(65536), r(65536);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<int8_t>(i & 0xFF);
    r[i] = static_cast<int8_t>(i >> 8);
  }
  const ek::QS8AddParams cases[] = {{-128, ek::kAddMaxMultiplier, 127, ek::kAddMaxMultiplier, ek::kAddMaxShift, 127},
                                    {127, ek::kAddMaxMultiplier, -128, ek::kAddMaxMultiplier, 1, -128},
                                    {3, 1 << 20, -7, 1 << 19, 16, -2},
                                    {0, 0, 0, 1, 1, 0}};
  for (const auto& p : cases) {
    std::vector<int8_t> want(x.size());
    ek::qs8_add__ref(x.size(), x.data(), r.data(), p, want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(x.size());
      uk.fn(x.size(), x.data(), r.data(), p, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " x " << int{x[j]} << " r " << int{r[j]} << " " << DescribeAdd(p);
      }
    }
  }
}

}  // namespace
