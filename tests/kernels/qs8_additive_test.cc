// Every listed SIMD variant of qs8_additive against the reference, bit for
// bit (and the reference itself in ZeroCoverageWeightIsPlain).
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8Additive, qs8_additive);

class Qs8AdditiveAndRef : public ::testing::TestWithParam<ek::Microkernel<ek::Qs8AdditiveFn>> {};
// The variants and the reference (listed first).
std::vector<ek::Microkernel<ek::Qs8AdditiveFn>> AdditiveAndRef() {
  auto all = Variants(ek::microkernel_lists().qs8_additive);
  all.push_back(ek::microkernel_lists().qs8_additive[0]);
  return all;
}
INSTANTIATE_TEST_SUITE_P(Simd, Qs8AdditiveAndRef, ::testing::ValuesIn(AdditiveAndRef()), VariantName());

// -------------------------------------------------------------- additive ----

TEST_P(Qs8Additive, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(5000 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 4));
    a.kv_len = SampleKvLen(rng);
    if (a.kv_len > 512 && rng.uniform_int(0, 1)) a.kv_len /= 4;
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.kp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.values_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.qp_zp = SampleZp(rng);
    a.kp_zp = SampleZp(rng);
    a.values_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    a.pre_zp = SampleZp(rng);
    Multiplier(rng.log_uniform(1.0 / 64, 4.0), &a.pre_mult, &a.pre_shift);
    if (rng.uniform_int(0, 15) == 0) { a.pre_mult = INT32_MAX; a.pre_shift = ek::kMaxShift; }
    Multiplier(rng.log_uniform(1e-3, 1e4) / (std::sqrt(a.attn_dim) * 127.0 * 127.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandS8(rng, static_cast<size_t>(a.q_len) * a.qp_stride);
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.kp_stride);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.values_stride);
    const auto table = RandS8(rng, 256);
    const auto v_w = RandS8(rng, a.attn_dim);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.v_dim, 0x5A), got;
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.kv_len, 0xBEEF), got_w;
    a.out = want.data(); a.weights = want_w.data();
    Ref().qs8_additive(a);
    for (const auto& uk : variants) {
      got.assign(want.size(), 0x5A);
      got_w.assign(want_w.size(), 0xBEEF);
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " out index " << i << " seed " << seed
                                   << " kv_len " << a.kv_len << " attn_dim " << a.attn_dim << " v_dim " << a.v_dim;
      }
      for (size_t i = 0; i < got_w.size(); ++i) {
        ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
      }
    }
  }
}

// Coverage layers: the coverage term on every path (the x86 vector loop,
// the tails, Arm's fallback to the reference), ragged shapes, coverage
// values up to the saturation point, and the updated coverage vector itself.
TEST_P(Qs8Additive, CoverageMatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(5500 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 5));
    a.kv_len = static_cast<int>(rng.uniform_int(1, 80));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.kp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.values_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.qp_zp = SampleZp(rng);
    a.kp_zp = SampleZp(rng);
    a.values_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    a.pre_zp = SampleZp(rng);
    Multiplier(rng.log_uniform(1.0 / 64, 4.0), &a.pre_mult, &a.pre_shift);
    Multiplier(rng.log_uniform(1e-3, 1e4) / (std::sqrt(a.attn_dim) * 127.0 * 127.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    // The converter's s_wc / (32768 s_h): from tiny up to the load limit 1.
    Multiplier(rng.log_uniform(1e-9, 0.99), &a.cov_mult, &a.cov_shift);
    if (rng.uniform_int(0, 15) == 0) { a.cov_mult = INT32_MAX; a.cov_shift = 0; }
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandS8(rng, static_cast<size_t>(a.q_len) * a.qp_stride);
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.kp_stride);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.values_stride);
    const auto table = RandS8(rng, 256);
    const auto v_w = RandS8(rng, a.attn_dim);
    const auto cov_w = RandS8(rng, a.attn_dim);
    std::vector<int32_t> cov0(a.kv_len);
    const int cov_kind = static_cast<int>(rng.uniform_int(0, 3));
    for (int32_t& c : cov0) {
      switch (cov_kind) {
        case 0: c = 0; break;                                                  // first step
        case 1: c = static_cast<int32_t>(rng.uniform_int(0, 4 * 32768)); break;
        case 2: c = static_cast<int32_t>(rng.uniform_int(0, ek::kCoverageMaxQ15)); break;
        default: c = ek::kCoverageMaxQ15 - static_cast<int32_t>(rng.uniform_int(0, 40000)); break;
      }
    }
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data(); a.cov_w = cov_w.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.v_dim, 0x5A), got;
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.kv_len, 0xBEEF), got_w;
    std::vector<int32_t> want_c = cov0, got_c;
    a.out = want.data(); a.weights = want_w.data(); a.coverage = want_c.data();
    Ref().qs8_additive(a);
    // The coverage after the call is the start plus every row's weights
    // (saturated), computed here from the weights the kernel returned.
    for (int j = 0; j < a.kv_len; ++j) {
      int64_t c = cov0[j];
      for (int r = 0; r < a.q_len; ++r) {
        c = std::min<int64_t>(c + want_w[static_cast<size_t>(r) * a.kv_len + j], ek::kCoverageMaxQ15);
      }
      ASSERT_EQ(want_c[j], c) << "ref coverage " << j << " seed " << seed;
    }
    for (const auto& uk : variants) {
      got.assign(want.size(), 0x5A);
      got_w.assign(want_w.size(), 0xBEEF);
      got_c = cov0;
      a.out = got.data(); a.weights = got_w.data(); a.coverage = got_c.data();
      uk.fn(a);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " out index " << i << " seed " << seed
                                   << " kv_len " << a.kv_len << " attn_dim " << a.attn_dim << " v_dim " << a.v_dim;
      }
      for (size_t i = 0; i < got_w.size(); ++i) {
        ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
      }
      ASSERT_EQ(got_c, want_c) << uk.name << " coverage, seed " << seed;
    }
  }
}

// A coverage layer whose w_c is zero gives the plain kernel's integers (the
// term is requantize(0) = 0), on every path; with w_c != 0 and c != 0 it
// must differ somewhere (the term is not silently dropped).
TEST_P(Qs8AdditiveAndRef, ZeroCoverageWeightIsPlain) {
  const auto all = Only(GetParam());  // a variant, or the reference (Qs8AdditiveAndRef)
  int differed = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Rng rng(5800 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = 1;
    a.kv_len = static_cast<int>(rng.uniform_int(2, 40));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.kp_stride = a.attn_dim;
    a.values_stride = a.v_dim;
    a.pre_zp = 0;
    Multiplier(0.25, &a.pre_mult, &a.pre_shift);
    Multiplier(1.0 / 64, &a.score_mult, &a.score_shift);
    Multiplier(1.0 / 32768, &a.pv_mult, &a.pv_shift);
    Multiplier(1.0 / 4096, &a.cov_mult, &a.cov_shift);
    a.kv_valid_len = a.kv_len;
    const auto qp = RandS8(rng, static_cast<size_t>(a.attn_dim));
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.attn_dim);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.v_dim);
    std::vector<int8_t> table(256);
    for (int i = 0; i < 256; ++i) table[i] = static_cast<int8_t>(std::lround(127.0 * std::tanh((i - 128) / 32.0)));
    const auto v_w = RandS8(rng, a.attn_dim);
    std::vector<int8_t> cov_w(a.attn_dim, 0);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data(); a.cov_w = cov_w.data();
    a.out_stride = a.v_dim; a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data(); a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> plain(a.v_dim), out(a.v_dim);
    std::vector<uint16_t> plain_w(a.kv_len), w(a.kv_len);
    a.out = plain.data(); a.weights = plain_w.data();
    Ref().qs8_additive(a);  // no coverage
    std::vector<int32_t> cov(a.kv_len);
    for (int j = 0; j < a.kv_len; ++j) cov[j] = static_cast<int32_t>(rng.uniform_int(0, 8 * 32768));
    for (const auto& uk : all) {
      std::vector<int32_t> c = cov;
      a.coverage = c.data(); a.out = out.data(); a.weights = w.data();
      a.cov_w = cov_w.data();
      uk.fn(a);
      ASSERT_EQ(out, plain) << uk.name << " seed " << seed;
      ASSERT_EQ(w, plain_w) << uk.name << " seed " << seed;
      a.coverage = nullptr;
    }
    std::vector<int8_t> big_w(a.attn_dim, 127);
    std::vector<int32_t> c = cov;
    a.cov_w = big_w.data(); a.coverage = c.data(); a.out = out.data(); a.weights = w.data();
    Ref().qs8_additive(a);
    if (w != plain_w) ++differed;
    a.coverage = nullptr;
  }
  EXPECT_GT(differed, 0);
}

}  // namespace
