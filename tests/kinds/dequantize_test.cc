// The dequantize kind (an int8 model's rows out as floats): each byte q
// becomes scale * (q - zero_point), computed here in single precision, for
// every byte value; f32 models copy. Its use at a model's end, after a
// quantize and a linear layer in one Invoke, is in quantize_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"

namespace {
namespace dequantize_test {  // tests/CMakeLists.txt: unity builds

using namespace edgeattn::convert;

const std::string kSpec = R"({"layers": [{"name": "dq", "kind": "dequantize", "dim": 16, "max_q_len": 16}]})";

std::vector<uint8_t> convert(const std::string& dtype, const std::string& tag) {
  const std::string dir = fixtures::temp_dir(tag);
  save_safetensors(dir + "/weights.safetensors", {});
  fixtures::write_text(dir + "/spec.json", kSpec);
  std::vector<double> calib(32);
  for (size_t i = 0; i < calib.size(); ++i) calib[i] = -3.0 + 0.2 * static_cast<double>(i);  // [-3, 3.2]
  save_npz(dir + "/calib.npz", {{"dq.query", fixtures::make("<f4", {1, 2, 16}, calib)}});
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = dtype;
  o.output = dir + "/dq_" + dtype + ".eatn";
  std::ostringstream report;
  run_convert(o, report);
  return read_file(o.output);
}

struct Loaded {
  std::vector<uint64_t> file, arena;
  edgeattn::Model model;
  edgeattn::Interpreter interp;
  explicit Loaded(const std::vector<uint8_t>& bytes) : file(bytes.size() / 8 + 1) {
    std::memcpy(file.data(), bytes.data(), bytes.size());
    EXPECT_EQ(model.Load(file.data(), bytes.size()), edgeattn::Status::kOk) << model.error();
    arena.assign(model.arena_bytes() / 8 + 2, 0);
    EXPECT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), edgeattn::Status::kOk) << interp.error();
  }
};

TEST(Dequantize, EveryByteGivesScaleTimesItsSteps) {
  Loaded m(convert("int8", "dequantize_bytes"));
  edgeattn::LayerInfo info = {};
  ASSERT_EQ(m.model.GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.input_dtype, EA_S8);
  EXPECT_EQ(info.output_dtype, EA_F32);
  std::vector<int8_t> q(256);
  for (int i = 0; i < 256; ++i) q[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  std::vector<float> y(256, -1.0f);
  edgeattn::RunArgs a = {};
  a.query = q.data();
  a.q_len = 16;
  a.output = y.data();
  ASSERT_EQ(m.interp.Run(0, a), edgeattn::Status::kOk) << m.interp.error();
  const float s = info.query_quant.scale;
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(y[static_cast<size_t>(i)], s * static_cast<float>(i - 128 - info.query_quant.zero_point)) << "byte " << i - 128;
  }
  EXPECT_NEAR(y[0], -3.0, 0.1);  // the calibrated range's ends
  EXPECT_NEAR(y[255], 3.2, 0.1);
}

TEST(Dequantize, Float32ModelCopies) {
  Loaded m(convert("f32", "dequantize_f32"));
  std::vector<float> x(256), y(256, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.5f - 0.01f * static_cast<float>(i);
  edgeattn::RunArgs a = {};
  a.query = x.data();
  a.q_len = 16;
  a.output = y.data();
  ASSERT_EQ(m.interp.Run(0, a), edgeattn::Status::kOk) << m.interp.error();
  EXPECT_EQ(x, y);
}

}  // namespace dequantize_test
}  // namespace
