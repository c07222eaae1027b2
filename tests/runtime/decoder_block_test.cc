// The decoder_block kind (models/encoder_block's "dec_pre" and "dec_post",
// nn.TransformerDecoderLayer pre- and post-norm, 12 target rows over a
// 16-row memory): decoding token by token with Step over memory keys from
// CacheKeys gives, at every position, the row of one full run over the same
// tokens (int8 bit for bit on every kernel path; float within a few
// roundings), CacheKeys + a cached run equals the uncached run, and misuse
// is refused with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "loaded_model.h"
#include "test_models.h"

namespace ek = edgeattn::kernels;
using edgeattn::LayerInfo;
using edgeattn::RunArgs;
using edgeattn::Status;

namespace {
namespace decoder_block_test {  // tests/CMakeLists.txt: unity builds

bool Converted(const std::string& name) {
  const std::vector<std::string> all = eatest::AllModels();
  return std::find(all.begin(), all.end(), name) != all.end();
}

// n rows of the layer's width of es-byte elements: int8 bytes, int16
// values (the 16-bit residual stream, its ends included) or floats in [-2, 2].
std::vector<uint8_t> Rows(const LayerInfo& info, int n, uint32_t seed, size_t es) {
  std::vector<uint8_t> x(static_cast<size_t>(n) * info.query_dim * es);
  uint32_t s = seed;
  auto next = [&s] { s = s * 1664525u + 1013904223u; return s >> 8; };
  if (es <= 2) {
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

// Float steps run their projections over one row instead of n (a SIMD
// linear may sum in another order): a few float roundings of O(1) outputs.
constexpr float kF32Tolerance = 1e-4f;

// (model, layer)
using Case = std::tuple<std::string, std::string>;

class DecoderBlock : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const std::string model = std::get<0>(GetParam());
    if (!Converted(model)) GTEST_SKIP() << "models/encoder_block not converted in this build";
    ASSERT_TRUE(m.Load(model));
    layer = m.model.FindLayer(std::get<1>(GetParam()).c_str());
    ASSERT_GE(layer, 0);
    info = m.Info(layer);
    s8 = info.dtype == EA_S8;
    mem_es = s8 ? 1 : 4;
    es = info.input_dtype == EA_S16 ? 2 : mem_es;  // the rows in and out (int16: the residual stream)
  }
  void TearDown() override { ek::set_kernel_path(ek::best_kernel_path()); }

  void ExpectRowsEqual(const uint8_t* got, const uint8_t* want, int rows, const std::string& what) {
    for (int i = 0; i < rows * info.output_dim; ++i) {
      if (es == 2) {
        ASSERT_EQ(reinterpret_cast<const int16_t*>(got)[i], reinterpret_cast<const int16_t*>(want)[i])
            << what << " element " << i;
      } else if (s8) {
        ASSERT_EQ(static_cast<int8_t>(got[i]), static_cast<int8_t>(want[i])) << what << " element " << i;
      } else {
        ASSERT_NEAR(reinterpret_cast<const float*>(got)[i], reinterpret_cast<const float*>(want)[i], kF32Tolerance)
            << what << " element " << i;
      }
    }
  }

  eatest::Loaded m;
  int layer = -1;
  LayerInfo info = {};
  bool s8 = false;
  size_t es = 1, mem_es = 1;
};

TEST_P(DecoderBlock, LayerInfo) {
  EXPECT_EQ(info.kind, EA_LAYER_DECODER_BLOCK);
  EXPECT_EQ(info.cross, 1);
  EXPECT_EQ(info.causal, 0);
  EXPECT_EQ(info.kv_cache, 1);
  EXPECT_EQ(info.max_q_len, 12);
  EXPECT_EQ(info.max_kv_len, 16);
  // The self-attention's K and V for max_q_len positions of 64 elements.
  EXPECT_EQ(info.kv_cache_bytes, 2u * 12 * 64 * mem_es);
  EXPECT_EQ(m.interp.CachedLength(layer), 0);
}

TEST_P(DecoderBlock, StepsEqualTheFullRunOnEveryPath) {
  const int n = info.max_q_len, lk = info.max_kv_len, e = info.query_dim, heads = info.num_heads;
  const size_t we = s8 ? 2 : 4;
  const auto x = Rows(info, n, 7, es);
  const auto memory = Rows(info, lk, 11, mem_es);
  for (int valid : {lk, 9}) {
    for (ek::KernelPath path : Paths()) {
      ASSERT_TRUE(ek::set_kernel_path(path));
      const std::string pn = std::string(ek::kernel_path_name(path)) + " valid " + std::to_string(valid);
      std::vector<uint8_t> full(static_cast<size_t>(n) * e * es), full_w(static_cast<size_t>(heads) * n * lk * we);
      RunArgs a = {};
      a.query = x.data();
      a.key = memory.data();
      a.q_len = n;
      a.kv_len = lk;
      a.kv_valid_len = valid;
      a.output = full.data();
      a.attn_weights = full_w.data();
      ASSERT_EQ(m.interp.Run(layer, a), Status::kOk) << m.interp.error();
      EXPECT_EQ(m.interp.CachedLength(layer), n);  // a full run is a prefill

      // The memory's keys from CacheKeys, and a cached run: the same rows.
      ASSERT_EQ(m.interp.CacheKeys(layer, memory.data(), nullptr, lk, valid), Status::kOk) << m.interp.error();
      std::vector<uint8_t> cached(full.size()), cached_w(full_w.size());
      RunArgs c = a;
      c.key = nullptr;
      c.kv_len = 0;
      c.use_cached_keys = 1;
      c.output = cached.data();
      c.attn_weights = cached_w.data();
      ASSERT_EQ(m.interp.Run(layer, c), Status::kOk) << m.interp.error();
      ASSERT_EQ(cached, full) << pn << ": CacheKeys + use_cached_keys differs from the full run";
      ASSERT_EQ(cached_w, full_w) << pn;

      // Token by token (prefill 0 or 5) over the cached memory.
      for (int prefill : {0, 5}) {
        ASSERT_EQ(m.interp.BeginSequence(layer), Status::kOk);
        if (prefill > 0) {
          std::vector<uint8_t> out(static_cast<size_t>(prefill) * e * es);
          RunArgs p = c;
          p.q_len = prefill;
          p.output = out.data();
          p.attn_weights = nullptr;
          ASSERT_EQ(m.interp.Run(layer, p), Status::kOk) << m.interp.error();
          ExpectRowsEqual(out.data(), full.data(), prefill, pn + " prefill");
        }
        for (int t = prefill; t < n; ++t) {
          std::vector<uint8_t> out(static_cast<size_t>(e) * es), w(static_cast<size_t>(heads) * lk * we);
          ASSERT_EQ(m.interp.Step(layer, x.data() + static_cast<size_t>(t) * e * es, out.data(), w.data()),
                    Status::kOk)
              << m.interp.error();
          ASSERT_EQ(m.interp.CachedLength(layer), t + 1);
          ExpectRowsEqual(out.data(), full.data() + static_cast<size_t>(t) * e * es, 1,
                          pn + " prefill " + std::to_string(prefill) + " step " + std::to_string(t));
          // The cross-attention's weights: head h, row t of the full run.
          for (int h = 0; h < heads; ++h) {
            for (int j = 0; j < lk; ++j) {
              const size_t full_at = (static_cast<size_t>(h) * n + t) * lk + j;
              const size_t step_at = static_cast<size_t>(h) * lk + j;
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
        // max_q_len positions: the next step is refused.
        std::vector<uint8_t> out(static_cast<size_t>(e) * es);
        EXPECT_EQ(m.interp.Step(layer, x.data(), out.data()), Status::kLengthExceedsPlan) << pn;
        EXPECT_NE(std::string(m.interp.error()).find("the KV cache is full (12 positions"), std::string::npos)
            << m.interp.error();
      }
    }
  }
}

TEST_P(DecoderBlock, MisuseIsRefused) {
  const int e = info.query_dim;
  const auto x = Rows(info, 2, 3, es);
  std::vector<uint8_t> out(static_cast<size_t>(e) * es * 2);
  // A step needs the memory's keys first (a fresh interpreter has none).
  ASSERT_EQ(m.interp.BeginSequence(layer), Status::kOk);
  EXPECT_EQ(m.interp.Step(layer, x.data(), out.data()), Status::kNotReady);
  EXPECT_NE(std::string(m.interp.error()).find("Step needs the memory's keys"), std::string::npos) << m.interp.error();
  RunArgs a = {};
  a.query = x.data();
  a.q_len = 1;
  a.output = out.data();
  a.use_cached_keys = 1;
  EXPECT_EQ(m.interp.Run(layer, a), Status::kNotReady);
  // The memory is the key input: a run without it is refused.
  a.use_cached_keys = 0;
  a.kv_len = 4;
  EXPECT_EQ(m.interp.Run(layer, a), Status::kInvalidArgument);
  // More memory rows than the plan.
  const auto memory = Rows(info, info.max_kv_len + 1, 5, mem_es);
  EXPECT_EQ(m.interp.CacheKeys(layer, memory.data(), nullptr, info.max_kv_len + 1, 0), Status::kLengthExceedsPlan);
  // More target rows than the plan.
  a.key = memory.data();
  a.q_len = info.max_q_len + 1;
  EXPECT_EQ(m.interp.Run(layer, a), Status::kLengthExceedsPlan);
}

INSTANTIATE_TEST_SUITE_P(Models, DecoderBlock,
                         ::testing::Combine(::testing::Values("encoder_block_int8", "encoder_block_f32",
                                                              "encoder_block_int8_res16"),
                                            ::testing::Values("dec_pre", "dec_post")));

}  // namespace decoder_block_test
}  // namespace
