// Range mode (Interpreter::RunScaled / RunFloat, runtime/src/range_mode.cc):
// the same integers on every kernel path, R = 1 is exactly the static run,
// a run at R agrees with the static run on the same real inputs, and every
// misuse is a status with a message. Accuracy beyond the calibrated range
// against the float64 reference is bounded in tests/converter/calibration_test.cc
// (HeldOut.RangeModeKeepsScaledInputsNearTheInRangeError).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "loaded_model.h"
#include "test_models.h"

namespace {
namespace range_mode_test {  // tests/CMakeLists.txt: unity builds

using eatest::Loaded;
using eatest::Rng;
using edgeattn::Interpreter;
using edgeattn::LayerInfo;
using edgeattn::RunArgs;
using edgeattn::Status;

// Range mode scales the attention kinds' softmax and projections; models of
// the block kinds (models/encoder_block, models/decoder_chain,
// models/digits_vit, the generating transformer) are refused
// (RangeMode.BlockKinds).
std::vector<std::string> Int8Models() {
  std::vector<std::string> out;
  for (const std::string& m : eatest::AllModels()) {
    if (m.find("int8") != std::string::npos && m.find("encoder_block") == std::string::npos &&
        m.find("decoder_chain") == std::string::npos && m.find("digits_vit") == std::string::npos &&
        m.find("generate") == std::string::npos && m.find("kwt") == std::string::npos) {  // whole models
      out.push_back(m);
    }
  }
  return out;
}

// A loaded model whose arena also holds the range workspace.
struct RangeLoaded : Loaded {
  ::testing::AssertionResult LoadWithRange(const std::string& name) {
    ::testing::AssertionResult r = Load(name);
    if (!r) return r;
    const size_t bytes = model.arena_bytes() + model.RangeBytes(0, 0);
    arena.Reset(bytes);
    const Status s = interp.Init(&model, arena.data(), bytes);
    if (s != Status::kOk) return ::testing::AssertionFailure() << interp.error();
    return ::testing::AssertionSuccess();
  }
};

// Float inputs of one layer on the int8 grid of its input quantization times
// `factor`: x = factor * scale * (q - zp), q uniform int8. factor 1 stays in
// the calibrated range; factor > 1 goes beyond it.
struct FloatIo {
  std::vector<float> query, key, value, output;
  std::vector<uint16_t> weights;
  int q_len = 0, kv_len = 0;
  bool self_attention = false, pooling = false;

  void Make(const LayerInfo& info, float factor, Rng& rng) {
    pooling = info.kind == EA_LAYER_POOLING;
    self_attention = !info.cross;
    q_len = pooling ? 1 : info.max_q_len;
    kv_len = self_attention ? q_len : info.max_kv_len;
    auto fill = [&](std::vector<float>& v, size_t n, const edgeattn::Quant& q) {
      v.resize(n);
      for (float& x : v) {
        const int qi = static_cast<int>(static_cast<int8_t>(rng.next()));
        x = factor * q.scale * static_cast<float>(qi - q.zero_point);
      }
    };
    if (!pooling) fill(query, static_cast<size_t>(q_len) * info.query_dim, info.query_quant);
    if (!self_attention) fill(key, static_cast<size_t>(kv_len) * info.key_dim, info.key_quant);
    if (!self_attention && !pooling) {
      fill(value, static_cast<size_t>(kv_len) * info.value_dim, info.value_quant);
    }
    output.assign(static_cast<size_t>(q_len) * info.output_dim, -7.0f);
    weights.assign(static_cast<size_t>(info.num_heads) * q_len * kv_len, 0xCDCD);
  }
  RunArgs Args() {
    RunArgs a = {};
    a.query = query.empty() ? nullptr : query.data();
    a.key = key.empty() ? nullptr : key.data();
    a.value = value.empty() ? nullptr : value.data();
    a.q_len = q_len;
    a.kv_len = self_attention ? 0 : kv_len;
    a.output = output.data();
    a.attn_weights = weights.data();
    return a;
  }
};

// The int8 codes of a float tensor at quantization q (round half up), as the
// caller of RunScaled would make them at range R = factor.
std::vector<uint8_t> Quantize(const std::vector<float>& x, const edgeattn::Quant& q, double factor) {
  std::vector<uint8_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = std::floor(x[i] / (q.scale * factor) + 0.5) + q.zero_point;
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v)));
  }
  return out;
}

class RangeModeModel : public ::testing::TestWithParam<std::string> {};

// Inputs inside the calibrated range: R = 1 and RunFloat's output is exactly
// the dequantized static int8 run on the same codes; RunScaled at R = 1 is
// the static run.
// Output element i less its zero point: int8, or an mha layer's int16 output.
float OutputSteps(const LayerInfo& info, const std::vector<uint8_t>& out, size_t i) {
  if (info.output_dtype == EA_S16) {
    int16_t x = 0;
    std::memcpy(&x, &out[2 * i], 2);
    return static_cast<float>(x - info.output_quant.zero_point);
  }
  return static_cast<float>(static_cast<int8_t>(out[i]) - info.output_quant.zero_point);
}

TEST_P(RangeModeModel, InRangeIsTheStaticRun) {
  RangeLoaded m;
  ASSERT_TRUE(m.LoadWithRange(GetParam()));
  Rng rng(11);
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    SCOPED_TRACE(info.name);
    FloatIo f;
    f.Make(info, 1.0f, rng);
    uint32_t range = 0;
    ASSERT_EQ(m.interp.RunFloat(l, f.Args(), EA_RANGE_DYNAMIC, &range), Status::kOk) << m.interp.error();
    EXPECT_EQ(range, Interpreter::kRangeOne);
    eatest::LayerIo io;
    io.Make(info, f.q_len, f.kv_len, rng);
    if (!f.query.empty()) io.query = Quantize(f.query, info.query_quant, 1.0);
    if (!f.key.empty()) io.key = Quantize(f.key, info.key_quant, 1.0);
    if (!f.value.empty()) io.value = Quantize(f.value, info.value_quant, 1.0);
    ASSERT_EQ(m.interp.Run(l, io.Args(-1, true)), Status::kOk) << m.interp.error();
    for (size_t i = 0; i < f.output.size(); ++i) {
      const float want = info.output_quant.scale * OutputSteps(info, io.output, i);
      ASSERT_EQ(f.output[i], want) << i;
    }
    ASSERT_EQ(std::memcmp(f.weights.data(), io.weights.data(), io.weights.size()), 0);
    const std::vector<uint8_t> out = io.output, w = io.weights;
    ASSERT_EQ(m.interp.RunScaled(l, io.Args(-1, true), Interpreter::kRangeOne), Status::kOk)
        << m.interp.error();
    EXPECT_EQ(io.output, out);
    EXPECT_EQ(io.weights, w);
  }
}

// Inputs 1.5x beyond the calibrated range: RunFloat (dynamic, dynamic-pow2)
// and RunScaled at an arbitrary R give the same bytes on every kernel path
// this machine supports.
TEST_P(RangeModeModel, BitIdenticalOnEveryKernelPath) {
  namespace k = edgeattn::kernels;
  RangeLoaded m;
  ASSERT_TRUE(m.LoadWithRange(GetParam()));
  Rng rng(12);
  int paths = 0;
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    SCOPED_TRACE(info.name);
    FloatIo f;
    f.Make(info, 1.5f, rng);
    eatest::LayerIo io;
    io.Make(info, f.q_len, f.kv_len, rng);
    std::vector<float> ref_dyn, ref_pow2;
    std::vector<uint16_t> ref_w;
    std::vector<uint8_t> ref_scaled, ref_scaled_w;
    paths = 0;
    for (int p = 0; p < static_cast<int>(k::KernelPath::kCount); ++p) {
      const auto path = static_cast<k::KernelPath>(p);
      if (!k::set_kernel_path(path)) continue;
      ++paths;
      SCOPED_TRACE(k::kernel_path_name(path));
      uint32_t r_dyn = 0, r_pow2 = 0;
      ASSERT_EQ(m.interp.RunFloat(l, f.Args(), EA_RANGE_DYNAMIC, &r_dyn), Status::kOk) << m.interp.error();
      const std::vector<float> dyn = f.output;
      const std::vector<uint16_t> w = f.weights;
      ASSERT_EQ(m.interp.RunFloat(l, f.Args(), EA_RANGE_DYNAMIC_POW2, &r_pow2), Status::kOk)
          << m.interp.error();
      EXPECT_GT(r_dyn, Interpreter::kRangeOne);  // the mode is exercised
      EXPECT_EQ(r_pow2, 2 * Interpreter::kRangeOne);
      ASSERT_EQ(m.interp.RunScaled(l, io.Args(-1, true), 89802u /* 1.37 */), Status::kOk)
          << m.interp.error();
      if (ref_dyn.empty()) {
        ref_dyn = dyn;
        ref_w = w;
        ref_pow2 = f.output;
        ref_scaled = io.output;
        ref_scaled_w = io.weights;
        continue;
      }
      EXPECT_EQ(std::memcmp(dyn.data(), ref_dyn.data(), dyn.size() * 4), 0);
      EXPECT_EQ(w, ref_w);
      EXPECT_EQ(std::memcmp(f.output.data(), ref_pow2.data(), f.output.size() * 4), 0);
      EXPECT_EQ(io.output, ref_scaled);
      EXPECT_EQ(io.weights, ref_scaled_w);
    }
    k::set_kernel_path(k::best_kernel_path());
  }
  EXPECT_GE(paths, 1);
}

// The derived parameters are right, against the float model of the same
// weights (X_f32: the float kernels, independent of the int8 arithmetic):
// the same real inputs, inside the calibrated range (at most half of it), run
// statically and at R = 2 (every activation step twice as coarse). The run at
// R = 2 must stay within 3x the static run's error against the float model
// plus 1 %: 2x for the coarser step, more where two coarser operands multiply
// (q.k scores) or add before the tanh table. Measured ratios 0.3-2.7x (random
// inputs: 1.9-2.7x on trained weights); with biases not divided by R, or the
// score multiplier scaled by R instead of R^2, MHA and Luong layers exceed the
// bound (e.g. enc_self 0.015 -> 0.071 and 0.108).
TEST_P(RangeModeModel, RunAtRangeTwoIsAsAccurateAsItsStep) {
  std::string f32 = GetParam();
  f32 = f32.substr(0, f32.find("_int8")) + "_f32";
  RangeLoaded m;
  Loaded fm;
  ASSERT_TRUE(m.LoadWithRange(GetParam()));
  ASSERT_TRUE(fm.Load(f32));
  Rng rng(13);
  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo info = m.Info(l);
    SCOPED_TRACE(info.name);
    FloatIo f;
    f.Make(info, 0.5f, rng);
    eatest::LayerIo stat, scaled;
    stat.Make(info, f.q_len, f.kv_len, rng);
    scaled.Make(info, f.q_len, f.kv_len, rng);
    for (auto [io, r] : {std::make_pair(&stat, 1.0), std::make_pair(&scaled, 2.0)}) {
      if (!f.query.empty()) io->query = Quantize(f.query, info.query_quant, r);
      if (!f.key.empty()) io->key = Quantize(f.key, info.key_quant, r);
      if (!f.value.empty()) io->value = Quantize(f.value, info.value_quant, r);
    }
    ASSERT_EQ(m.interp.Run(l, stat.Args(-1, true)), Status::kOk) << m.interp.error();
    ASSERT_EQ(m.interp.RunScaled(l, scaled.Args(-1, true), 2 * Interpreter::kRangeOne), Status::kOk)
        << m.interp.error();
    RunArgs fa = f.Args();
    fa.attn_weights = nullptr;  // float weights would not fit the uint16 buffer
    ASSERT_EQ(fm.interp.Run(l, fa), Status::kOk) << fm.interp.error();
    double e1 = 0.0, e2 = 0.0, norm = 0.0;
    const edgeattn::Quant& q = info.output_quant;
    for (size_t i = 0; i < f.output.size(); ++i) {
      const double want = f.output[i];
      const double a = q.scale * OutputSteps(info, stat.output, i);
      const double b = 2.0 * q.scale * OutputSteps(info, scaled.output, i);
      e1 += (a - want) * (a - want);
      e2 += (b - want) * (b - want);
      norm += want * want;
    }
    e1 = std::sqrt(e1 / norm);
    e2 = std::sqrt(e2 / norm);
    EXPECT_LE(e2, 3.0 * e1 + 0.01) << "relative L2 vs the float model: static " << e1;
  }
}

// Misuse: statuses with messages.
TEST_P(RangeModeModel, BadArgumentsAreStatuses) {
  RangeLoaded m;
  ASSERT_TRUE(m.LoadWithRange(GetParam()));
  Rng rng(14);
  const LayerInfo info = m.Info(0);
  eatest::LayerIo io;
  io.Make(info, info.max_q_len, info.max_kv_len, rng);
  EXPECT_EQ(m.interp.RunScaled(0, io.Args(-1), Interpreter::kRangeOne - 1), Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("outside"), std::string::npos) << m.interp.error();
  EXPECT_EQ(m.interp.RunScaled(0, io.Args(-1), Interpreter::kRangeMax + 1), Status::kInvalidArgument);
  EXPECT_EQ(m.interp.RunScaled(99, io.Args(-1), Interpreter::kRangeOne), Status::kInvalidArgument);
  FloatIo f;
  f.Make(info, 1.0f, rng);
  (f.query.empty() ? f.key : f.query)[3] = NAN;
  EXPECT_EQ(m.interp.RunFloat(0, f.Args(), EA_RANGE_DYNAMIC, nullptr), Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("not finite"), std::string::npos) << m.interp.error();
  f.Make(info, 1000.0f, rng);  // beyond 256x
  EXPECT_EQ(m.interp.RunFloat(0, f.Args(), EA_RANGE_DYNAMIC, nullptr), Status::kInvalidArgument);
  f.Make(info, 1.0f, rng);
  EXPECT_EQ(m.interp.RunFloat(0, f.Args(), 7, nullptr), Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("unknown range policy 7"), std::string::npos) << m.interp.error();
  RunArgs no_out = f.Args();
  no_out.output = nullptr;
  EXPECT_EQ(m.interp.RunFloat(0, no_out, EA_RANGE_DYNAMIC, nullptr), Status::kInvalidArgument);
  RunArgs in_arena = f.Args();  // attention weights written into the range workspace
  in_arena.attn_weights = m.arena.data() + m.model.arena_bytes();
  EXPECT_EQ(m.interp.RunFloat(0, in_arena, EA_RANGE_DYNAMIC, nullptr), Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("overlaps the arena"), std::string::npos) << m.interp.error();
  // Static run: R = 1 even beyond the range (values saturate).
  f.Make(info, 1.5f, rng);
  uint32_t range = 0;
  EXPECT_EQ(m.interp.RunFloat(0, f.Args(), EA_RANGE_STATIC, &range), Status::kOk) << m.interp.error();
  EXPECT_EQ(range, Interpreter::kRangeOne);

  // Without the range workspace after the plan: kArenaTooSmall, naming the need.
  Loaded plain;
  ASSERT_TRUE(plain.Load(GetParam()));
  EXPECT_EQ(plain.interp.RunFloat(0, f.Args(), EA_RANGE_DYNAMIC, nullptr), Status::kArenaTooSmall);
  EXPECT_NE(std::string(plain.interp.error()).find("RangeBytes"), std::string::npos) << plain.interp.error();

  for (int l = 0; l < m.model.num_layers(); ++l) {
    const LayerInfo li = m.Info(l);
    eatest::LayerIo lio;
    lio.Make(li, li.max_q_len, li.max_kv_len, rng);
    if (li.kv_cache) {  // a run at R > 1 leaves the cache at range R: steps need a new sequence
      ASSERT_EQ(m.interp.RunScaled(l, lio.Args(-1), 2 * Interpreter::kRangeOne), Status::kOk);
      EXPECT_EQ(m.interp.Step(l, lio.query.data(), lio.output.data()), Status::kNotReady);
      EXPECT_NE(std::string(m.interp.error()).find("range"), std::string::npos) << m.interp.error();
      EXPECT_EQ(m.interp.CachedLength(l), 0);
      ASSERT_EQ(m.interp.BeginSequence(l), Status::kOk);
      EXPECT_EQ(m.interp.Step(l, lio.query.data(), lio.output.data()), Status::kOk) << m.interp.error();
    }
    if ((li.kind == EA_LAYER_MULTI_HEAD_ATTENTION && li.cross) || li.kind == EA_LAYER_ADDITIVE) {
      ASSERT_EQ(m.interp.CacheKeys(l, lio.key.data(), lio.value.data(), lio.kv_len, -1), Status::kOk);
      RunArgs a = lio.Args(-1);
      a.use_cached_keys = 1;
      EXPECT_EQ(m.interp.RunScaled(l, a, Interpreter::kRangeOne), Status::kUnsupported);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Int8, RangeModeModel, ::testing::ValuesIn(Int8Models()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Block kinds (encoder_block, decoder_block, layernorm, ffn, linear) have no
// range mode: an EA_UNSUPPORTED status naming the layer and its kind, never a
// run at the wrong scales. Nor have a whole model's other kinds (the
// Torch-KWT fixture: linear, positions, branch-norm blocks, row_pool).
TEST(RangeMode, BlockKindsAreUnsupported) {
  bool found = false;
  for (const std::string& name : eatest::AllModels()) {
    if (name != "encoder_block_int8" && name != "fixture_kwt_int8") continue;
    found = true;
    RangeLoaded m;
    ASSERT_TRUE(m.LoadWithRange(name));
    for (int l = 0; l < m.model.num_layers(); ++l) {
      const LayerInfo info = m.Info(l);
      Rng rng(5);
      eatest::LayerIo io;
      io.Make(info, info.max_q_len, info.max_kv_len, rng);
      EXPECT_EQ(m.interp.RunScaled(l, io.Args(-1), Interpreter::kRangeOne), Status::kUnsupported) << info.name;
      const std::string error = m.interp.error();
      EXPECT_NE(error.find(info.name), std::string::npos) << error;
      // It names the layer's kind and the kinds range mode supports.
      EXPECT_NE(error.find(std::string("(") + ea_layer_kind_name(info.kind) + ")"), std::string::npos) << error;
      EXPECT_NE(error.find("softmax of: mha additive luong pooling"), std::string::npos) << error;
      uint32_t range = 0;
      EXPECT_EQ(m.interp.RunFloat(l, io.Args(-1), EA_RANGE_DYNAMIC, &range), Status::kUnsupported) << info.name;
    }
  }
  if (!found) GTEST_SKIP() << "models/encoder_block not converted in this build";
}

// Float models: RunScaled is for int8 layers; RunFloat runs them as Run.
TEST(RangeMode, FloatModels) {
  RangeLoaded m;
  ASSERT_TRUE(m.LoadWithRange("fixture_f32"));
  Rng rng(15);
  const LayerInfo info = m.Info(0);
  eatest::LayerIo io;
  io.Make(info, info.max_q_len, info.max_kv_len, rng);
  EXPECT_EQ(m.interp.RunScaled(0, io.Args(-1), Interpreter::kRangeOne), Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("int8"), std::string::npos) << m.interp.error();
  const std::vector<uint8_t> before = io.output;
  uint32_t range = 0;
  EXPECT_EQ(m.interp.RunFloat(0, io.Args(-1), EA_RANGE_DYNAMIC, &range), Status::kOk) << m.interp.error();
  EXPECT_EQ(range, Interpreter::kRangeOne);
  const std::vector<uint8_t> via_float = io.output;
  EXPECT_EQ(m.interp.Run(0, io.Args(-1)), Status::kOk);
  EXPECT_EQ(io.output, via_float);
  EXPECT_NE(io.output, before);
  EXPECT_EQ(m.model.RangeBytes(0, 0), 0u);  // no int8 layer
}

}  // namespace range_mode_test
}  // namespace
