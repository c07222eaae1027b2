// Input robustness of Interpreter::Run / CacheKeys / Init (issue 6): NaN and
// Inf in float inputs, zero / negative / oversized lengths, misaligned and
// overlapping caller buffers, misaligned arenas. Each case has a defined
// status or a documented, tested result (docs/security.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "test_models.h"

namespace {

using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::RunArgs;
using edgeattn::Status;
using eatest::AlignedBuffer;

class Robustness : public ::testing::Test {
 protected:
  void SetUpModel(const std::string& name) {
    ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(name), &file_)) << name;
    ASSERT_EQ(model_.Load(file_.data(), file_.size()), Status::kOk) << model_.error();
    arena_.Reset(model_.arena_bytes());
    ASSERT_EQ(interp_.Init(&model_, arena_.data(), arena_.size()), Status::kOk) << interp_.error();
  }
  int Layer(const char* name) {
    const int i = model_.FindLayer(name);
    EXPECT_GE(i, 0) << name;
    return i;
  }
  LayerInfo Info(int layer) {
    LayerInfo info = {};
    EXPECT_EQ(model_.GetLayerInfo(layer, &info), Status::kOk);
    return info;
  }

  AlignedBuffer file_, arena_;
  Model model_;
  Interpreter interp_;
};

float* F(std::vector<uint8_t>& v) { return reinterpret_cast<float*>(v.data()); }

// ------------------------------------------------------------ NaN / Inf ----

// Documented: a NaN in any query or (valid) key element a row reads makes that
// row's scores NaN, so every output element of the row is NaN.
TEST_F(Robustness, F32NaNInKeyPropagatesToTheWholeRow) {
  SetUpModel("fixture_f32");
  const int pool = Layer("pool");
  eatest::Rng rng(1);
  eatest::LayerIo io;
  io.Make(Info(pool), 1, 10, rng);
  F(io.key)[3] = std::numeric_limits<float>::quiet_NaN();  // key row 0
  ASSERT_EQ(interp_.Run(pool, io.Args(0)), Status::kOk) << interp_.error();
  for (int c = 0; c < Info(pool).output_dim; ++c) EXPECT_TRUE(std::isnan(F(io.output)[c])) << c;
}

TEST_F(Robustness, F32NaNInQueryPropagatesOnlyToItsRow) {
  SetUpModel("fixture_f32");
  const int luong = Layer("luong");
  const LayerInfo info = Info(luong);
  eatest::Rng rng(2);
  eatest::LayerIo io;
  io.Make(info, 3, 5, rng);
  F(io.query)[info.query_dim * 1 + 2] = std::numeric_limits<float>::quiet_NaN();  // row 1
  ASSERT_EQ(interp_.Run(luong, io.Args(0)), Status::kOk) << interp_.error();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < info.output_dim; ++c) {
      const float v = F(io.output)[r * info.output_dim + c];
      if (r == 1) {
        EXPECT_TRUE(std::isnan(v)) << r << "," << c;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << r << "," << c;
      }
    }
  }
}

// A NaN in a value poisons exactly the output column that reads it (every
// row that sees that key; 0 * NaN is NaN even for a zero weight).
TEST_F(Robustness, F32NaNInValuePoisonsItsColumn) {
  SetUpModel("fixture_f32");
  const int luong = Layer("luong");
  const LayerInfo info = Info(luong);
  eatest::Rng rng(13);
  eatest::LayerIo io;
  io.Make(info, 3, 4, rng);
  F(io.value)[info.value_dim * 2 + 1] = std::numeric_limits<float>::quiet_NaN();  // key 2, col 1
  ASSERT_EQ(interp_.Run(luong, io.Args(0)), Status::kOk) << interp_.error();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < info.output_dim; ++c) {
      const float v = F(io.output)[r * info.output_dim + c];
      EXPECT_EQ(std::isnan(v), c == 1) << r << "," << c;
    }
  }
}

// Masked keys (>= kv_valid_len) are never read: NaN there changes nothing.
TEST_F(Robustness, F32NaNInMaskedKeysIsNeverRead) {
  SetUpModel("fixture_f32");
  const int pool = Layer("pool");
  const LayerInfo info = Info(pool);
  eatest::Rng rng(3);
  eatest::LayerIo io;
  io.Make(info, 1, 10, rng);
  ASSERT_EQ(interp_.Run(pool, io.Args(6)), Status::kOk);
  const std::vector<uint8_t> clean = io.output;
  for (int j = 6; j < 10; ++j) {
    for (int c = 0; c < info.key_dim; ++c) {
      F(io.key)[j * info.key_dim + c] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  ASSERT_EQ(interp_.Run(pool, io.Args(6)), Status::kOk);
  EXPECT_EQ(io.output, clean);
}

// Documented: +-Inf inputs give Run == EA_OK and non-finite (Inf or NaN)
// outputs in the rows that read them; never a crash or a different status.
TEST_F(Robustness, F32InfinityIsAcceptedAndNotFinite) {
  SetUpModel("fixture_f32");
  for (const char* name : {"self_pad", "causal", "cross", "additive", "luong", "pool"}) {
    const int layer = Layer(name);
    const LayerInfo info = Info(layer);
    eatest::Rng rng(4);
    eatest::LayerIo io;
    io.Make(info, 2, 4, rng);
    std::vector<uint8_t>& in = io.query.empty() ? io.key : io.query;
    for (size_t i = 0; i < in.size() / 4; ++i) {
      F(in)[i] = (i % 2) ? std::numeric_limits<float>::infinity()
                         : -std::numeric_limits<float>::infinity();
    }
    ASSERT_EQ(interp_.Run(layer, io.Args(0)), Status::kOk) << name << ": " << interp_.error();
    bool any_non_finite = false;
    for (size_t i = 0; i < io.output.size() / 4; ++i) any_non_finite |= !std::isfinite(F(io.output)[i]);
    EXPECT_TRUE(any_non_finite) << name;
  }
}

// The int8 path has no NaN: extreme codes (all -128 / all 127) are ordinary inputs.
TEST_F(Robustness, S8ExtremeCodesRunEverywhere) {
  SetUpModel("fixture_int8");
  for (const char* name : {"self_pad", "causal", "cross", "additive", "luong", "pool"}) {
    for (uint8_t code : {uint8_t{0x80}, uint8_t{0x7F}}) {
      const int layer = Layer(name);
      eatest::Rng rng(5);
      eatest::LayerIo io;
      io.Make(Info(layer), 3, 5, rng);
      for (auto* v : {&io.query, &io.key, &io.value}) std::fill(v->begin(), v->end(), code);
      EXPECT_EQ(interp_.Run(layer, io.Args(0)), Status::kOk) << name << ": " << interp_.error();
    }
  }
}

// -------------------------------------------------------------- lengths ----

TEST_F(Robustness, ZeroAndNegativeLengths) {
  SetUpModel("fixture_int8");
  const int cross = Layer("cross");
  eatest::Rng rng(6);
  eatest::LayerIo io;
  io.Make(Info(cross), 2, 3, rng);
  RunArgs a = io.Args(0);
  a.q_len = 0;
  EXPECT_EQ(interp_.Run(cross, a), Status::kInvalidArgument);
  a.q_len = -1;
  EXPECT_EQ(interp_.Run(cross, a), Status::kInvalidArgument);
  a = io.Args(0);
  a.kv_len = 0;
  EXPECT_EQ(interp_.Run(cross, a), Status::kInvalidArgument);
  a.kv_len = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(interp_.Run(cross, a), Status::kInvalidArgument);
  // Negative kv_valid_len means "all keys valid", like 0.
  a = io.Args(-5);
  ASSERT_EQ(interp_.Run(cross, a), Status::kOk);
  const std::vector<uint8_t> neg = io.output;
  ASSERT_EQ(interp_.Run(cross, io.Args(0)), Status::kOk);
  EXPECT_EQ(io.output, neg);
  EXPECT_EQ(interp_.Run(cross, io.Args(4)), Status::kInvalidArgument);  // > kv_len
  // CacheKeys: zero / negative / oversized kv_len.
  EXPECT_EQ(interp_.CacheKeys(cross, io.key.data(), io.value.data(), 0, 0),
            Status::kLengthExceedsPlan);
  EXPECT_EQ(interp_.CacheKeys(cross, io.key.data(), io.value.data(), -3, 0),
            Status::kLengthExceedsPlan);
  EXPECT_EQ(interp_.CacheKeys(cross, io.key.data(), io.value.data(), 3, 4),
            Status::kInvalidArgument);
}

TEST_F(Robustness, LengthsOverThePlan) {
  SetUpModel("fixture_int8");
  const int cross = Layer("cross");
  const LayerInfo info = Info(cross);
  eatest::Rng rng(7);
  eatest::LayerIo io;
  io.Make(info, info.max_q_len + 1, info.max_kv_len + 1, rng);
  RunArgs a = io.Args(0);
  EXPECT_EQ(interp_.Run(cross, a), Status::kLengthExceedsPlan);
  a.q_len = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(interp_.Run(cross, a), Status::kLengthExceedsPlan);
  EXPECT_EQ(interp_.CacheKeys(cross, io.key.data(), io.value.data(), info.max_kv_len + 1, 0),
            Status::kLengthExceedsPlan);
  // Self-attention: kv_len must be 0 or q_len.
  const int self = Layer("self_pad");
  eatest::LayerIo s;
  s.Make(Info(self), 4, 4, rng);
  RunArgs b = s.Args(0);
  b.kv_len = 3;
  EXPECT_EQ(interp_.Run(self, b), Status::kInvalidArgument);
  // Caps given to Init are a plan too.
  AlignedBuffer small(model_.ArenaBytesFor(2, 3));
  Interpreter capped;
  ASSERT_EQ(capped.Init(&model_, small.data(), small.size(), 2, 3), Status::kOk) << capped.error();
  eatest::LayerIo c;
  c.Make(info, 3, 3, rng);
  EXPECT_EQ(capped.Run(cross, c.Args(0)), Status::kLengthExceedsPlan);
  c.Make(info, 2, 4, rng);
  EXPECT_EQ(capped.Run(cross, c.Args(0)), Status::kLengthExceedsPlan);
  c.Make(info, 2, 3, rng);
  EXPECT_EQ(capped.Run(cross, c.Args(0)), Status::kOk) << capped.error();
}

// ------------------------------------------------------------- aliasing ----

TEST_F(Robustness, OutputOverlappingAnInputIsRejected) {
  SetUpModel("fixture_int8");
  for (const char* name : {"self_pad", "cross", "additive", "luong", "pool"}) {
    const int layer = Layer(name);
    eatest::Rng rng(8);
    eatest::LayerIo io;
    io.Make(Info(layer), 2, 3, rng);
    RunArgs a = io.Args(0);
    std::vector<uint8_t>& in = io.query.empty() ? io.key : io.query;
    // Output in place over the input, and starting in its last byte.
    a.output = in.data();
    EXPECT_EQ(interp_.Run(layer, a), Status::kInvalidArgument) << name;
    EXPECT_NE(std::string(interp_.error()).find("overlaps"), std::string::npos) << interp_.error();
    a.output = in.data() + in.size() - 1;
    EXPECT_EQ(interp_.Run(layer, a), Status::kInvalidArgument) << name;
    // Weights over the input or over the output.
    a = io.Args(0);
    a.attn_weights = in.data();
    EXPECT_EQ(interp_.Run(layer, a), Status::kInvalidArgument) << name;
    a = io.Args(0);
    a.attn_weights = io.output.data();
    EXPECT_EQ(interp_.Run(layer, a), Status::kInvalidArgument) << name;
    EXPECT_EQ(interp_.Run(layer, io.Args(0)), Status::kOk) << name << ": " << interp_.error();
  }
}

TEST_F(Robustness, AdjacentBuffersAreFine) {
  SetUpModel("fixture_int8");
  const int luong = Layer("luong");
  const LayerInfo info = Info(luong);
  const int q = 2, kv = 3;
  const size_t qb = q * info.query_dim, kb = kv * info.key_dim, vb = kv * info.value_dim,
               ob = q * info.output_dim;
  std::vector<uint8_t> all(qb + kb + vb + ob, 1);
  RunArgs a = {};
  a.query = all.data();
  a.key = all.data() + qb;
  a.value = all.data() + qb + kb;
  a.output = all.data() + qb + kb + vb;
  a.q_len = q;
  a.kv_len = kv;
  EXPECT_EQ(interp_.Run(luong, a), Status::kOk) << interp_.error();
  // Key and value may alias each other (they are only read).
  a.value = a.key;
  if (info.value_dim == info.key_dim) {
    EXPECT_EQ(interp_.Run(luong, a), Status::kOk) << interp_.error();
  }
}

TEST_F(Robustness, BuffersInsideTheArenaAreRejected) {
  SetUpModel("fixture_int8");
  const int pool = Layer("pool");
  eatest::Rng rng(9);
  eatest::LayerIo io;
  io.Make(Info(pool), 1, 4, rng);
  RunArgs a = io.Args(0);
  a.output = arena_.data() + arena_.size() - 1;
  EXPECT_EQ(interp_.Run(pool, a), Status::kInvalidArgument);
  a = io.Args(0);
  a.attn_weights = arena_.data();
  EXPECT_EQ(interp_.Run(pool, a), Status::kInvalidArgument);
  a = io.Args(0);
  a.key = arena_.data() + 16;
  EXPECT_EQ(interp_.Run(pool, a), Status::kInvalidArgument);
  const int cross = Layer("cross");
  eatest::LayerIo c;
  c.Make(Info(cross), 2, 3, rng);
  EXPECT_EQ(interp_.CacheKeys(cross, arena_.data(), c.value.data(), 3, 0), Status::kInvalidArgument);
  EXPECT_EQ(interp_.CacheKeys(cross, c.key.data(), arena_.data(), 3, 0), Status::kInvalidArgument);
  EXPECT_EQ(interp_.CacheKeys(cross, c.key.data(), c.value.data(), 3, 0), Status::kOk);
}

// ------------------------------------------------------------ alignment ----

TEST_F(Robustness, MisalignedFloatBuffersAreRejected) {
  SetUpModel("fixture_f32");
  const int luong = Layer("luong");
  const LayerInfo info = Info(luong);
  eatest::Rng rng(10);
  eatest::LayerIo io;
  io.Make(info, 2, 3, rng);
  std::vector<uint8_t> shifted(io.query.size() + 4);
  std::memcpy(shifted.data() + 1, io.query.data(), io.query.size());
  RunArgs a = io.Args(0);
  a.query = shifted.data() + 1;
  EXPECT_EQ(interp_.Run(luong, a), Status::kInvalidArgument);
  std::vector<uint8_t> out(io.output.size() + 4);
  a = io.Args(0);
  a.output = out.data() + 2;
  EXPECT_EQ(interp_.Run(luong, a), Status::kInvalidArgument);
  a = io.Args(0);
  a.attn_weights = io.weights.data() + 1;
  EXPECT_EQ(interp_.Run(luong, a), Status::kInvalidArgument);
  EXPECT_EQ(interp_.Run(luong, io.Args(0)), Status::kOk);
}

// int8 inputs and outputs may sit at any address and give the same result.
TEST_F(Robustness, MisalignedInt8BuffersGiveTheSameResult) {
  SetUpModel("fixture_int8");
  const int luong = Layer("luong");
  eatest::Rng rng(11);
  eatest::LayerIo io;
  io.Make(Info(luong), 2, 3, rng);
  ASSERT_EQ(interp_.Run(luong, io.Args(0, false)), Status::kOk);
  const std::vector<uint8_t> expect = io.output;
  std::vector<uint8_t> q(io.query.size() + 1), k(io.key.size() + 3), out(io.output.size() + 1);
  std::memcpy(q.data() + 1, io.query.data(), io.query.size());
  std::memcpy(k.data() + 3, io.key.data(), io.key.size());
  RunArgs a = io.Args(0, false);
  a.query = q.data() + 1;
  a.key = k.data() + 3;
  a.output = out.data() + 1;
  ASSERT_EQ(interp_.Run(luong, a), Status::kOk) << interp_.error();
  EXPECT_EQ(0, std::memcmp(out.data() + 1, expect.data(), expect.size()));
  // Q15 weights are uint16: they need 2-byte alignment.
  a.attn_weights = io.weights.data() + 1;
  EXPECT_EQ(interp_.Run(luong, a), Status::kInvalidArgument);
}

TEST_F(Robustness, MisalignedArenaAndModelBuffer) {
  SetUpModel("fixture_int8");
  AlignedBuffer arena(model_.arena_bytes() + 16, 8);
  Interpreter other;
  EXPECT_EQ(other.Init(&model_, arena.data(), model_.arena_bytes()), Status::kInvalidArgument);
  EXPECT_EQ(other.Run(0, RunArgs{}), Status::kNotReady);
  AlignedBuffer exact(model_.arena_bytes());
  EXPECT_EQ(other.Init(&model_, exact.data(), model_.arena_bytes() - 1), Status::kArenaTooSmall);
  EXPECT_EQ(other.Init(&model_, nullptr, model_.arena_bytes()), Status::kInvalidArgument);
  EXPECT_EQ(other.Init(&model_, exact.data(), model_.arena_bytes(), -1, 0), Status::kInvalidArgument);
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath("fixture_int8"), &file, 4));
  Model m;
  EXPECT_EQ(m.Load(file.data(), file.size()), Status::kInvalidArgument);
  EXPECT_FALSE(m.loaded());
  EXPECT_EQ(other.Init(&m, exact.data(), exact.size()), Status::kNotReady);
}

TEST_F(Robustness, BadLayerIndexAndUnsupportedCache) {
  SetUpModel("fixture_int8");
  eatest::Rng rng(12);
  eatest::LayerIo io;
  io.Make(Info(0), 2, 2, rng);
  EXPECT_EQ(interp_.Run(-1, io.Args(0)), Status::kInvalidArgument);
  EXPECT_EQ(interp_.Run(model_.num_layers(), io.Args(0)), Status::kInvalidArgument);
  EXPECT_EQ(interp_.CacheKeys(Layer("luong"), io.query.data(), nullptr, 1, 0), Status::kInvalidArgument);
  RunArgs a = io.Args(0);
  a.use_cached_keys = 1;
  EXPECT_EQ(interp_.Run(Layer("cross"), a), Status::kNotReady);
}

}  // namespace

// ------------------------------------------------ regression: model load ----

namespace fbs = edgeattn::fb;

// A layer whose union type names a kind but whose options table is absent
// passes the FlatBuffers verifier (union values are optional); Load must reject it
// (found by tests/property mutation test: pooling_int8.eatn with one byte changed;
// before the fix VerifyLayer dereferenced options_as_*() == nullptr).
TEST(ModelLoadRegression, LayerWithoutOptionsIsRejected) {
  for (auto type : {fbs::LayerOptions::MultiHeadAttention, fbs::LayerOptions::AdditiveAttention,
                    fbs::LayerOptions::LuongAttention, fbs::LayerOptions::AttentionPooling}) {
    flatbuffers::FlatBufferBuilder fbb;
    const auto name = fbb.CreateString("broken");
    fbs::LayerBuilder lb(fbb);
    lb.add_name(name);
    lb.add_dtype(fbs::DType::S8);
    lb.add_max_q_len(1);
    lb.add_max_kv_len(4);
    lb.add_options_type(type);  // but no add_options()
    const auto layer = lb.Finish();
    const auto layers = fbb.CreateVector(&layer, 1);
    fbb.ForceVectorAlignment(0, 1, 64);
    const auto data = fbb.CreateVector(static_cast<const uint8_t*>(nullptr), 0);
    const auto root = fbs::CreateModel(fbb, EA_FORMAT_VERSION, 0, layers, 0, data);
    fbs::FinishModelBuffer(fbb, root);
    AlignedBuffer file(fbb.GetSize() + 4);  // + the file checksum
    std::memcpy(file.data(), fbb.GetBufferPointer(), fbb.GetSize());
    eatest::SealModel(&file);
    Model model;
    EXPECT_EQ(model.Load(file.data(), file.size()), Status::kInvalidModel)
        << fbs::EnumNameLayerOptions(type);
    EXPECT_FALSE(model.loaded());
    EXPECT_NE(model.error()[0], '\0');
  }
}
