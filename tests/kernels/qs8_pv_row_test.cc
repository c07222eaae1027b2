// Every listed SIMD variant of qs8_pv_row against the reference on its own.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8PvRow, qs8_pv_row);

TEST_P(Qs8PvRow, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(6000 + seed);
    const int v_dim = SampleDim(rng);
    const int n = SampleKvLen(rng);
    const int v_stride = v_dim + static_cast<int>(rng.uniform_int(0, 20));
    const auto v = RandS8(rng, static_cast<size_t>(n - 1) * v_stride + v_dim);
    std::vector<int32_t> scores(n);
    for (auto& x : scores) x = static_cast<int32_t>(rng.uniform_int(-3000, 3000));
    if (rng.uniform_int(0, 3) == 0) scores[rng.uniform_int(0, n - 1)] = 1 << 24;  // p = 32767
    std::vector<uint16_t> probs(n);
    int32_t mult, shift;
    Multiplier(rng.log_uniform(1e-3, 10.0), &mult, &shift);
    ek::qs8_softmax_row__ref(n, scores.data(), mult, shift, probs.data());
    const int32_t v_zp = SampleZp(rng), out_zp = SampleZp(rng);
    int32_t pv_mult, pv_shift;
    Multiplier(rng.log_uniform(1e-6, 1e-3), &pv_mult, &pv_shift);
    std::vector<int8_t> want(v_dim + 1, 0x5A);
    Ref().qs8_pv_row(n, v_dim, probs.data(), v.data(), v_stride, v_zp, pv_mult, pv_shift, out_zp,
                     want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(n, v_dim, probs.data(), v.data(), v_stride, v_zp, pv_mult,
                                      pv_shift, out_zp, got.data());
      for (size_t c = 0; c < got.size(); ++c) {
        ASSERT_EQ(got[c], want[c]) << uk.name << " column " << c << " seed " << seed
                                   << " n " << n << " v_dim " << v_dim;
      }
    }
  }
}

}  // namespace
