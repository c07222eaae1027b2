// Every listed SIMD variant of qs8_softmax_exp_row (steps 1-4 of the integer
// softmax) against the reference: every row length, every shift at the
// edges of each step.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

std::vector<SoftmaxRowVariant> ExpRows() {
  std::vector<SoftmaxRowVariant> rows;
  for (const auto& k : Variants(ek::microkernel_lists().qs8_softmax_exp_row)) {
    rows.push_back({k.path, nullptr, k.fn, k.name});
  }
  return rows;
}

class Qs8SoftmaxExpRow : public ::testing::TestWithParam<SoftmaxRowVariant> {};
INSTANTIATE_TEST_SUITE_P(Simd, Qs8SoftmaxExpRow, ::testing::ValuesIn(ExpRows()), VariantName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Qs8SoftmaxExpRow);

TEST_P(Qs8SoftmaxExpRow, EveryLength) {
  const auto variants = Only(GetParam());
  Rng rng(0xE4B);
  for (const auto& v : variants) {
    for (int n = 1; n <= 100; ++n) {
      std::vector<int32_t> s(n);
      for (auto& x : s) x = static_cast<int32_t>(rng.uniform_int(-200000, 200000));
      const int32_t mult = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      const int32_t shift = static_cast<int32_t>(rng.uniform_int(-8, 8));
      std::vector<uint16_t> e(n + 8, 0x5A5A), e_ref(n + 8, 0x5A5A);
      const uint32_t sum = v.exp_fn(n, s.data(), mult, shift, e.data());
      const uint32_t sum_ref = ek::qs8_softmax_exp_row__ref(n, s.data(), mult, shift, e_ref.data());
      ASSERT_EQ(sum, sum_ref) << ek::kernel_path_name(v.path) << " n " << n;
      for (int j = 0; j < n + 8; ++j) ASSERT_EQ(e[j], e_ref[j]) << ek::kernel_path_name(v.path) << " n " << n << " j " << j;
    }
  }
}

// Every exponent shift (-31..30) and multipliers from 1 to INT32_MAX, with
// differences d = max - s at the edges of each step of the exponent: the
// pre-shift's floor, the limit D, z = 0xFFFF, and (post-shift r < 16) the
// 32-bit overflow of d' M 2^(16 - r). The NEON row picks one of four loops
// from (p, r) (softmax_neon.h), so each loop meets its own edges here; the
// row length 83 covers the 16- and 8-lane bodies and the scalar tail.
TEST_P(Qs8SoftmaxExpRow, EveryShiftAtEdges) {
  const auto variants = Only(GetParam());
  Rng rng(0x5EED);
  constexpr int kRow = 83;
  for (const auto& v : variants) {
    for (int32_t shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
      for (int32_t mult : {1, 1 << 15, (1 << 30) + 12345, INT32_MAX,
                           static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX))}) {
        const ek::SoftmaxExpParams x = ek::softmax_exp_params(mult, shift);
        const uint64_t step = uint64_t{1} << x.pre_shift;
        std::vector<uint64_t> edges = {0, 1, 2, step - 1, step, step + 1};
        const uint64_t dlim = uint64_t{x.limit} << x.pre_shift;  // d >> p reaches D
        const uint64_t dz = ((uint64_t{ek::kExpZeroQ12} << x.post_shift) / x.multiplier) << x.pre_shift;
        const uint64_t dov = ((uint64_t{1} << (16 + x.post_shift)) / x.multiplier) << x.pre_shift;
        for (uint64_t c : {dlim, dz, dov}) {
          for (int64_t k = -2; k <= 2; ++k) {
            edges.push_back(c + static_cast<uint64_t>(k * static_cast<int64_t>(step)));
            edges.push_back(c + static_cast<uint64_t>(k));
          }
        }
        std::vector<int32_t> s(kRow);
        s[0] = INT32_MAX;
        for (int j = 1; j < kRow; ++j) {
          uint64_t d = j - 1 < static_cast<int>(edges.size()) ? edges[j - 1] : rng.uniform_int(0, UINT32_MAX);
          if (d > UINT32_MAX) d = UINT32_MAX;
          s[j] = static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) - static_cast<uint32_t>(d));
        }
        std::vector<uint16_t> e(kRow), e_ref(kRow);
        const uint32_t sum = v.exp_fn(kRow, s.data(), mult, shift, e.data());
        const uint32_t sum_ref = ek::qs8_softmax_exp_row__ref(kRow, s.data(), mult, shift, e_ref.data());
        for (int j = 0; j < kRow; ++j) {
          ASSERT_EQ(e[j], e_ref[j]) << ek::kernel_path_name(v.path) << " shift " << shift << " mult " << mult
                                    << " j " << j << " s " << s[j];
        }
        ASSERT_EQ(sum, sum_ref) << ek::kernel_path_name(v.path) << " shift " << shift << " mult " << mult;
      }
    }
  }
}

// The longest rows (65535 keys, the format's limit): row sums up to
// 65535 * 32767, i.e. the normalizer's largest shift (31), with all-equal
// scores and with scores a few steps below the maximum.

}  // namespace
