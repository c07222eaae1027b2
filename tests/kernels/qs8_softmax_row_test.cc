// Every listed SIMD variant of qs8_softmax_row (with its path's exp row)
// against the reference: every exponent, the longest rows, extremes.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

std::vector<SoftmaxRowVariant> SoftmaxRows() {
  std::vector<SoftmaxRowVariant> rows;
  for (const auto& k : Variants(ek::microkernel_lists().qs8_softmax_row)) {
    rows.push_back({k.path, k.fn, ek::kernel_table(k.path)->qs8_softmax_exp_row, k.name});
  }
  return rows;
}

class Qs8SoftmaxRow : public ::testing::TestWithParam<SoftmaxRowVariant> {};
INSTANTIATE_TEST_SUITE_P(Simd, Qs8SoftmaxRow, ::testing::ValuesIn(SoftmaxRows()), VariantName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Qs8SoftmaxRow);

TEST_P(Qs8SoftmaxRow, AllExponents) {
  const auto variants = Only(GetParam());
  constexpr int kRow = 4096;
  std::vector<int32_t> s(kRow);
  std::vector<uint16_t> e(kRow), p(kRow), p_ref(kRow);
  for (const auto& v : variants) {
    for (int32_t z0 = 1; z0 < 0x10000 + kRow; z0 += kRow - 1) {
      s[0] = 0;
      for (int j = 1; j < kRow; ++j) s[j] = -(z0 + j - 1);
      const uint32_t sum = v.exp_fn(kRow, s.data(), 1 << 30, 5, e.data());
      uint32_t want_sum = 0;
      for (int j = 0; j < kRow; ++j) {
        const uint32_t z = j == 0 ? 0u : static_cast<uint32_t>(z0 + j - 1);
        const int32_t want = ek::exp2_neg_q15(z < ek::kExpZeroQ12 ? z : ek::kExpZeroQ12);
        want_sum += static_cast<uint32_t>(want);
        ASSERT_EQ(e[j], want) << ek::kernel_path_name(v.path) << " z " << z;
      }
      ASSERT_EQ(sum, want_sum) << ek::kernel_path_name(v.path) << " z0 " << z0;
      v.fn(kRow, s.data(), 1 << 30, 5, p.data());
      ek::qs8_softmax_row__ref(kRow, s.data(), 1 << 30, 5, p_ref.data());
      for (int j = 0; j < kRow; ++j) ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j;
    }
  }
}

// Every row length 1..100 (vector bodies and every tail) through each path's
// exp row against the reference's, with random scores and multipliers.
TEST_P(Qs8SoftmaxRow, LongestRows) {
  const auto variants = Only(GetParam());
  constexpr int kRow = 65535;
  Rng rng(7777);
  std::vector<int32_t> s(kRow), s_ref;
  std::vector<uint16_t> p(kRow), p_ref(kRow);
  for (const auto& v : variants) {
    for (int spread : {0, 3, 40000}) {
      for (auto& x : s) x = 1000 - static_cast<int32_t>(rng.uniform_int(0, spread));
      s_ref = s;
      v.fn(kRow, s.data(), 1 << 30, 1, p.data());
      ek::qs8_softmax_row__ref(kRow, s_ref.data(), 1 << 30, 1, p_ref.data());
      for (int j = 0; j < kRow; ++j) {
        ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " spread " << spread;
      }
    }
  }
}

// Extreme scores (INT32_MIN / INT32_MAX: the saturated difference) and
// extreme multipliers, odd lengths (vector body + scalar tail).
TEST_P(Qs8SoftmaxRow, Extremes) {
  const auto variants = Only(GetParam());
  for (const auto& v : variants) {
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Rng rng(7000 + seed);
      const int n = static_cast<int>(rng.uniform_int(1, 70));
      std::vector<int32_t> s(n), s_ref;
      for (auto& x : s) {
        switch (rng.uniform_int(0, 3)) {
          case 0: x = INT32_MIN; break;
          case 1: x = INT32_MAX; break;
          default: x = static_cast<int32_t>(rng.uniform_int(INT32_MIN, INT32_MAX));
        }
      }
      s_ref = s;
      const int32_t mult = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      const int32_t shift = static_cast<int32_t>(rng.uniform_int(ek::kMinShift, ek::kMaxShift));
      std::vector<uint16_t> p(n), p_ref(n);
      v.fn(n, s.data(), mult, shift, p.data());
      ek::qs8_softmax_row__ref(n, s_ref.data(), mult, shift, p_ref.data());
      for (int j = 0; j < n; ++j) {
        ASSERT_EQ(s[j], s_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " seed " << seed;
        ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " seed " << seed;
      }
    }
  }
}

}  // namespace
