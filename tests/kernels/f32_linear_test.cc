// Every listed SIMD variant of f32_linear against the reference, within a
// derived float bound.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(F32Linear, f32_linear);

// Float tolerance: both results are float32 sums of the same in+1 terms in
// different orders, each within gamma_(in+1) * sum|terms| of the exact value
// (Higham 3.1), so they differ by at most 2 gamma_(in+1) sum|terms|.
TEST_P(F32Linear, WithinBound) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(2000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 4));
    const int out = static_cast<int>(rng.uniform_int(1, 70));
    const int in = rng.uniform_int(0, 1) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 400));
    const int w_stride = in + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandF32(rng, static_cast<size_t>(rows) * in, 1.0);
    const auto w = RandF32(rng, static_cast<size_t>(out) * w_stride, 0.2);
    const bool has_bias = rng.uniform_int(0, 1) != 0;
    const auto bias = RandF32(rng, out, 1.0);
    std::vector<float> want(static_cast<size_t>(rows) * out), got(want.size());
    Ref().f32_linear(rows, out, in, x.data(), in, w.data(), w_stride,
                     has_bias ? bias.data() : nullptr, want.data(), out);
    for (const auto& uk : variants) {
      uk.fn(rows, out, in, x.data(), in, w.data(), w_stride,
                                      has_bias ? bias.data() : nullptr, got.data(), out);
      for (int m = 0; m < rows; ++m) {
        for (int n = 0; n < out; ++n) {
          double mag = has_bias ? std::fabs(bias[n]) : 0.0;
          for (int k = 0; k < in; ++k) mag += std::fabs(static_cast<double>(w[n * w_stride + k]) * x[m * in + k]);
          const double tol = 2.0 * gamma_f32(in + 1) * mag + 1e-30;
          const size_t i = static_cast<size_t>(m) * out + n;
          ASSERT_NEAR(got[i], want[i], tol) << uk.name << " index " << i << " seed " << seed;
        }
      }
    }
  }
}

}  // namespace
