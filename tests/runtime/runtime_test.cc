// Runtime behaviour through the C++ API (edgeattn.hpp): layer metadata,
// attention weights, key caching, arena sizing, run-time argument checks.
// Models are converted at build time (see CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/plan.h"
#include "loaded_model.h"
#include "test_models.h"

using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::RunArgs;
using edgeattn::Status;
using eatest::AlignedBuffer;
using eatest::LayerIo;
using eatest::Rng;

using eatest::Loaded;

namespace {

class EveryModel : public ::testing::TestWithParam<std::string> {};

std::string ParamName(const ::testing::TestParamInfo<std::string>& p) { return p.param; }

// Visible keys of query row i: keys j < limit (masks are prefixes), with
// the documented causal rule j <= i + kv_len - q_len.
int VisibleKeys(const LayerInfo& info, int row, int q_len, int kv_len, int kv_valid_len) {
  // The API contract: kv_valid_len <= 0 means every key is valid.
  int limit = kv_valid_len <= 0 || kv_valid_len > kv_len ? kv_len : kv_valid_len;
  if (info.causal) {
    const int c = row + 1 + kv_len - q_len;
    limit = std::min(limit, std::max(c, 0));
  }
  return limit;
}

TEST_P(EveryModel, LayerInfoIsConsistent) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  ASSERT_GE(m.model.num_layers(), 1);
  size_t max_layer = 0;
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    ASSERT_NE(info.name, nullptr);
    EXPECT_EQ(m.model.FindLayer(info.name), l) << info.name;
    EXPECT_GE(info.max_q_len, 1) << info.name;
    EXPECT_GE(info.max_kv_len, 1) << info.name;
    // LayerNorm, FFN, linear and the model-end kinds (embedding, positions,
    // row_pool, argmax) have no attention weights; all but the FFN no buffers
    // (and a linear with an int16 output, one zero row: contract 5c-out's residual).
    const bool model_end = info.kind == EA_LAYER_EMBEDDING || info.kind == EA_LAYER_POSITIONS ||
                           info.kind == EA_LAYER_ROW_POOL || info.kind == EA_LAYER_ARGMAX;
    const bool per_row = info.kind == EA_LAYER_LAYERNORM || info.kind == EA_LAYER_FEED_FORWARD ||
                         info.kind == EA_LAYER_LINEAR || model_end;
    const bool zero_row = info.kind == EA_LAYER_LINEAR && info.output_dtype == EA_S16;
    const bool no_buffers = info.kind == EA_LAYER_LAYERNORM || (info.kind == EA_LAYER_LINEAR && !zero_row) || model_end;
    if (zero_row) {
      EXPECT_EQ(info.arena_bytes, (info.output_dim * sizeof(int16_t) + EA_ALIGNMENT - 1) / EA_ALIGNMENT * EA_ALIGNMENT);
    }
    EXPECT_EQ(info.num_heads == 0, per_row) << info.name;
    EXPECT_GT(info.output_dim, 0) << info.name;
    EXPECT_EQ(info.arena_bytes == 0, no_buffers) << info.name;
    EXPECT_EQ(info.arena_bytes % EA_ALIGNMENT, 0u) << info.name;
    max_layer = std::max(max_layer, info.arena_bytes);
    const bool s8 = GetParam().find("int8") != std::string::npos;
    EXPECT_EQ(info.dtype, s8 ? EA_S8 : EA_F32) << info.name;
    if (s8) {
      // Token ids in and class indices out have no quantization.
      if (info.output_dtype == EA_S8) {
        EXPECT_GT(info.output_quant.scale, 0.0f) << info.name;
      }
      if (info.input_dtype == EA_S8) {
        EXPECT_GT(info.key_quant.scale, 0.0f) << info.name;
      }
    }
  }
  // The model arena covers each layer alone and is at most their sum.
  EXPECT_GE(m.model.arena_bytes(), max_layer);
  EXPECT_EQ(m.model.FindLayer("no_such_layer"), -1);
  EXPECT_EQ(m.model.FindLayer(nullptr), -1);
}

// Runs every layer with random inputs and several lengths / paddings and
// checks the attention weights: per row the visible weights sum to one
// (Q15: 32768 within n/2 + 1, since each of the n probabilities is rounded by
// at most 1/2 + 2^-16 LSB; float: 1 within 1e-5, n <= 65 float roundings of
// relative 6e-8 each plus the exp/normalization roundings, far below 1e-5), and
// masked entries are exactly 0.
TEST_P(EveryModel, AttentionWeightsRowsSumToOneAndMaskedAreZero) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    const bool s8 = info.dtype == EA_S8;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      Rng rng(seed * 1000 + static_cast<uint64_t>(l));
      const int ql = seed == 1 ? info.max_q_len : rng.uniform_int(1, info.max_q_len);
      const int kvl = seed == 1 ? info.max_kv_len : rng.uniform_int(1, info.max_kv_len);
      LayerIo io;
      io.Make(info, ql, kvl, rng);
      const int mode = static_cast<int>(seed % 4);
      const int valid = mode == 0 ? -1 : mode == 1 ? io.kv_len : rng.uniform_int(0, io.kv_len);
      const RunArgs args = io.Args(valid);
      const Status s = m.interp.Run(l, args);
      ASSERT_EQ(s, Status::kOk) << GetParam() << " layer " << info.name << " seed " << seed << ": "
                                << m.interp.error();
      for (int h = 0; h < info.num_heads; ++h) {
        for (int i = 0; i < io.q_len; ++i) {
          const int vis = VisibleKeys(info, i, io.q_len, io.kv_len, valid);
          double sum = 0.0;
          for (int j = 0; j < io.kv_len; ++j) {
            const size_t idx = (static_cast<size_t>(h) * io.q_len + i) * io.kv_len + j;
            double w;
            if (s8) {
              uint16_t v;
              std::memcpy(&v, &io.weights[idx * 2], 2);
              w = v;
            } else {
              float v;
              std::memcpy(&v, &io.weights[idx * 4], 4);
              w = v;
            }
            if (j >= vis) {
              ASSERT_EQ(w, 0.0) << GetParam() << " layer " << info.name << " seed " << seed << " head " << h
                                << " row " << i << " masked key " << j;
            } else {
              ASSERT_GE(w, 0.0);
            }
            sum += w;
          }
          if (vis == 0) continue;
          if (s8) {
            ASSERT_LE(std::fabs(sum - 32768.0), vis / 2 + 1)
                << GetParam() << " layer " << info.name << " seed " << seed << " head " << h << " row " << i
                << " n " << vis;
          } else {
            ASSERT_LE(std::fabs(sum - 1.0), 1e-5)
                << GetParam() << " layer " << info.name << " seed " << seed << " head " << h << " row " << i;
          }
        }
      }
    }
  }
}

// CacheKeys + Run(use_cached_keys) must give the same bits as passing the keys.
TEST_P(EveryModel, CachedKeysAreBitIdentical) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  int tested = 0;
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE;
    if (!cacheable) continue;
    ++tested;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      Rng rng(seed * 77 + static_cast<uint64_t>(l));
      const int ql = rng.uniform_int(1, info.max_q_len);
      const int kvl = seed == 1 ? info.max_kv_len : rng.uniform_int(1, info.max_kv_len);
      const int valid = seed % 2 ? -1 : rng.uniform_int(1, kvl);
      LayerIo direct;
      direct.Make(info, ql, kvl, rng);
      LayerIo cached = direct;
      ASSERT_EQ(m.interp.Run(l, direct.Args(valid)), Status::kOk) << m.interp.error();
      ASSERT_EQ(m.interp.CacheKeys(l, cached.key.data(), cached.value.data(), kvl, valid), Status::kOk)
          << m.interp.error();
      // Another layer running in between must not disturb the cache.
      for (int other = 0; other < m.model.num_layers(); ++other) {
        if (other == l) continue;
        const LayerInfo oi = m.Info(other);
        const bool other_cacheable = (oi.kind == EA_LAYER_MULTI_HEAD_ATTENTION && oi.cross) || oi.kind == EA_LAYER_ADDITIVE;
        if (other_cacheable) continue;
        LayerIo o;
        o.Make(oi, oi.max_q_len, oi.max_kv_len, rng);
        ASSERT_EQ(m.interp.Run(other, o.Args(-1)), Status::kOk) << m.interp.error();
        break;
      }
      // (a) The documented form (edgeattn.h): cross MHA key and value may be
      //     NULL, additive key may be NULL (values stay an input).
      RunArgs a = cached.Args(-1);
      a.use_cached_keys = 1;
      a.key = nullptr;
      a.kv_len = 0;  // ignored with use_cached_keys
      if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) a.value = nullptr;
      const Status documented = m.interp.Run(l, a);
      EXPECT_EQ(documented, Status::kOk) << GetParam() << " " << info.name
                                         << ": use_cached_keys with NULL key/value (documented as allowed): "
                                         << m.interp.error();
      if (documented == Status::kOk) {
        EXPECT_EQ(direct.output, cached.output) << GetParam() << " layer " << info.name << " seed " << seed;
        EXPECT_EQ(direct.weights, cached.weights) << GetParam() << " layer " << info.name << " seed " << seed;
      }
      // (b) Key (and MHA value) pointers at garbage must be ignored: the
      //     cache is used, bit-identical to the direct run.
      // (A coverage layer's run (a) was its sequence's first step: a new
      //  sequence over the same cached keys repeats it.)
      if (info.coverage) {
        ASSERT_EQ(m.interp.BeginSequence(l), Status::kOk) << m.interp.error();
      }
      std::vector<uint8_t> garbage(cached.key.size() + cached.value.size() + 64, 0x77);
      std::fill(cached.output.begin(), cached.output.end(), 0);
      std::fill(cached.weights.begin(), cached.weights.end(), 0);
      a.key = garbage.data();
      if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) a.value = garbage.data();
      ASSERT_EQ(m.interp.Run(l, a), Status::kOk) << GetParam() << " " << info.name << ": " << m.interp.error();
      EXPECT_EQ(direct.output, cached.output) << GetParam() << " layer " << info.name << " seed " << seed;
      EXPECT_EQ(direct.weights, cached.weights) << GetParam() << " layer " << info.name << " seed " << seed;
      // Decoder loop: a second step on the same cache gives the same result again.
      if (info.coverage) {
        ASSERT_EQ(m.interp.BeginSequence(l), Status::kOk) << m.interp.error();
      }
      LayerIo again = cached;
      std::fill(again.output.begin(), again.output.end(), 0);
      RunArgs b = again.Args(-1);
      b.use_cached_keys = 1;
      b.key = garbage.data();
      if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) b.value = garbage.data();
      ASSERT_EQ(m.interp.Run(l, b), Status::kOk) << m.interp.error();
      EXPECT_EQ(again.output, cached.output) << GetParam() << " layer " << info.name << " seed " << seed;
    }
  }
  if (GetParam() == "fixture_int8" || GetParam() == "fixture_f32") {
    EXPECT_EQ(tested, 2) << "fixture has one cross MHA and one additive layer";
  }
}

// The exact arena is enough for every layer at its maxima and nothing is
// written outside it; one byte less is refused.
TEST_P(EveryModel, ArenaExactSizeWorksAndOneByteLessFails) {
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(GetParam()), &file));
  Model model;
  ASSERT_EQ(model.Load(file.data(), file.size()), Status::kOk) << model.error();
  const size_t need = model.arena_bytes();
  ASSERT_GT(need, 0u);
  const size_t guard = 256;
  AlignedBuffer region(need + 2 * guard);
  std::memset(region.data(), 0xA5, need + 2 * guard);
  uint8_t* arena = region.data() + guard;
  Interpreter small;
  EXPECT_EQ(small.Init(&model, arena, need - 1), Status::kArenaTooSmall);
  EXPECT_STRNE(small.error(), "");
  Interpreter interp;
  ASSERT_EQ(interp.Init(&model, arena, need), Status::kOk) << interp.error();
  Rng rng(5);
  for (int l = 0; l < model.num_layers(); ++l) {
    LayerInfo info = {};
    ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
    LayerIo io;
    io.Make(info, info.max_q_len, info.max_kv_len, rng);
    ASSERT_EQ(interp.Run(l, io.Args(-1)), Status::kOk) << info.name << ": " << interp.error();
    const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE;
    if (cacheable) {
      ASSERT_EQ(interp.CacheKeys(l, io.key.data(), io.value.data(), info.max_kv_len, -1), Status::kOk)
          << interp.error();
      RunArgs a = io.Args(-1);
      a.use_cached_keys = 1;
      ASSERT_EQ(interp.Run(l, a), Status::kOk) << interp.error();
    }
  }
  for (size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(region.data()[i], 0xA5) << "write before the arena at -" << guard - i;
    ASSERT_EQ(region.data()[guard + need + i], 0xA5) << "write after the arena at +" << i;
  }
}

TEST_P(EveryModel, LengthsBeyondThePlan) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    Rng rng(3);
    if (info.query_dim != 0) {  // not a pooled kind (pooling, row_pool: one output row)
      LayerIo io;
      io.Make(info, info.max_q_len + 1, info.max_kv_len, rng);
      EXPECT_EQ(m.interp.Run(l, io.Args(-1)), Status::kLengthExceedsPlan) << info.name;
      EXPECT_STRNE(m.interp.error(), "") << info.name;
    }
    const bool self = !info.cross;
    if (!self) {
      LayerIo io;
      io.Make(info, 1, info.max_kv_len + 1, rng);
      EXPECT_EQ(m.interp.Run(l, io.Args(-1)), Status::kLengthExceedsPlan) << info.name;
      EXPECT_STRNE(m.interp.error(), "") << info.name;
      const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE;
      if (cacheable) {
        EXPECT_EQ(m.interp.CacheKeys(l, io.key.data(), io.value.data(), info.max_kv_len + 1, -1),
                  Status::kLengthExceedsPlan) << info.name;
        EXPECT_STRNE(m.interp.error(), "") << info.name;
      }
    }
    // Zero lengths and a valid length beyond kv_len are argument errors.
    LayerIo io;
    io.Make(info, 1, 1, rng);
    RunArgs a = io.Args(-1);
    a.q_len = 0;
    if (info.query_dim != 0) {  // not a pooled kind (pooling, row_pool: one output row)
      EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name;
    }
    a = io.Args(2);
    EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name << " kv_valid_len 2 > kv_len 1";
    EXPECT_STRNE(m.interp.error(), "") << info.name;
  }
}

TEST_P(EveryModel, NullPointersBadIndicesAndCallOrder) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  Rng rng(9);
  const int n = m.model.num_layers();
  for (int l = 0; l < n; ++l) {
    const LayerInfo info = m.Info(l);
    LayerIo io;
    io.Make(info, 1, 1, rng);
    RunArgs a = io.Args(-1);
    a.output = nullptr;
    EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name << " null output";
    EXPECT_STRNE(m.interp.error(), "");
    if (info.query_dim != 0) {  // not a pooled kind (pooling, row_pool: one output row)
      a = io.Args(-1);
      a.query = nullptr;
      EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name << " null query";
      EXPECT_STRNE(m.interp.error(), "");
    }
    const bool self = !info.cross;
    if (!self) {
      a = io.Args(-1);
      a.key = nullptr;
      a.value = nullptr;
      EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name << " null key";
      EXPECT_STRNE(m.interp.error(), "");
    }
    const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE;
    if (cacheable) {
      EXPECT_EQ(m.interp.CacheKeys(l, nullptr, nullptr, 1, -1), Status::kInvalidArgument) << info.name;
      EXPECT_STRNE(m.interp.error(), "");
    }
  }
  // Bad layer indices.
  LayerInfo info = {};
  for (int bad : {-1, n, n + 100, INT32_MIN, INT32_MAX}) {
    EXPECT_EQ(m.model.GetLayerInfo(bad, &info), Status::kInvalidArgument) << bad;
    RunArgs a = {};
    EXPECT_EQ(m.interp.Run(bad, a), Status::kInvalidArgument) << bad;
    EXPECT_STRNE(m.interp.error(), "") << bad;
    EXPECT_EQ(m.interp.CacheKeys(bad, nullptr, nullptr, 1, -1), Status::kInvalidArgument) << bad;
  }
  EXPECT_EQ(m.model.GetLayerInfo(0, nullptr), Status::kInvalidArgument);
  // Init: null arena, misaligned arena, null model, unloaded model.
  Interpreter i2;
  EXPECT_EQ(i2.Init(&m.model, nullptr, m.model.arena_bytes()), Status::kInvalidArgument);
  EXPECT_STRNE(i2.error(), "");
  EXPECT_EQ(i2.Init(&m.model, m.arena.data() + 1, m.model.arena_bytes()), Status::kInvalidArgument);
  EXPECT_STRNE(i2.error(), "");
  EXPECT_EQ(i2.Init(nullptr, m.arena.data(), m.model.arena_bytes()), Status::kInvalidArgument)
      << "a null model pointer is a null argument (edgeattn.h: EA_INVALID_ARGUMENT = null, misaligned, bad index)";
  EXPECT_STRNE(i2.error(), "");
  Model unloaded;
  EXPECT_EQ(i2.Init(&unloaded, m.arena.data(), m.model.arena_bytes()), Status::kNotReady);
  EXPECT_STRNE(i2.error(), "");
  // Run on an interpreter whose Init failed / never happened.
  Interpreter fresh;
  RunArgs a = {};
  EXPECT_EQ(fresh.Run(0, a), Status::kNotReady);
  EXPECT_STRNE(fresh.error(), "");
  // Model::Load with null data.
  Model bad;
  EXPECT_EQ(bad.Load(nullptr, 100), Status::kInvalidArgument);
  EXPECT_STRNE(bad.error(), "");
  EXPECT_FALSE(bad.loaded());
}

TEST_P(EveryModel, UseCachedKeysBeforeCacheKeysIsNotReady) {
  Loaded m;
  ASSERT_TRUE(m.Load(GetParam()));
  Rng rng(4);
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    LayerIo io;
    io.Make(info, 1, 1, rng);
    RunArgs a = io.Args(-1);
    a.use_cached_keys = 1;
    const bool cacheable = (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE ||
                           info.kind == EA_LAYER_DECODER_BLOCK;
    if (cacheable) {
      EXPECT_EQ(m.interp.Run(l, a), Status::kNotReady) << info.name;
    } else {
      // Layers without a key cache refuse the flag.
      EXPECT_EQ(m.interp.Run(l, a), Status::kInvalidArgument) << info.name;
      EXPECT_EQ(m.interp.CacheKeys(l, io.key.empty() ? io.query.data() : io.key.data(), nullptr, 1, -1),
                Status::kInvalidArgument) << info.name;
    }
    EXPECT_STRNE(m.interp.error(), "") << info.name;
  }
}

TEST_P(EveryModel, LengthCapsShrinkTheArena) {
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(GetParam()), &file));
  Model model;
  ASSERT_EQ(model.Load(file.data(), file.size()), Status::kOk) << model.error();
  const size_t capped = model.ArenaBytesFor(2, 3);
  EXPECT_LE(capped, model.arena_bytes());
  EXPECT_EQ(model.ArenaBytesFor(0, 0), model.arena_bytes());
  AlignedBuffer arena(capped);
  Interpreter interp;
  EXPECT_EQ(interp.Init(&model, arena.data(), capped - 1, 2, 3), Status::kArenaTooSmall);
  ASSERT_EQ(interp.Init(&model, arena.data(), capped, 2, 3), Status::kOk) << interp.error();
  Rng rng(8);
  for (int l = 0; l < model.num_layers(); ++l) {
    LayerInfo info = {};
    ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
    LayerIo io;
    io.Make(info, std::min(2, info.max_q_len), std::min(3, info.max_kv_len), rng);
    EXPECT_EQ(interp.Run(l, io.Args(-1)), Status::kOk) << info.name << ": " << interp.error();
    if (info.query_dim != 0 && info.max_q_len > 2) {
      LayerIo big;
      big.Make(info, 3, std::min(3, info.max_kv_len), rng);
      EXPECT_EQ(interp.Run(l, big.Args(-1)), Status::kLengthExceedsPlan) << info.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EveryModel, ::testing::ValuesIn(eatest::AllModels()), ParamName);

TEST(Models, FixturesWereConverted) {
  // The fixture models must exist: without them most tests above would not run.
  const std::vector<std::string> all = eatest::AllModels();
  EXPECT_NE(std::find(all.begin(), all.end(), "fixture_int8"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "fixture_f32"), all.end());
}

// The plan: a kind the runtime does not know gets a plan no size check
// accepts (never a silent default), and int8 scaled-dot-product cores get
// the tile scratch exactly from kQs8AttnTileMinRows query rows on.
TEST(Plan, UnknownKindIsRefused) {
  edgeattn::LayerShape s = {};
  s.kind = 99;
  s.dtype = EA_S8;
  const edgeattn::LayerPlan p = edgeattn::plan_layer(s, 4, 4);
  EXPECT_GT(p.cache_bytes + p.scratch_bytes, edgeattn::kMaxArenaBytes);
}

TEST(Plan, TileScratchFromFourQueryRows) {
  namespace ek = edgeattn::kernels;
  using edgeattn::align_up;
  edgeattn::LayerShape mha = {};
  mha.kind = EA_LAYER_MULTI_HEAD_ATTENTION;
  mha.dtype = EA_S8;
  mha.embed_dim = 64;
  mha.kv_width = 64;
  mha.tile_scratch = true;
  mha.head_dim = 16;
  mha.v_dim = 16;
  const int rows = ek::kQs8AttnTileMinRows, kv = 50;
  const uint64_t below = edgeattn::plan_layer(mha, rows - 1, kv).scratch_bytes;
  const uint64_t at = edgeattn::plan_layer(mha, rows, kv).scratch_bytes;
  // one more query row: Q and context grow by one row each, plus the tile scratch
  EXPECT_EQ(at - below, 2 * (align_up(rows * 64) - align_up((rows - 1) * 64)) +
                            align_up(ek::qs8_attention_tile_bytes(kv, 16, 16)));
  mha.tile_scratch = false;  // convert --no-tile-scratch: no tile bytes
  EXPECT_EQ(edgeattn::plan_layer(mha, rows, kv).scratch_bytes - edgeattn::plan_layer(mha, rows - 1, kv).scratch_bytes,
            2 * (align_up(rows * 64) - align_up((rows - 1) * 64)));
  mha.tile_scratch = true;
  mha.dtype = EA_F32;  // float cores never tile
  EXPECT_EQ(edgeattn::plan_layer(mha, rows, kv).scratch_bytes - edgeattn::plan_layer(mha, rows - 1, kv).scratch_bytes,
            2 * (align_up(rows * 256) - align_up((rows - 1) * 256)));
  edgeattn::LayerShape additive = {};  // additive scores are not dot products
  additive.kind = EA_LAYER_ADDITIVE;
  additive.dtype = EA_S8;
  additive.attn_dim = 32;
  EXPECT_EQ(edgeattn::plan_layer(additive, rows, kv).scratch_bytes -
                edgeattn::plan_layer(additive, rows - 1, kv).scratch_bytes,
            align_up(rows * 32) - align_up((rows - 1) * 32));
}

// One layout for the converter, Load and Init: caches one after another,
// then the largest scratch; each extra pool worker adds the largest worker
// scratch.
TEST(Plan, ArenaLayout) {
  const edgeattn::LayerPlan plans[3] = {{32, 100, 48}, {0, 300, 0}, {64, 200, 80}};
  uint64_t offsets[3] = {};
  const edgeattn::ArenaLayout a = edgeattn::lay_out_arena(plans, 3, offsets);
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[1], 32u);
  EXPECT_EQ(offsets[2], 32u);
  EXPECT_EQ(a.scratch_offset, 96u);
  EXPECT_EQ(a.total_bytes, 396u);
  EXPECT_EQ(a.worker_bytes, 80u);
  EXPECT_EQ(edgeattn::arena_bytes_for_workers(a, 1), 396u);
  EXPECT_EQ(edgeattn::arena_bytes_for_workers(a, 4), 396u + 3 * 80u);
}

// A chain whose first output is smaller than the rest (a keyword spotter:
// 98 x 64 frame rows, then 99 x 64 with the class row, then a pooled row):
// two regions, not three, and a dead region is reused; tensors that live
// together never share bytes.
TEST(Plan, GraphChainNeedsTwoRegionsWhenTheFirstOutputIsSmaller) {
  // step s writes tensor s, step s + 1 reads it; the last step's output is the caller's.
  const edgeattn::GraphTensor chain[5] = {{98 * 64, 0, 1}, {99 * 64, 1, 2}, {99 * 64, 2, 3}, {64, 3, 4}, {0, 4, 4}};
  uint64_t offsets[5] = {};
  EXPECT_EQ(edgeattn::lay_out_graph(chain, 5, offsets), 2u * 6336u);
  EXPECT_EQ(offsets[1], 0u);     // the largest first, at 0
  EXPECT_EQ(offsets[2], 6336u);  // lives with tensor 1
  EXPECT_EQ(offsets[0], 6336u);  // lives with tensor 1, not with tensor 2
  EXPECT_EQ(offsets[3], 0u);     // lives with tensor 2 only
  // Three tensors alive at once (a step reading two earlier outputs) take three regions.
  const edgeattn::GraphTensor fan[3] = {{100, 0, 2}, {200, 1, 2}, {0, 2, 2}};
  uint64_t fan_offsets[3] = {};
  EXPECT_EQ(edgeattn::lay_out_graph(fan, 3, fan_offsets), 208u + 112u);
  EXPECT_EQ(fan_offsets[1], 0u);
  EXPECT_EQ(fan_offsets[0], 208u);
}

// A model converted with --no-tile-scratch: a smaller arena, and the same
// integers on every path (its attention runs row by row everywhere).
TEST(Plan, NoTileScratchSameOutputsSmallerArena) {
  Loaded tiled, rows;
  if (!eatest::ReadFile(eatest::ModelPath("transformer_int8_notile"), &rows.file)) {
    GTEST_SKIP() << "models/transformer not bundled";
  }
  ASSERT_TRUE(tiled.Load("transformer_int8"));
  ASSERT_TRUE(rows.Load("transformer_int8_notile"));
  EXPECT_LT(rows.model.arena_bytes(), tiled.model.arena_bytes());
  Rng rng(5);
  for (int l = 0; l < tiled.model.num_layers(); ++l) {
    const LayerInfo info = tiled.Info(l);
    LayerIo io;
    io.Make(info, info.max_q_len, info.max_kv_len, rng);
    for (int p = 0; p < static_cast<int>(edgeattn::kernels::KernelPath::kCount); ++p) {
      const auto path = static_cast<edgeattn::kernels::KernelPath>(p);
      if (!edgeattn::kernels::set_kernel_path(path)) continue;
      ASSERT_EQ(tiled.interp.Run(l, io.Args(-1, true)), Status::kOk) << tiled.interp.error();
      const std::vector<uint8_t> out = io.output, w = io.weights;
      ASSERT_EQ(rows.interp.Run(l, io.Args(-1, true)), Status::kOk) << rows.interp.error();
      EXPECT_EQ(io.output, out) << info.name << " " << edgeattn::kernels::kernel_path_name(path);
      EXPECT_EQ(io.weights, w) << info.name << " " << edgeattn::kernels::kernel_path_name(path);
    }
    edgeattn::kernels::set_kernel_path(edgeattn::kernels::best_kernel_path());
  }
}

}  // namespace
