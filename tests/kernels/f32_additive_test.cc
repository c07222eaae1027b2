// Every listed SIMD variant of f32_additive against the reference, within a
// derived float bound.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(F32Additive, f32_additive);

// Same bound as F32Attention with |ds| <= 2 gamma_attn_dim sum|v_w tanh| <=
// 2 gamma_attn_dim sum |v_w| (tanh itself is the same libm call).
TEST_P(F32Additive, WithinBound) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng rng(6000 + seed);
    ek::F32AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 3));
    a.kv_len = static_cast<int>(rng.uniform_int(1, 300));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim; a.kp_stride = a.attn_dim + 1; a.values_stride = a.v_dim + 2;
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandF32(rng, static_cast<size_t>(a.q_len) * a.qp_stride, 1.0);
    const auto kp = RandF32(rng, static_cast<size_t>(a.kv_len) * a.kp_stride, 1.0);
    const auto values = RandF32(rng, static_cast<size_t>(a.kv_len) * a.values_stride, 1.0);
    const auto v_w = RandF32(rng, a.attn_dim, 0.5);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data(); a.v_w = v_w.data();
    a.out_stride = a.v_dim; a.weights_stride = a.kv_len;
    std::vector<float> scratch(a.kv_len);
    a.scratch = scratch.data();
    std::vector<float> want(static_cast<size_t>(a.q_len) * a.v_dim), got(want.size());
    std::vector<float> want_w(static_cast<size_t>(a.q_len) * a.kv_len), got_w(want_w.size());
    a.out = want.data(); a.weights = want_w.data();
    Ref().f32_additive(a);
    double vw = 0.0;
    for (float x : v_w) vw += std::fabs(x);
    const double ds = 2.0 * gamma_f32(a.attn_dim) * vw;
    for (const auto& uk : variants) {
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      const int limit = std::min(a.kv_len, a.kv_valid_len);
      const double rel = std::expm1(2.0 * ds) + 2.0 * gamma_f32(limit + 8);
      for (int r = 0; r < a.q_len; ++r) {
        for (int c = 0; c < a.v_dim; ++c) {
          double vmax = 0.0;
          for (int j = 0; j < limit; ++j) vmax = std::max(vmax, std::fabs(static_cast<double>(values[j * a.values_stride + c])));
          const size_t i = static_cast<size_t>(r) * a.v_dim + c;
          ASSERT_NEAR(got[i], want[i], (rel + 2.0 * gamma_f32(limit)) * vmax + 1e-30)
              << uk.name << " out index " << i << " seed " << seed;
        }
        for (int j = 0; j < a.kv_len; ++j) {
          const size_t i = static_cast<size_t>(r) * a.kv_len + j;
          ASSERT_NEAR(got_w[i], want_w[i], rel * want_w[i] + 1e-37) << uk.name << " weight index " << i << " seed " << seed;
        }
      }
    }
  }
}

}  // namespace
