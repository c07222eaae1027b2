// Every single-byte change of a bundled model file, with the file checksum
// re-sealed afterwards (so the change reaches the FlatBuffers verifier and the
// semantic checks behind the checksum, as a buggy or malicious writer's file
// would; integrity_test.cc shows the checksum refuses every unsealed flip):
// Load either fails with a
// status and a non-empty message, or the model runs every layer (capped
// lengths, valid arguments) with EA_OK and inside its buffers (checked by
// ASan in the sanitize stage; guard bytes around the outputs are checked
// here too).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "test_models.h"

namespace {

using edgeattn::Status;
using eatest::AlignedBuffer;

struct Stats {
  long mutations = 0, loaded = 0, runs = 0;
};

constexpr size_t kMaxArena = 4u << 20;
constexpr uint8_t kGuard = 0xA5;

// Loads `buf` and, if it verifies, runs every layer at small lengths.
void LoadAndRun(const AlignedBuffer& buf, Stats* stats, const std::string& what) {
  edgeattn::Model model;
  const Status s = model.Load(buf.data(), buf.size());
  if (s != Status::kOk) {
    ASSERT_FALSE(model.loaded()) << what;
    ASSERT_NE(model.error()[0], '\0') << what << ": failure without a message";
    return;
  }
  ++stats->loaded;
  const int cap = 4;
  const size_t need = model.ArenaBytesFor(cap, cap);
  if (need > kMaxArena) return;
  AlignedBuffer arena(need);
  edgeattn::Interpreter interp;
  ASSERT_EQ(interp.Init(&model, arena.data(), need, cap, cap), Status::kOk) << what << interp.error();
  eatest::Rng rng(7);
  for (int li = 0; li < model.num_layers(); ++li) {
    edgeattn::LayerInfo info;
    ASSERT_EQ(model.GetLayerInfo(li, &info), Status::kOk);
    const int ql = model.CappedQLen(li, cap), kvl = model.CappedKvLen(li, cap);
    if (static_cast<size_t>(ql + kvl) * (info.query_dim + info.key_dim + info.value_dim + info.output_dim) > (1u << 22)) continue;
    eatest::LayerIo io;
    io.Make(info, ql, kvl, rng);
    // Outputs with guard bytes behind them.
    const size_t out_bytes = io.output.size(), w_bytes = io.weights.size();
    io.output.resize(out_bytes + 16, kGuard);
    io.weights.resize(w_bytes + 16, kGuard);
    ASSERT_EQ(interp.Run(li, io.Args(0)), Status::kOk) << what << ": " << interp.error();
    for (size_t i = 0; i < 16; ++i) {
      ASSERT_EQ(io.output[out_bytes + i], kGuard) << what << ": output overrun";
      ASSERT_EQ(io.weights[w_bytes + i], kGuard) << what << ": weights overrun";
    }
    ++stats->runs;
  }
}

// Deterministic: every listed position and value, no wall-clock budget (a
// time limit would make the test's verdict depend on machine load).
void MutateAll(const std::string& name, const std::vector<uint8_t>& values) {
  AlignedBuffer original;
  if (!eatest::ReadFile(eatest::ModelPath(name), &original)) {
    GTEST_SKIP() << name << " not built";
  }
  Stats stats;
  AlignedBuffer buf = original;
  // Bytes inside Model.data (the weights) are sampled (every 61st) in files
  // over 4 KB: any weight value is valid, so they exercise the kernels, not
  // the checks. All other positions are tried, except the 4 checksum bytes.
  const auto* blob = edgeattn::fb::GetModel(original.data())->data();
  const size_t data_begin = static_cast<size_t>(blob->data() - original.data());
  const size_t data_end = data_begin + blob->size();
  size_t pos = 0, tried = 0;
  const size_t body = original.size() - 4;
  for (; pos < body; ++pos) {
    if (original.size() > 4096 && pos >= data_begin && pos < data_end &&
        (pos - data_begin) % 61 != 0) {
      continue;
    }
    ++tried;
    for (uint8_t v : values) {
      const uint8_t b = static_cast<uint8_t>(values.size() > 8 ? v : original.data()[pos] ^ v);
      if (b == original.data()[pos]) continue;
      buf.data()[pos] = b;
      eatest::SealModel(&buf);
      LoadAndRun(buf, &stats, name + " byte " + std::to_string(pos) + " = " + std::to_string(b));
      if (::testing::Test::HasFatalFailure()) return;
      ++stats.mutations;
    }
    buf.data()[pos] = original.data()[pos];
  }
  std::printf("%s: %zu/%zu byte positions (%zu tried; weight bytes [%zu, %zu) sampled), "
              "%ld mutations, %ld loaded, %ld layer runs\n",
              name.c_str(), pos, original.size(), tried, data_begin, data_end, stats.mutations,
              stats.loaded, stats.runs);
  EXPECT_GT(stats.mutations, 0) << name;

}

std::vector<uint8_t> AllValues() {
  std::vector<uint8_t> v;
  for (int i = 0; i < 256; ++i) v.push_back(static_cast<uint8_t>(i));
  return v;
}

// pooling int8: every position, every value.
TEST(Mutation, PoolingInt8EveryByteEveryValue) { MutateAll("pooling_int8", AllValues()); }
TEST(Mutation, PoolingF32EveryByteEveryValue) { MutateAll("pooling_f32", AllValues()); }
// Larger files: every position, three XOR patterns (low bit, high bit, all bits).
TEST(Mutation, BahdanauInt8EveryByte) { MutateAll("bahdanau_int8", {0x01, 0x80, 0xFF}); }
TEST(Mutation, FixtureInt8EveryByte) { MutateAll("fixture_int8", {0x01, 0x80, 0xFF}); }
TEST(Mutation, FixtureF32EveryByte) { MutateAll("fixture_f32", {0x01, 0x80, 0xFF}); }
TEST(Mutation, TransformerInt8EveryByte) { MutateAll("transformer_int8", {0x01, 0x80, 0xFF}); }

}  // namespace
