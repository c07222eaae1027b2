// A runtime built with only some layer kinds (CMake EA_LAYER_KINDS; here
// mha;additive, see tests/runtime/CMakeLists.txt): a model with a kind left
// out is refused at load with EA_UNSUPPORTED and a message naming the kind
// and the option, and the kinds kept still load and run.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "test_models.h"

namespace {

using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::Model;
using edgeattn::Status;
using eatest::AlignedBuffer;

TEST(LayerKinds, LeftOutKindIsRefusedWithItsName) {
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath("pooling_int8"), &file));
  Model model;
  EXPECT_EQ(model.Load(file.data(), file.size()), Status::kUnsupported);
  const std::string error = model.error();
  EXPECT_NE(error.find("attention pooling"), std::string::npos) << error;
  EXPECT_NE(error.find("EA_LAYER_KINDS"), std::string::npos) << error;
}

// Every kind but the two named is left out, the last ones in the list too.
TEST(LayerKinds, EveryKindNotNamedIsLeftOut) {
  AlignedBuffer file;
  ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath("encoder_block_int8"), &file));
  Model model;
  EXPECT_EQ(model.Load(file.data(), file.size()), Status::kUnsupported);
  const std::string error = model.error();
  EXPECT_NE(error.find("(encoder_block)"), std::string::npos) << error;
}

TEST(LayerKinds, KeptKindsLoadAndRun) {
  for (const char* name : {"bahdanau_int8", "transformer_int8"}) {
    AlignedBuffer file;
    ASSERT_TRUE(eatest::ReadFile(eatest::ModelPath(name), &file));
    Model model;
    ASSERT_EQ(model.Load(file.data(), file.size()), Status::kOk) << name << ": " << model.error();
    AlignedBuffer arena(model.arena_bytes());
    Interpreter interp;
    ASSERT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), Status::kOk) << interp.error();
    eatest::Rng rng(3);
    for (int l = 0; l < model.num_layers(); ++l) {
      LayerInfo info = {};
      ASSERT_EQ(model.GetLayerInfo(l, &info), Status::kOk);
      eatest::LayerIo io;
      io.Make(info, info.max_q_len, info.max_kv_len, rng);
      ASSERT_EQ(interp.Run(l, io.Args(-1)), Status::kOk) << name << " " << info.name << ": " << interp.error();
    }
  }
}

}  // namespace
