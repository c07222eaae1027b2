// Every listed SIMD variant of qs8_lut (requant.h contract 6) against the
// reference, byte for byte, with canaries.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8Lut, qs8_lut);

TEST_P(Qs8Lut, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(9900 + seed);
    const int n = static_cast<int>(rng.uniform_int(0, 2) ? rng.uniform_int(1, 70) : rng.uniform_int(1, 4096));
    const int rows = static_cast<int>(n <= 70 ? rng.uniform_int(1, 1024) : rng.uniform_int(1, 8));
    const int x_stride = n + static_cast<int>(rng.uniform_int(0, 5));
    const int y_stride = n + static_cast<int>(rng.uniform_int(1, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + n);
    std::vector<int8_t> table(256);
    for (auto& t : table) t = rng.s8();
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, kCanary);
    ek::qs8_lut__ref(rows, n, x.data(), x_stride, table.data(), want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), kCanary);
      uk.fn(rows, n, x.data(), x_stride, table.data(), got.data(), y_stride);
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " row " << j / y_stride << " element " << j % y_stride
                                   << " seed " << seed << " n " << n;
      }
      std::vector<int8_t> inplace = x;
      uk.fn(rows, n, inplace.data(), x_stride, table.data(), inplace.data(), x_stride);
      for (int r = 0; r < rows; ++r) {
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(inplace[static_cast<size_t>(r) * x_stride + i], want[static_cast<size_t>(r) * y_stride + i])
              << uk.name << " in place, row " << r << " element " << i << " seed " << seed;
        }
      }
    }
  }
}

// Every table entry reached, each in every position of a vector.
TEST_P(Qs8Lut, EveryIndex) {
  const auto variants = Only(GetParam());
  Rng rng(9990);
  std::vector<int8_t> table(256);
  for (auto& t : table) t = rng.s8();
  std::vector<int8_t> x(256 * 67);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 7 + i / 256) & 0xFF);
  const int n = static_cast<int>(x.size());
  std::vector<int8_t> want(x.size());
  ek::qs8_lut__ref(1, n, x.data(), n, table.data(), want.data(), n);
  for (const auto& uk : variants) {
    std::vector<int8_t> got(x.size());
    uk.fn(1, n, x.data(), n, table.data(), got.data(), n);
    for (size_t j = 0; j < got.size(); ++j) ASSERT_EQ(got[j], want[j]) << uk.name << " element " << j << " x " << int{x[j]};
  }
}

}  // namespace
