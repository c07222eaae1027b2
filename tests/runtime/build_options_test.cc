// A runtime built with paths compiled out (here EA_INT8_ONLY,
// EA_WITH_INT16_STREAM=OFF and EA_WITH_BRANCH_NORM=OFF, see
// tests/runtime/CMakeLists.txt; what the
// Cortex-M whole-model firmware links): a model that needs a path left out is
// refused at load with EA_UNSUPPORTED and a message naming the layer and the
// option, never run; int8-stream models still load and run. (Their bytes
// against the full runtime: the Cortex-M firmware's cortex_m.model_golden.)
#include <gtest/gtest.h>

#include <string>

#include "edgeattn/edgeattn.hpp"
#include "test_models.h"

namespace {

using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::Status;
using eatest::AlignedBuffer;

// Loads the converted model `name` (tests/runtime/CMakeLists.txt converts
// every one this file reads; a missing file fails the test).
Status Load(const char* name, Model* model, AlignedBuffer* file) {
  EXPECT_TRUE(eatest::ReadFile(eatest::ModelPath(name), file)) << name;
  return model->Load(file->data(), file->size());
}

TEST(BuildOptions, Int16StreamModelIsRefusedNamingTheOption) {
  // A standalone block on the stream, and a whole ViT whose positions layer writes it.
  for (const char* name : {"encoder_block_int8_res16", "digits_vit_int8_res16"}) {
    AlignedBuffer file;
    Model model;
    EXPECT_EQ(Load(name, &model, &file), Status::kUnsupported) << name;
    const std::string error = model.error();
    EXPECT_NE(error.find("int16 residual stream"), std::string::npos) << error;
    EXPECT_NE(error.find("(EA_WITH_INT16_STREAM=OFF)"), std::string::npos) << error;
    EXPECT_EQ(error.rfind("layer '", 0), 0u) << error;  // names the layer
  }
}

// Torch-KWT's post-norm blocks on the int8 stream (branch_norm): refused by
// a runtime without that form, naming the block and the option.
TEST(BuildOptions, BranchNormModelIsRefusedNamingTheOption) {
  AlignedBuffer file;
  Model model;
  EXPECT_EQ(Load("fixture_kwt_int8_res8", &model, &file), Status::kUnsupported);
  const std::string error = model.error();
  EXPECT_NE(error.find("layer 'block0'"), std::string::npos) << error;
  EXPECT_NE(error.find("(EA_WITH_BRANCH_NORM=OFF)"), std::string::npos) << error;
}

TEST(BuildOptions, FloatModelIsRefusedNamingTheOption) {
  AlignedBuffer file;
  Model model;
  EXPECT_EQ(Load("fixture_f32", &model, &file), Status::kUnsupported);
  const std::string error = model.error();
  EXPECT_NE(error.find("float layer"), std::string::npos) << error;
  EXPECT_NE(error.find("(EA_INT8_ONLY=ON)"), std::string::npos) << error;
}

// The int8 stream: every layer of the standalone block file runs; a graph
// (decoder_chain: decoder block, LayerNorm, head) runs in one Invoke.
TEST(BuildOptions, Int8StreamModelsLoadAndRun) {
  {
    AlignedBuffer file;
    Model model;
    ASSERT_EQ(Load("encoder_block_int8", &model, &file), Status::kOk) << model.error();
    AlignedBuffer arena(model.arena_bytes());
    Interpreter interp;
    ASSERT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), Status::kOk) << interp.error();
    eatest::Rng rng(5);
    for (int l = 0; l < model.num_layers(); ++l) {
      LayerInfo info = {};
      ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
      if (info.input_dtype != EA_S8) continue;  // token ids, float rows: the model's ends
      eatest::LayerIo io;
      io.Make(info, info.max_q_len, info.max_kv_len, rng);
      ASSERT_EQ(interp.Run(l, io.Args(-1)), Status::kOk) << info.name << ": " << interp.error();
    }
  }
  AlignedBuffer file;
  Model model;
  ASSERT_EQ(Load("decoder_chain_int8", &model, &file), Status::kOk) << model.error();
  edgeattn::GraphInfo g;
  ASSERT_EQ(model.GetGraphInfo(&g), Status::kOk);
  AlignedBuffer arena(model.arena_bytes());
  Interpreter interp;
  ASSERT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), Status::kOk) << interp.error();
  eatest::Rng rng(7);
  eatest::GraphIo io;
  io.Make(g, rng);
  EXPECT_EQ(io.Run(interp), Status::kOk) << interp.error();
}

}  // namespace
