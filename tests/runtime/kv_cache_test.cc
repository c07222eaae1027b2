// Decoding with a KV cache (Interpreter::BeginSequence / Step / CachedLength)
// on the fixture's "decoder" layer (causal self-attention, E=16, 4 heads,
// max 12 positions) and "gqa" layer (4 query heads sharing 2 K/V heads, max
// 10 positions): every step's output and attention weights equal the
// matching row of one full causal run over the same tokens, on every kernel
// path (int8 bit for bit; float within the bound stated below), with or
// without a prefill; a full cache gives kLengthExceedsPlan; layers without a
// cache refuse the calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "loaded_model.h"
#include "test_models.h"

namespace ek = edgeattn::kernels;
using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::RunArgs;
using edgeattn::Status;
using eatest::AlignedBuffer;

namespace {
namespace kv_cache_test {  // tests/CMakeLists.txt: unity builds

// A fixture model loaded (eatest::Loaded) and one of its KV-cache layers.
struct Decoder : eatest::Loaded {
  int layer = -1;
  LayerInfo info = {};

  void Load(const std::string& name, const char* layer_name) {
    ASSERT_TRUE(eatest::Loaded::Load(name));
    layer = model.FindLayer(layer_name);
    ASSERT_GE(layer, 0);
    ASSERT_EQ(model.GetLayerInfo(layer, &info), Status::kOk);
  }
};

// Inputs of n tokens (int8 bytes or floats in [-2, 2]).
std::vector<uint8_t> Tokens(const LayerInfo& info, int n, uint32_t seed) {
  const size_t es = info.dtype == EA_S8 ? 1 : 4;
  std::vector<uint8_t> x(static_cast<size_t>(n) * info.query_dim * es);
  uint32_t s = seed;
  auto next = [&s] { s = s * 1664525u + 1013904223u; return s >> 8; };
  if (es == 1) {
    for (auto& b : x) b = static_cast<uint8_t>(next());
  } else {
    float* f = reinterpret_cast<float*>(x.data());
    for (size_t i = 0; i < x.size() / 4; ++i) f[i] = static_cast<float>(next() % 4001) / 1000.0f - 2.0f;
  }
  return x;
}

std::vector<ek::KernelPath> Paths() {
  std::vector<ek::KernelPath> p;
  for (int i = 0; i < static_cast<int>(ek::KernelPath::kCount); ++i) {
    if (ek::kernel_path_supported(static_cast<ek::KernelPath>(i))) p.push_back(static_cast<ek::KernelPath>(i));
  }
  return p;
}

// (model, layer)
using Case = std::tuple<std::string, std::string>;

class KvCache : public ::testing::TestWithParam<Case> {
 protected:
  void TearDown() override { ek::set_kernel_path(ek::best_kernel_path()); }
};

TEST_P(KvCache, LayerInfoReportsTheCache) {
  Decoder d;
  d.Load(std::get<0>(GetParam()), std::get<1>(GetParam()).c_str());
  if (HasFatalFailure()) return;
  const size_t es = d.info.dtype == EA_S8 ? 1 : 4;
  EXPECT_EQ(d.info.kv_cache, 1);
  // K and V, max_kv_len rows of num_kv_heads * head_dim each, each buffer
  // 16-byte aligned (the K/V heads only: grouped-query layers cache fewer).
  const int head_dim = d.info.query_dim / d.info.num_heads;
  const size_t one = static_cast<size_t>(d.info.max_kv_len) * d.info.num_kv_heads * head_dim * es;
  EXPECT_EQ(d.info.kv_cache_bytes, 2 * ((one + 15) / 16 * 16));
  EXPECT_EQ(d.interp.CachedLength(d.layer), 0);
  LayerInfo other = {};
  ASSERT_EQ(d.model.GetLayerInfo(d.model.FindLayer("causal"), &other), Status::kOk);
  EXPECT_EQ(other.kv_cache, 0);
  EXPECT_EQ(other.kv_cache_bytes, 0u);
}

// Float: each step's projections run over one row instead of n, which may
// change a SIMD linear's summation order; the bound is that of a few float
// roundings relative to the output's magnitude (outputs are O(1)).
constexpr float kF32Tolerance = 1e-4f;

// Every step of `layer` equals the matching row of a full causal run, on
// every kernel path. Output elements of es bytes, or (an mha layer's int16
// output) oes.
void CheckStepsEqualTheFullRun(const std::string& model, const char* layer) {
  Decoder d;
  d.Load(model, layer);
  if (::testing::Test::HasFatalFailure()) return;
  const bool s8 = d.info.dtype == EA_S8;
  const size_t es = s8 ? 1 : 4, we = s8 ? 2 : 4, oes = eatest::ElemBytes(d.info.output_dtype);
  const int n = d.info.max_q_len, e = d.info.query_dim, heads = d.info.num_heads;
  const auto x = Tokens(d.info, n, 7);
  for (ek::KernelPath path : Paths()) {
    ASSERT_TRUE(ek::set_kernel_path(path));
    const char* pn = ek::kernel_path_name(path);
    // The full causal run over all n tokens, with weights [heads][n][n].
    std::vector<uint8_t> full(static_cast<size_t>(n) * e * oes), full_w(static_cast<size_t>(heads) * n * n * we);
    RunArgs a = {};
    a.query = x.data();
    a.q_len = n;
    a.output = full.data();
    a.attn_weights = full_w.data();
    ASSERT_EQ(d.interp.Run(d.layer, a), Status::kOk) << d.interp.error();
    EXPECT_EQ(d.interp.CachedLength(d.layer), n);  // a full run is a prefill
    for (int prefill : {0, 1, 5}) {
      ASSERT_EQ(d.interp.BeginSequence(d.layer), Status::kOk);
      EXPECT_EQ(d.interp.CachedLength(d.layer), 0);
      if (prefill > 0) {
        std::vector<uint8_t> out(static_cast<size_t>(prefill) * e * oes);
        RunArgs p = {};
        p.query = x.data();
        p.q_len = prefill;
        p.output = out.data();
        ASSERT_EQ(d.interp.Run(d.layer, p), Status::kOk) << d.interp.error();
        ASSERT_EQ(d.interp.CachedLength(d.layer), prefill);
      }
      for (int t = prefill; t < n; ++t) {
        std::vector<uint8_t> out(static_cast<size_t>(e) * oes), w(static_cast<size_t>(heads) * (t + 1) * we);
        ASSERT_EQ(d.interp.Step(d.layer, x.data() + static_cast<size_t>(t) * e * es, out.data(), w.data()),
                  Status::kOk)
            << d.interp.error();
        ASSERT_EQ(d.interp.CachedLength(d.layer), t + 1);
        const uint8_t* want = full.data() + static_cast<size_t>(t) * e * oes;
        for (int c = 0; c < e; ++c) {
          if (s8) {
            ASSERT_EQ(std::memcmp(out.data() + c * oes, want + c * oes, oes), 0)
                << pn << " prefill " << prefill << " step " << t << " channel " << c;
          } else {
            ASSERT_NEAR(reinterpret_cast<const float*>(out.data())[c], reinterpret_cast<const float*>(want)[c],
                        kF32Tolerance)
                << pn << " prefill " << prefill << " step " << t << " channel " << c;
          }
        }
        // Weights: head h, row t of the full run, its first t + 1 keys.
        for (int h = 0; h < heads; ++h) {
          for (int j = 0; j <= t; ++j) {
            const size_t full_at = (static_cast<size_t>(h) * n + t) * n + j;
            const size_t step_at = static_cast<size_t>(h) * (t + 1) + j;
            if (s8) {
              ASSERT_EQ(reinterpret_cast<const uint16_t*>(w.data())[step_at],
                        reinterpret_cast<const uint16_t*>(full_w.data())[full_at])
                  << pn << " step " << t << " head " << h << " key " << j;
            } else {
              ASSERT_NEAR(reinterpret_cast<const float*>(w.data())[step_at],
                          reinterpret_cast<const float*>(full_w.data())[full_at], kF32Tolerance)
                  << pn << " step " << t << " head " << h << " key " << j;
            }
          }
        }
      }
      // Full: the next step is refused and the cache keeps its length.
      std::vector<uint8_t> out(static_cast<size_t>(e) * oes);
      EXPECT_EQ(d.interp.Step(d.layer, x.data(), out.data()), Status::kLengthExceedsPlan) << pn;
      EXPECT_EQ(d.interp.CachedLength(d.layer), n);
    }
  }
}

TEST_P(KvCache, StepsEqualTheFullCausalRunOnEveryPath) {
  CheckStepsEqualTheFullRun(std::get<0>(GetParam()), std::get<1>(GetParam()).c_str());
}

// The same with an int16 output (issue 37, contract 5c-out: the bundled
// transformer's dec_self converted with --residual int16).
TEST(KvCacheOutput16, StepsEqualTheFullCausalRunOnEveryPath) {
  bool present = false;
  for (const std::string& m : eatest::AllModels()) present = present || m == "transformer_int8_out16";
  if (!present) GTEST_SKIP() << "models/transformer not converted in this build";
  CheckStepsEqualTheFullRun("transformer_int8_out16", "dec_self");
}

TEST_P(KvCache, MisuseIsRefused) {
  Decoder d;
  d.Load(std::get<0>(GetParam()), std::get<1>(GetParam()).c_str());
  if (HasFatalFailure()) return;
  const int causal = d.model.FindLayer("causal");
  std::vector<uint8_t> q(64), out(64);
  EXPECT_EQ(d.interp.BeginSequence(causal), Status::kInvalidArgument);
  EXPECT_NE(std::string(d.interp.error()).find("has no KV cache"), std::string::npos) << d.interp.error();
  EXPECT_EQ(d.interp.Step(causal, q.data(), out.data()), Status::kInvalidArgument);
  EXPECT_EQ(d.interp.CachedLength(causal), -1);
  EXPECT_EQ(d.interp.Step(d.layer, nullptr, out.data()), Status::kInvalidArgument);
  EXPECT_EQ(d.interp.Step(99, q.data(), out.data()), Status::kInvalidArgument);
  // Output inside the arena is refused like any run's.
  EXPECT_EQ(d.interp.Step(d.layer, q.data(), d.arena.data()), Status::kInvalidArgument);
  // A cap at Init shrinks the cache: 3 positions, then full.
  Interpreter capped;
  AlignedBuffer arena(d.model.ArenaBytesFor(3, 3));
  ASSERT_EQ(capped.Init(&d.model, arena.data(), arena.size(), 3, 3), Status::kOk) << capped.error();
  const size_t es = d.info.dtype == EA_S8 ? 1 : 4;
  const auto x = Tokens(d.info, 4, 3);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(capped.Step(d.layer, x.data() + t * d.info.query_dim * es, out.data()), Status::kOk)
        << capped.error();
  }
  EXPECT_EQ(capped.Step(d.layer, x.data(), out.data()), Status::kLengthExceedsPlan);
}

INSTANTIATE_TEST_SUITE_P(Fixture, KvCache,
                         ::testing::Combine(::testing::Values("fixture_int8", "fixture_f32"),
                                            ::testing::Values("decoder", "gqa")));

TEST(GroupedQuery, LayerInfo) {
  Decoder d;
  d.Load("fixture_int8", "gqa");
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(d.info.num_heads, 4);
  EXPECT_EQ(d.info.num_kv_heads, 2);
  EXPECT_EQ(d.info.kv_cache_bytes, 2u * 10 * 8);  // 2 K/V heads of 4: 8 bytes per position, K and V
  LayerInfo plain = {};
  ASSERT_EQ(d.model.GetLayerInfo(d.model.FindLayer("decoder"), &plain), Status::kOk);
  EXPECT_EQ(plain.num_kv_heads, plain.num_heads);
}

}  // namespace kv_cache_test
}  // namespace
