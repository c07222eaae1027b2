// A converted test model loaded into an interpreter over an exact-size arena
// (the runtime tests' common setup).
#ifndef EDGEATTN_TESTS_RUNTIME_LOADED_MODEL_H_
#define EDGEATTN_TESTS_RUNTIME_LOADED_MODEL_H_

#include <gtest/gtest.h>

#include <string>

#include "edgeattn/edgeattn.hpp"
#include "test_models.h"

namespace eatest {

// A loaded model plus an interpreter over an exact-size arena.
struct Loaded {
  AlignedBuffer file;
  edgeattn::Model model;
  AlignedBuffer arena;
  edgeattn::Interpreter interp;

  ::testing::AssertionResult Load(const std::string& name) {
    if (!eatest::ReadFile(eatest::ModelPath(name), &file)) {
      return ::testing::AssertionFailure() << "cannot read " << eatest::ModelPath(name);
    }
    const edgeattn::Status s = model.Load(file.data(), file.size());
    if (s != edgeattn::Status::kOk) {
      return ::testing::AssertionFailure() << name << ": Load: " << edgeattn::status_string(s) << ": "
                                           << model.error();
    }
    arena.Reset(model.arena_bytes());
    const edgeattn::Status i = interp.Init(&model, arena.data(), model.arena_bytes());
    if (i != edgeattn::Status::kOk) {
      return ::testing::AssertionFailure() << name << ": Init: " << edgeattn::status_string(i) << ": "
                                           << interp.error();
    }
    return ::testing::AssertionSuccess();
  }
  edgeattn::LayerInfo Info(int layer) {
    edgeattn::LayerInfo info = {};
    EXPECT_EQ(model.GetLayerInfo(layer, &info), edgeattn::Status::kOk);
    return info;
  }
};

}  // namespace eatest

#endif  // EDGEATTN_TESTS_RUNTIME_LOADED_MODEL_H_
