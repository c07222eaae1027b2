// Every listed SIMD variant of qs8_qk_row against the reference on its own,
// so a wrong tail in one stage is named as such and not only seen through
// a whole attention.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8QkRow, qs8_qk_row);

TEST_P(Qs8QkRow, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(5000 + seed);
    const int dim = SampleDim(rng);
    const int n = SampleKvLen(rng);
    const int k_stride = dim + static_cast<int>(rng.uniform_int(0, 20));
    const auto q = RandS8(rng, static_cast<size_t>(dim));
    const auto k = RandS8(rng, static_cast<size_t>(n - 1) * k_stride + dim);  // no byte past the last key
    const int32_t q_zp = SampleZp(rng), k_zp = SampleZp(rng);
    std::vector<int32_t> want(n + 1, 0x5A5A5A5A);
    Ref().qs8_qk_row(n, dim, q.data(), q_zp, k.data(), k_stride, k_zp, want.data());
    for (const auto& uk : variants) {
      std::vector<int32_t> got(want.size(), 0x5A5A5A5A);
      uk.fn(n, dim, q.data(), q_zp, k.data(), k_stride, k_zp, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " key " << j << " seed " << seed
                                   << " n " << n << " dim " << dim;
      }
    }
  }
}

}  // namespace
