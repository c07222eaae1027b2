// Every listed SIMD variant of qs8_add16 (requant.h's add16 contract: int8
// plus the int16 residual stream, in 64 bits) against the reference,
// element for element, with canaries; in place too (y = r).
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)

EA_VARIANT_SUITE(Qs8Add16, qs8_add16);

TEST_P(Qs8Add16, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng rng(7500 + seed);
    const size_t n = static_cast<size_t>(rng.uniform_int(0, 2) ? rng.uniform_int(1, 70) : rng.uniform_int(1, 4096));
    const auto x = RandS8(rng, n);
    const auto r = RandS16(rng, n);
    const ek::QS8AddParams p = RandAddParams(rng, ek::kAdd16MaxShift);
    const int16_t canary = 0x5A5A;
    std::vector<int16_t> want(n + 16, canary);
    ek::qs8_add16__ref(n, x.data(), r.data(), p, want.data());
    for (const auto& uk : variants) {
      std::vector<int16_t> got(n + 16, canary);
      uk.fn(n, x.data(), r.data(), p, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " element " << j << " of " << n << " " << DescribeAdd(p) << " seed " << seed;
      }
      std::vector<int16_t> in_r = r;
      uk.fn(n, x.data(), in_r.data(), p, in_r.data());
      for (size_t j = 0; j < n; ++j) ASSERT_EQ(in_r[j], want[j]) << uk.name << " y = r, element " << j << " seed " << seed;
    }
  }
}

// Every int8 x against residuals at the int16 ends and across the range,
// with the largest terms: B r = (2^21 - 1) 2^15 needs the 64 bits.
TEST_P(Qs8Add16, ExtremeTerms) {
  const auto variants = Only(GetParam());
  std::vector<int8_t> x;
  std::vector<int16_t> r;
  for (int xi = -128; xi <= 127; ++xi) {
    for (int ri : {-32768, -32767, -16385, -1, 0, 1, 255, 16384, 32766, 32767}) {
      x.push_back(static_cast<int8_t>(xi));
      r.push_back(static_cast<int16_t>(ri));
    }
  }
  const ek::QS8AddParams cases[] = {{-128, ek::kAddMaxMultiplier, 0, ek::kAddMaxMultiplier, 1, 0},
                                    {127, ek::kAddMaxMultiplier, 0, ek::kAddMaxMultiplier, ek::kAdd16MaxShift, 0},
                                    {5, 1 << 20, 0, 1 << 13, 13, 0},
                                    {0, 1, 0, 0, 2, 0}};
  for (const auto& p : cases) {
    std::vector<int16_t> want(x.size());
    ek::qs8_add16__ref(x.size(), x.data(), r.data(), p, want.data());
    for (const auto& uk : variants) {
      std::vector<int16_t> got(x.size());
      uk.fn(x.size(), x.data(), r.data(), p, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " x " << int{x[j]} << " r " << r[j] << " " << DescribeAdd(p);
      }
    }
  }
}

}  // namespace
