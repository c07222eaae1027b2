// Every listed SIMD variant of f32_attention against the reference, within
// a derived float bound.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(F32Attention, f32_attention);

// Float tolerance. Scores differ only by summation order: |ds| <= 2 gamma_d
// sum|q k| |scale| (per key; ds_max over the row). Softmax of perturbed
// scores: each weight within exp(2 ds_max) relative, plus rounding of the
// normalization (gamma_(n+8), twice for the two results); the output is a
// convex combination of value rows, so |d out_c| <= rel * max_j |v_jc| plus
// the summation error 2 gamma_n sum_j p_j |v_jc| <= 2 gamma_n max_j |v_jc|.
TEST_P(F32Attention, WithinBound) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 80; ++seed) {
    Rng rng(4000 + seed);
    ek::F32AttentionArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 6));
    a.kv_len = SampleKvLen(rng);
    a.head_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.q_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.k_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.v_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.scale = static_cast<float>(rng.log_uniform(0.05, 2.0) / std::sqrt(a.head_dim));
    a.causal = rng.uniform_int(0, 1) != 0;
    a.causal_offset = a.kv_len - a.q_len + static_cast<int>(rng.uniform_int(-3, 3));
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto q = RandF32(rng, static_cast<size_t>(a.q_len) * a.q_stride, 1.0);
    const auto k = RandF32(rng, static_cast<size_t>(a.kv_len) * a.k_stride, 1.0);
    const auto v = RandF32(rng, static_cast<size_t>(a.kv_len) * a.v_stride, 1.0);
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<float> scratch(a.kv_len);
    a.scratch = scratch.data();
    std::vector<float> want(static_cast<size_t>(a.q_len) * a.v_dim), got(want.size());
    std::vector<float> want_w(static_cast<size_t>(a.q_len) * a.kv_len), got_w(want_w.size());
    a.out = want.data(); a.weights = want_w.data();
    Ref().f32_attention(a);
    for (const auto& uk : variants) {
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      for (int r = 0; r < a.q_len; ++r) {
        const int limit = ek::attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
        double ds = 0.0;
        for (int j = 0; j < limit; ++j) {
          double m = 0.0;
          for (int i = 0; i < a.head_dim; ++i) m += std::fabs(static_cast<double>(q[r * a.q_stride + i]) * k[j * a.k_stride + i]);
          ds = std::max(ds, 2.0 * gamma_f32(a.head_dim) * m * a.scale);
        }
        const double rel = std::expm1(2.0 * ds) + 2.0 * gamma_f32(limit + 8);
        for (int c = 0; c < a.v_dim; ++c) {
          double vmax = 0.0;
          for (int j = 0; j < limit; ++j) vmax = std::max(vmax, std::fabs(static_cast<double>(v[j * a.v_stride + c])));
          const double tol = (rel + 2.0 * gamma_f32(limit)) * vmax + 1e-30;
          const size_t i = static_cast<size_t>(r) * a.v_dim + c;
          ASSERT_NEAR(got[i], want[i], tol) << uk.name << " out index " << i << " seed " << seed;
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
