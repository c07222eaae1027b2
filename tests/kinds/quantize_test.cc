// The quantize kind (float rows into an int8 model) and, in the same chain,
// dequantize: the bytes quantize writes against the contract's formula
// evaluated here (nearbyint of x / scale in single precision, plus the zero
// point, saturated) and hand-picked values (saturation at both ends), NaN
// and infinity refused by name, f32 models copying; a chain quantize ->
// linear -> dequantize run with one Invoke, float in and float out, against
// the same layers called one by one and against the test's own float64
// linear layer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;

constexpr int kIn = 6, kOut = 4, kRows = 5;

struct Converted {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> file, arena;
  edgeattn::Model model;
  edgeattn::Interpreter interp;
};

// Converts `spec` (weights w, calibration `calib`) and loads it in place.
void convert_and_load(const std::string& spec, const fixtures::Entries& w, const fixtures::Entries& calib,
                      const std::string& dtype, const std::string& tag, Converted* c) {
  c->bytes = read_file(fixtures::convert_files(fixtures::temp_dir(tag), w, spec, calib, dtype));
  c->file.assign(c->bytes.size() / 8 + 1, 0);
  std::memcpy(c->file.data(), c->bytes.data(), c->bytes.size());
  ASSERT_EQ(c->model.Load(c->file.data(), c->bytes.size()), edgeattn::Status::kOk) << c->model.error();
  c->arena.assign(c->model.arena_bytes() / 8 + 2, 0);
  ASSERT_EQ(c->interp.Init(&c->model, c->arena.data(), c->model.arena_bytes()), edgeattn::Status::kOk)
      << c->interp.error();
}

const std::string kAlone = R"({"layers": [{"name": "q", "kind": "quantize", "dim": 6, "max_q_len": 5}]})";
const fixtures::Entries kCalib = {
    {"q.query", fixtures::make("<f4", {1, 2, 6}, {-2.0, 1.0, 0.5, 0.0, 1.5, -1.0, 2.0, 0.25, -0.5, 1.0, -1.5, 0.75})}};

TEST(Quantize, BytesFollowTheContract) {
  Converted c;
  convert_and_load(kAlone, {}, kCalib, "int8", "quantize_bytes", &c);
  edgeattn::LayerInfo info = {};
  ASSERT_EQ(c.model.GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.input_dtype, EA_F32);
  EXPECT_EQ(info.output_dtype, EA_S8);
  const float s = info.output_quant.scale;
  const int32_t zp = info.output_quant.zero_point;
  ASSERT_GT(s, 0.0f);
  // Calibrated values, values between, beyond the range at both ends, -0.
  std::vector<float> x = {-2.0f, 2.0f, 0.0f, -0.0f, 0.3f, -0.7f, 1.9999f, -1.2345f, 0.01f, -0.01f,
                          50.0f, -50.0f, 1e30f, -1e30f, 3.0f, -3.0f, 0.123f, 0.777f, -0.5f, 1.0f,
                          0.6f, -0.6f, 1.7f, -1.7f, 2.2f, -2.2f, 0.0001f, 1.5f, -1.5f, 0.9f};
  ASSERT_EQ(x.size(), static_cast<size_t>(kRows * kIn));
  std::vector<int8_t> got(x.size(), 99);
  edgeattn::RunArgs a = {};
  a.query = x.data();
  a.q_len = kRows;
  a.output = got.data();
  ASSERT_EQ(c.interp.Run(0, a), edgeattn::Status::kOk) << c.interp.error();
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = std::nearbyint(static_cast<double>(x[i] / s)) + zp;  // the division in float, as the contract
    EXPECT_EQ(got[i], static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, r)))) << "value " << x[i];
  }
  EXPECT_EQ(got[10], 127);   // 50: beyond the range, saturated
  EXPECT_EQ(got[11], -128);  // -50
  EXPECT_EQ(got[12], 127);   // 1e30: saturated, no overflow
  EXPECT_EQ(got[13], -128);
  EXPECT_EQ(got[2], static_cast<int8_t>(zp));  // 0 and -0: the zero point
  EXPECT_EQ(got[3], static_cast<int8_t>(zp));
}

TEST(Quantize, NanAndInfinityAreRefusedByName) {
  Converted c;
  convert_and_load(kAlone, {}, kCalib, "int8", "quantize_nan", &c);
  std::vector<float> x(static_cast<size_t>(kRows) * kIn, 0.5f);
  std::vector<int8_t> y(x.size());
  edgeattn::RunArgs a = {};
  a.query = x.data();
  a.q_len = kRows;
  a.output = y.data();
  x[13] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(c.interp.Run(0, a), edgeattn::Status::kInvalidArgument);
  EXPECT_NE(std::string(c.interp.error()).find("layer 'q': input value 13 (row 2) is NaN"), std::string::npos)
      << c.interp.error();
  x[13] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(c.interp.Run(0, a), edgeattn::Status::kInvalidArgument);
  EXPECT_NE(std::string(c.interp.error()).find("is infinite"), std::string::npos) << c.interp.error();
}

TEST(Quantize, Float32ModelCopies) {
  Converted c;
  convert_and_load(kAlone, {}, kCalib, "f32", "quantize_f32", &c);
  std::vector<float> x(static_cast<size_t>(kRows) * kIn), y(x.size(), -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 5.0f;
  edgeattn::RunArgs a = {};
  a.query = x.data();
  a.q_len = kRows;
  a.output = y.data();
  ASSERT_EQ(c.interp.Run(0, a), edgeattn::Status::kOk) << c.interp.error();
  EXPECT_EQ(x, y);
}

// quantize -> linear -> dequantize: float rows in, float rows out, one Invoke.
struct FloatEnds {
  fixtures::Rng rng{91};
  Array w = fixtures::random_weight(rng, {size_t(kOut), size_t(kIn)}, 1.5);
  Array b = fixtures::random_weight(rng, {size_t(kOut)}, 0.5);
  Array x = fixtures::random_normal(rng, {16, size_t(kRows), size_t(kIn)}, 1.0);
  const std::string spec = R"({"layers": [
    {"name": "in", "kind": "quantize", "dim": 6, "max_q_len": 5},
    {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 5, "input": "in"},
    {"name": "out", "kind": "dequantize", "dim": 4, "max_q_len": 5, "input": "head"}]})";
  fixtures::Entries weights() const { return {{"head.weight", w}, {"head.bias", b}}; }
  fixtures::Entries calib() const { return {{"in.query", x}}; }
};

TEST(Quantize, FloatEndsRunInOneInvoke) {
  const FloatEnds m;
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(dtype);
    Converted c;
    convert_and_load(m.spec, m.weights(), m.calib(), dtype, "quantize_ends_" + dtype, &c);
    edgeattn::GraphInfo g = {};
    ASSERT_EQ(c.model.GetGraphInfo(&g), edgeattn::Status::kOk) << c.model.error();
    EXPECT_EQ(g.input_dtype, EA_F32);
    EXPECT_EQ(g.output_dtype, EA_F32);
    double e2 = 0, r2 = 0;
    for (int i = 0; i < 16; ++i) {
      std::vector<float> x(static_cast<size_t>(kRows) * kIn), y(static_cast<size_t>(kRows) * kOut);
      for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(m.x.data[i * x.size() + k]);
      edgeattn::ModelInputs in = {x.data(), kRows, 0, nullptr, 0, 0};
      edgeattn::ModelOutputs out = {y.data(), 0};
      ASSERT_EQ(c.interp.Invoke(in, &out), edgeattn::Status::kOk) << c.interp.error();
      ASSERT_EQ(out.num_rows, kRows);
      // The same three layers one by one: the same floats.
      std::vector<uint8_t> mid(static_cast<size_t>(kRows) * kOut * 4), bytes(x.size() * 4);
      std::vector<float> y2(y.size());
      edgeattn::RunArgs a = {};
      a.q_len = kRows;
      a.query = x.data();
      a.output = bytes.data();
      ASSERT_EQ(c.interp.Run(0, a), edgeattn::Status::kOk) << c.interp.error();
      a.query = bytes.data();
      a.output = mid.data();
      ASSERT_EQ(c.interp.Run(1, a), edgeattn::Status::kOk) << c.interp.error();
      a.query = mid.data();
      a.output = y2.data();
      ASSERT_EQ(c.interp.Run(2, a), edgeattn::Status::kOk) << c.interp.error();
      EXPECT_EQ(std::memcmp(y.data(), y2.data(), y.size() * 4), 0) << "sample " << i;
      for (int r = 0; r < kRows; ++r) {  // the test's own float64 linear layer
        for (int o = 0; o < kOut; ++o) {
          double acc = m.b.data[static_cast<size_t>(o)];
          for (int k = 0; k < kIn; ++k) acc += m.w.data[static_cast<size_t>(o) * kIn + k] * x[static_cast<size_t>(r) * kIn + k];
          const double got = y[static_cast<size_t>(r) * kOut + o];
          e2 += (got - acc) * (got - acc);
          r2 += acc * acc;
        }
      }
    }
    // f32: rounding only; int8: the input and output steps and the weights' (a few per cent at most).
    EXPECT_LE(std::sqrt(e2 / r2), dtype == "f32" ? 1e-6 : 0.03);
  }
}

}  // namespace
