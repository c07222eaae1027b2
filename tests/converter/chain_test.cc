// A chain of layers (the spec's "input"): calibrated from the first layer's
// inputs only, each hand-over quantized once, so the runtime passes one
// layer's int8 output bytes to the next as they are; the chain's output
// against the fixtures' own float64 layers run one after another.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/write/writer.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "fixtures.h"
#include "whole_model.h"

namespace {
namespace chain_test {  // tests/CMakeLists.txt: unity builds

using namespace edgeattn::convert;
using fixtures::Entries;
using fixtures::LayerCase;

constexpr int kRows = 9, kDim = 16, kClasses = 5;

// Two post-norm encoder blocks (the fixture's nn.TransformerEncoderLayer with
// its own weights each) and a linear head, the blocks' weights renamed
// under b0. / b1.
struct Chain {
  LayerCase b0 = fixtures::encoder_block_case(31, false);
  LayerCase b1 = fixtures::encoder_block_case(32, false);
  Array head_w, head_b;
  Entries weights;

  Chain() {
    fixtures::Rng rng(33);
    head_w = fixtures::random_weight(rng, {size_t(kClasses), size_t(kDim)}, 2.0);
    head_b = fixtures::random_weight(rng, {size_t(kClasses)}, 1.0);
    for (const auto& [name, a] : b0.weights) weights.emplace_back("b0." + name.substr(4), a);  // "enc." -> "b0."
    for (const auto& [name, a] : b1.weights) weights.emplace_back("b1." + name.substr(4), a);
    weights.emplace_back("head.weight", head_w);
    weights.emplace_back("head.bias", head_b);
  }

  std::string spec(const std::string& b1_input = "b0") const {
    return R"({"model": "chain", "layers": [
      {"name": "b0", "kind": "encoder_block", "preset": "torch", "prefix": "b0.", "embed_dim": 16, "num_heads": 2,
       "ffn_dim": 40, "mask": "key_padding", "max_q_len": 9},
      {"name": "b1", "kind": "encoder_block", "preset": "torch", "prefix": "b1.", "embed_dim": 16, "num_heads": 2,
       "ffn_dim": 40, "mask": "key_padding", "max_q_len": 9, "input": ")" + b1_input + R"("},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 9, "input": "b1"}]})";
  }

  // The model's inputs only: the first block's rows and their valid lengths.
  Entries calib() const {
    return {{"b0.query", b0.calib[0].second}, {"b0.kv_valid_len", b0.calib[1].second}};
  }

  // float64: b0, then b1 on its rows, then the head, for sample i.
  std::vector<double> reference(int i) const {
    const Array& q = b0.calib[0].second;
    const Array& v = b0.calib[1].second;
    ArrayMap in;
    in["block.query"] = fixtures::make("F32", {1, size_t(kRows), size_t(kDim)},
                                       std::vector<double>(q.data.begin() + i * kRows * kDim,
                                                           q.data.begin() + (i + 1) * kRows * kDim));
    in["block.kv_valid_len"] = fixtures::make("<i4", {1}, {v.data[static_cast<size_t>(i)]});
    std::vector<double> y0, y1, w;
    b0.reference(in, &y0, &w);
    in["block.query"].data = y0;
    b1.reference(in, &y1, &w);
    std::vector<double> out(static_cast<size_t>(kRows) * kClasses);
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kClasses; ++c) {
        double acc = head_b.data[static_cast<size_t>(c)];
        for (int k = 0; k < kDim; ++k) acc += head_w.data[static_cast<size_t>(c) * kDim + k] * y1[static_cast<size_t>(r) * kDim + k];
        out[static_cast<size_t>(r) * kClasses + c] = acc;
      }
    }
    return out;
  }
};

std::string convert(const Chain& chain, const std::string& dir, const std::string& dtype, const std::string& spec,
                    const std::string& report_json = "", const std::string& residual = "int8") {
  save_safetensors(dir + "/weights.safetensors", chain.weights);
  fixtures::write_text(dir + "/spec.json", spec);
  save_npz(dir + "/calib.npz", chain.calib());
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = dtype;
  o.output = dir + "/chain_" + dtype + ".eatn";
  o.report_json = report_json;
  o.residual = residual;
  std::ostringstream report;
  run_convert(o, report);
  return o.output;
}

using Runtime = fixtures::RunnableModel;

double relative_l2(const std::vector<double>& got, const std::vector<double>& want, int valid_rows, int width) {
  double e2 = 0, r2 = 0;
  for (size_t k = 0; k < static_cast<size_t>(valid_rows) * width; ++k) {
    e2 += (got[k] - want[k]) * (got[k] - want[k]);
    r2 += want[k] * want[k];
  }
  return std::sqrt(e2 / r2);
}

// Sample i of the first layer's inputs, quantized at its query scale.
std::vector<int8_t> quantized_input(Runtime& rt, const Chain& chain, int i) {
  const edgeattn::LayerInfo in = rt.info(0);
  const Array& q = chain.b0.calib[0].second;
  std::vector<int8_t> x(static_cast<size_t>(kRows) * kDim);
  for (size_t k = 0; k < x.size(); ++k) {
    const double v = std::nearbyint(q.data[static_cast<size_t>(i) * x.size() + k] / in.query_quant.scale) +
                     in.query_quant.zero_point;
    x[k] = static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, v)));
  }
  return x;
}

// Runs sample i of the first layer's inputs through the int8 chain, each
// layer's output bytes passed to the next as they are; the head's output,
// dequantized (and its bytes in *bytes, when given).
std::vector<double> run_int8_chain(Runtime& rt, const Chain& chain, int i, std::vector<int8_t>* bytes = nullptr) {
  const edgeattn::LayerInfo in = rt.info(0), out = rt.info(2);
  const Array& q = chain.b0.calib[0].second;
  const Array& valid = chain.b0.calib[1].second;
  std::vector<int8_t> x(static_cast<size_t>(kRows) * kDim), y0(x.size()), y1(x.size());
  std::vector<int8_t> logits(static_cast<size_t>(kRows) * kClasses);
  for (size_t k = 0; k < x.size(); ++k) {
    const double v = std::nearbyint(q.data[static_cast<size_t>(i) * x.size() + k] / in.query_quant.scale) +
                     in.query_quant.zero_point;
    x[k] = static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, v)));
  }
  edgeattn::RunArgs a = {};
  a.q_len = a.kv_len = kRows;
  a.kv_valid_len = static_cast<int>(valid.data[static_cast<size_t>(i)]);
  a.query = x.data();
  a.output = y0.data();
  EXPECT_EQ(rt.interp.Run(0, a), edgeattn::Status::kOk) << rt.interp.error();
  a.query = y0.data();  // b0's bytes, as they are
  a.output = y1.data();
  EXPECT_EQ(rt.interp.Run(1, a), edgeattn::Status::kOk) << rt.interp.error();
  a.query = y1.data();
  a.kv_valid_len = -1;
  a.output = logits.data();
  EXPECT_EQ(rt.interp.Run(2, a), edgeattn::Status::kOk) << rt.interp.error();
  std::vector<double> got(logits.size());
  for (size_t k = 0; k < got.size(); ++k) got[k] = out.output_quant.scale * (logits[k] - out.output_quant.zero_point);
  if (bytes != nullptr) *bytes = logits;
  return got;
}

TEST(Chain, Int8BytesPassFromLayerToLayer) {
  const Chain chain;
  const std::string model = convert(chain, fixtures::temp_dir("chain_int8"), "int8", chain.spec());
  Runtime rt(model);
  ASSERT_EQ(rt.model.num_layers(), 3);
  // Each hand-over has one quantization: the same scale and zero point.
  for (int l = 1; l < 3; ++l) {
    const edgeattn::LayerInfo from = rt.info(l - 1), to = rt.info(l);
    EXPECT_EQ(std::memcmp(&from.output_quant.scale, &to.query_quant.scale, sizeof(float)), 0)
        << from.name << " -> " << to.name << ": " << from.output_quant.scale << " vs " << to.query_quant.scale;
    EXPECT_EQ(from.output_quant.zero_point, to.query_quant.zero_point) << from.name << " -> " << to.name;
  }
  const Array& valid = chain.b0.calib[1].second;
  double worst = 0;
  for (int i = 0; i < 8; ++i) {
    const int n_valid = static_cast<int>(valid.data[static_cast<size_t>(i)]);
    worst = std::max(worst, relative_l2(run_int8_chain(rt, chain, i), chain.reference(i), n_valid, kClasses));
  }
  std::printf("  int8 chain b0 -> b1 -> head, worst sample's relative L2 on the valid rows: %.4f\n", worst);
  // One int8 block round trip is 1.5-2.2 % (tests/kinds); two blocks and a
  // head, compounding, stay within 5 %.
  EXPECT_LE(worst, 0.05);
}

TEST(Chain, Float32ChainEqualsTheFloat64Layers) {
  const Chain chain;
  const std::string model = convert(chain, fixtures::temp_dir("chain_f32"), "f32", chain.spec());
  Runtime rt(model);
  const Array& q = chain.b0.calib[0].second;
  const Array& valid = chain.b0.calib[1].second;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> x(static_cast<size_t>(kRows) * kDim), y0(x.size()), y1(x.size());
    std::vector<float> logits(static_cast<size_t>(kRows) * kClasses);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(q.data[static_cast<size_t>(i) * x.size() + k]);
    const int n_valid = static_cast<int>(valid.data[static_cast<size_t>(i)]);
    edgeattn::RunArgs a = {};
    a.q_len = a.kv_len = kRows;
    a.kv_valid_len = n_valid;
    a.query = x.data();
    a.output = y0.data();
    ASSERT_EQ(rt.interp.Run(0, a), edgeattn::Status::kOk) << rt.interp.error();
    a.query = y0.data();
    a.output = y1.data();
    ASSERT_EQ(rt.interp.Run(1, a), edgeattn::Status::kOk) << rt.interp.error();
    a.query = y1.data();
    a.kv_valid_len = -1;
    a.output = logits.data();
    ASSERT_EQ(rt.interp.Run(2, a), edgeattn::Status::kOk) << rt.interp.error();
    const std::vector<double> got(logits.begin(), logits.end());
    EXPECT_LE(relative_l2(got, chain.reference(i), n_valid, kClasses), 1e-5) << "sample " << i;
  }
}

// The file holds the chain as a graph, and one Invoke runs it: the same
// bytes as the three layers called one by one, the intermediate rows in the
// arena the converter counted (two regions of 9 rows x 16 int8, 144 bytes
// each: b0's output, read by b1, and b1's, read by the head).
TEST(Chain, InvokeRunsTheWholeChainInOneCall) {
  const Chain chain;
  const std::string model = convert(chain, fixtures::temp_dir("chain_invoke"), "int8", chain.spec());
  Runtime rt(model);
  ASSERT_TRUE(rt.model.has_graph());
  edgeattn::GraphInfo g = {};
  ASSERT_EQ(rt.model.GetGraphInfo(&g), edgeattn::Status::kOk) << rt.model.error();
  EXPECT_EQ(g.num_steps, 3);
  EXPECT_EQ(g.dtype, EA_S8);
  EXPECT_EQ(g.input_dim, kDim);
  EXPECT_EQ(g.max_input_rows, kRows);
  EXPECT_EQ(g.memory_dim, 0);
  EXPECT_EQ(g.output_dim, kClasses);
  EXPECT_EQ(g.output_layer, 2);
  EXPECT_EQ(g.input_quant.scale, rt.info(0).query_quant.scale);
  EXPECT_EQ(g.output_quant.scale, rt.info(2).output_quant.scale);
  uint64_t offsets[3] = {9, 9, 9};
  const edgeattn::ArenaLayout layout = rt.model.LayOutArena(0, 0, nullptr, offsets);
  EXPECT_EQ(layout.scratch_offset - layout.activation_offset, 288u);
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[1], 144u);
  EXPECT_EQ(offsets[2], 0u);
  const Array& valid = chain.b0.calib[1].second;
  for (int i = 0; i < 8; ++i) {
    std::vector<int8_t> want;
    run_int8_chain(rt, chain, i, &want);
    const std::vector<int8_t> x = quantized_input(rt, chain, i);
    std::vector<int8_t> got(want.size(), 0x55);
    edgeattn::ModelInputs in = {};
    in.rows = x.data();
    in.num_rows = kRows;
    in.valid_rows = static_cast<int>(valid.data[static_cast<size_t>(i)]);
    edgeattn::ModelOutputs out = {got.data(), 0};
    ASSERT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kOk) << rt.interp.error();
    EXPECT_EQ(out.num_rows, kRows);
    EXPECT_EQ(got, want) << "sample " << i;
  }
  // The C API, and what a wrong call says.
  const std::vector<int8_t> x = quantized_input(rt, chain, 0);
  std::vector<int8_t> y(static_cast<size_t>(kRows) * kClasses);
  ea_model_inputs in = {};
  in.rows = x.data();
  in.num_rows = kRows;
  ea_model_outputs out = {y.data(), 0};
  {
    ea_model m;
    ASSERT_EQ(ea_model_load(&m, rt.file.data(), rt.file.size()), EA_OK);
    ea_graph_info cg;
    ASSERT_EQ(ea_model_graph_info(&m, &cg), EA_OK);
    EXPECT_EQ(cg.output_dim, kClasses);
    std::vector<uint64_t> arena(ea_model_arena_bytes(&m) / 8 + 1);
    ea_interpreter interp;
    ASSERT_EQ(ea_interpreter_init(&interp, &m, arena.data(), ea_model_arena_bytes(&m)), EA_OK);
    EXPECT_EQ(ea_interpreter_invoke(&interp, &in, &out), EA_OK) << ea_interpreter_error(&interp);
    EXPECT_EQ(out.num_rows, kRows);
    std::vector<int8_t> want;
    run_int8_chain(rt, chain, 0, &want);
    EXPECT_EQ(y, want);
  }
  in.num_rows = kRows + 1;
  EXPECT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kLengthExceedsPlan);
  EXPECT_STREQ(rt.interp.error(), "Invoke: 10 input rows exceed the model's 9");  // no memory: no memory numbers
  in.num_rows = kRows;
  out.rows = nullptr;
  EXPECT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kInvalidArgument);
  out.rows = const_cast<int8_t*>(x.data());  // over its own input
  EXPECT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kInvalidArgument);
  EXPECT_NE(std::string(rt.interp.error()).find("output overlaps an input"), std::string::npos) << rt.interp.error();
}

TEST(Chain, InvokeInFloat32EqualsTheFloat64Layers) {
  const Chain chain;
  const std::string model = convert(chain, fixtures::temp_dir("chain_invoke_f32"), "f32", chain.spec());
  Runtime rt(model);
  const Array& q = chain.b0.calib[0].second;
  const Array& valid = chain.b0.calib[1].second;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> x(static_cast<size_t>(kRows) * kDim), logits(static_cast<size_t>(kRows) * kClasses);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(q.data[static_cast<size_t>(i) * x.size() + k]);
    const int n_valid = static_cast<int>(valid.data[static_cast<size_t>(i)]);
    edgeattn::ModelInputs in = {x.data(), kRows, n_valid, nullptr, 0, 0};
    edgeattn::ModelOutputs out = {logits.data(), 0};
    ASSERT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kOk) << rt.interp.error();
    const std::vector<double> got(logits.begin(), logits.end());
    EXPECT_LE(relative_l2(got, chain.reference(i), n_valid, kClasses), 1e-5) << "sample " << i;
  }
}

// eval on a whole model: a reference holding only the model's input rows and
// its logits, under the user's own names (x, x_len, logits, --data-key),
// is compared through one Invoke per sample. f32 against the test's float64
// chain; int8 gives the error the test computes itself from the three layers
// called one by one (padded rows left out on both sides).
TEST(Chain, EvalComparesTheWholeModelsOutput) {
  const Chain chain;
  const std::string dir = fixtures::temp_dir("chain_eval");
  const Array& q = chain.b0.calib[0].second;
  const Array& valid = chain.b0.calib[1].second;
  const int n = static_cast<int>(valid.data.size());
  std::vector<double> logits;
  for (int i = 0; i < n; ++i) {
    const std::vector<double> y = chain.reference(i);
    logits.insert(logits.end(), y.begin(), y.end());
  }
  save_npz(dir + "/reference.npz", {{"x", q}, {"x_len", valid},
                                    {"logits", fixtures::make("<f4", {size_t(n), size_t(kRows), size_t(kClasses)}, logits)}});
  for (const std::string dtype : {"f32", "int8"}) {
    SCOPED_TRACE(dtype);
    const std::string model = convert(chain, dir, dtype, chain.spec());
    EvalOptions e;
    e.model = model;
    e.reference = dir + "/reference.npz";
    e.data_keys = {"x=b0.query", "x_len=b0.kv_valid_len", "logits=head.output"};
    e.json = dir + "/eval_" + dtype + ".json";
    e.repeat = 1;
    std::ostringstream out;
    ASSERT_NO_THROW(run_eval(e, out)) << out.str();
    EXPECT_NE(out.str().find("steps without their own inputs and outputs in the reference: b0, b1, head"),
              std::string::npos) << out.str();
    EXPECT_NE(out.str().find("top-1 agreement"), std::string::npos) << out.str();
    const std::vector<uint8_t> text = read_file(e.json);
    const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end());
    ASSERT_EQ(j["layers"].size(), 1u) << j.dump();
    const nlohmann::json& m = j["layers"][0];
    EXPECT_EQ(m["name"], "model");
    size_t valid_rows = 0;
    for (double v : valid.data) valid_rows += static_cast<size_t>(v);
    EXPECT_EQ(m["compared_rows"].get<size_t>(), valid_rows);
    if (dtype == "f32") {
      EXPECT_LE(m["relative_l2"].get<double>(), 1e-5);
      continue;
    }
    Runtime rt(model);
    double e2 = 0, r2 = 0;
    for (int i = 0; i < n; ++i) {
      const std::vector<double> got = run_int8_chain(rt, chain, i), want = chain.reference(i);
      for (size_t k = 0; k < static_cast<size_t>(valid.data[static_cast<size_t>(i)]) * kClasses; ++k) {
        e2 += (got[k] - want[k]) * (got[k] - want[k]);
        r2 += want[k] * want[k];
      }
    }
    EXPECT_NEAR(m["relative_l2"].get<double>(), std::sqrt(e2 / r2), 1e-9);
  }
}

// A whole-model reference without the model's output compares nothing: an error naming the files' keys.
TEST(Chain, EvalWithoutTheModelsOutputIsAnError) {
  const Chain chain;
  const std::string dir = fixtures::temp_dir("chain_eval_none");
  save_npz(dir + "/reference.npz", {{"x", chain.b0.calib[0].second}});
  EvalOptions e;
  e.model = convert(chain, dir, "f32", chain.spec());
  e.reference = dir + "/reference.npz";
  e.data_keys = {"x=b0.query"};
  std::ostringstream out;
  EXPECT_THROW(run_eval(e, out), ConvertError);
  EXPECT_NE(out.str().find("has no 'head.output' (the model's output), not compared"), std::string::npos) << out.str();
}

// What a graph the runtime cannot run says at load: a step reading itself,
// a hand-over whose quantizations differ, an output nobody reads.
TEST(Chain, BadGraphIsRefusedAtLoad) {
  const Chain chain;
  const std::string model = convert(chain, fixtures::temp_dir("chain_badgraph"), "int8", chain.spec());
  const std::vector<uint8_t> good = read_file(model);
  const auto patched = [&](int step, int query) {
    std::vector<uint8_t> b(good.begin(), good.end() - 4);
    auto* m = flatbuffers::GetMutableRoot<edgeattn::fb::Model>(b.data());
    auto* st = const_cast<edgeattn::fb::GraphStep*>(m->graph()->steps()->Get(static_cast<uint32_t>(step)));
    EXPECT_TRUE(reinterpret_cast<flatbuffers::Table*>(st)->SetField<int32_t>(edgeattn::fb::GraphStep::VT_QUERY, query, -1));
    append_file_crc32(&b);
    std::vector<uint64_t> words((b.size() + 7) / 8);
    std::memcpy(words.data(), b.data(), b.size());
    edgeattn::Model m2;
    EXPECT_EQ(m2.Load(words.data(), b.size()), edgeattn::Status::kInvalidModel);
    return std::string(m2.error());
  };
  std::string msg = patched(1, 1);
  EXPECT_NE(msg.find("graph step 1 (layer 'b1') reads its query from step 1"), std::string::npos) << msg;
  msg = patched(2, 0);  // the head reads b0's rows, quantized for b1
  EXPECT_NE(msg.find("graph step 2 (layer 'head')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the bytes cannot be passed on"), std::string::npos) << msg;
  msg = patched(1, -1);  // b1 reads the model's input too, at its own scale
  EXPECT_NE(msg.find("graph step 1 (layer 'b1')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the model's input gives"), std::string::npos) << msg;
}

// A model whose layers are not chained has no graph: Invoke says so.
TEST(Chain, UnchainedModelHasNoGraph) {
  const Chain chain;
  const std::string spec = R"({"model": "one", "layers": [
      {"name": "b0", "kind": "encoder_block", "preset": "torch", "prefix": "b0.", "embed_dim": 16, "num_heads": 2,
       "ffn_dim": 40, "mask": "key_padding", "max_q_len": 9}]})";
  Chain only_b0;
  only_b0.weights.clear();
  for (const auto& [name, a] : chain.weights) {
    if (name.rfind("b0.", 0) == 0) only_b0.weights.emplace_back(name, a);
  }
  Runtime rt(convert(only_b0, fixtures::temp_dir("chain_none"), "int8", spec));
  EXPECT_FALSE(rt.model.has_graph());
  edgeattn::GraphInfo g;
  EXPECT_EQ(rt.model.GetGraphInfo(&g), edgeattn::Status::kUnsupported);
  std::vector<int8_t> x(static_cast<size_t>(kRows) * kDim), y(x.size());
  edgeattn::ModelInputs in = {x.data(), kRows, 0, nullptr, 0, 0};
  edgeattn::ModelOutputs out = {y.data(), 0};
  EXPECT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kUnsupported);
  EXPECT_NE(std::string(rt.interp.error()).find("no graph"), std::string::npos) << rt.interp.error();
}

// A layer that nothing reads, in a chained spec, is refused by the converter.
TEST(Chain, UnreadLayerIsAConvertError) {
  const Chain chain;
  std::string spec = chain.spec();
  const std::string head_input = R"("input": "b1"})";
  spec.replace(spec.find(head_input), head_input.size(), R"("input": "b0"})");  // the head reads b0: b1 unread
  try {
    convert(chain, fixtures::temp_dir("chain_unread"), "f32", spec);
    ADD_FAILURE() << "converted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'b1'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no later layer reads its output"), std::string::npos) << e.what();
  }
}

// A chained layer's own inputs in a data file would be ignored: an error
// naming the key; its reference outputs are ignored like every layer's, so
// one reference file (the model's inputs, the last layer's outputs) serves
// --heldout as well as eval.
TEST(Chain, ChainedLayerInputsInADataFileAreAnErrorItsOutputsAreNot) {
  const Chain chain;
  const std::string dir = fixtures::temp_dir("chain_data_keys");
  convert(chain, dir, "f32", chain.spec());
  const auto heldout_error = [&](const Entries& extra) {
    Entries e = chain.calib();
    e.insert(e.end(), extra.begin(), extra.end());
    save_npz(dir + "/heldout.npz", e);
    ConvertOptions o;
    o.weights = dir + "/weights.safetensors";
    o.spec = dir + "/spec.json";
    o.calib = dir + "/calib.npz";
    o.heldout = dir + "/heldout.npz";
    o.dtype = "int8";
    o.output = dir + "/heldout_int8.eatn";
    std::ostringstream report;
    try {
      run_convert(o, report);
    } catch (const ConvertError& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  const Array& q = chain.b0.calib[0].second;
  const Array logits = fixtures::make("<f4", {q.shape[0], size_t(kRows), size_t(kClasses)},
                                      std::vector<double>(q.shape[0] * kRows * kClasses, 0.5));
  const Array labels = fixtures::make("<i4", {q.shape[0]}, std::vector<double>(q.shape[0], 1.0));
  EXPECT_EQ(heldout_error({{"head.output", logits}, {"head.labels", labels}}), "");
  const std::string msg = heldout_error({{"b1.query", q}});
  EXPECT_NE(msg.find("'b1.query' is not read: layer 'b1' is chained (\"input\": \"b0\")"), std::string::npos) << msg;
}

// The report's chained error of the head is the chain's own: the test runs
// the int8 chain on every calibration sample and sums the same way (every
// row of a linear layer compared).
TEST(Chain, ReportGivesTheChainsErrorAfterEveryLayer) {
  const Chain chain;
  const std::string dir = fixtures::temp_dir("chain_report");
  const std::string model = convert(chain, dir, "int8", chain.spec(), dir + "/report.json");
  Runtime rt(model);
  const std::vector<uint8_t> text = read_file(dir + "/report.json");
  const nlohmann::json report = nlohmann::json::parse(text.begin(), text.end());
  ASSERT_EQ(report["layers"].size(), 3u);
  EXPECT_FALSE(report["layers"][0].contains("chained"));  // the first layer reads the model's input
  ASSERT_TRUE(report["layers"][1].contains("chained"));
  ASSERT_TRUE(report["layers"][2].contains("chained"));
  double e2 = 0, r2 = 0;
  const int n = static_cast<int>(chain.b0.calib[1].second.data.size());
  for (int i = 0; i < n; ++i) {
    const std::vector<double> got = run_int8_chain(rt, chain, i), want = chain.reference(i);
    for (size_t k = 0; k < got.size(); ++k) {
      e2 += (got[k] - want[k]) * (got[k] - want[k]);
      r2 += want[k] * want[k];
    }
  }
  const double mine = std::sqrt(e2 / r2);
  const double reported = report["layers"][2]["chained"]["relative_l2"].get<double>();
  std::printf("  head after the chain: relative L2 %.5f (report %.5f); the head alone on float64 inputs %.5f\n",
              mine, reported, report["layers"][2]["relative_l2"].get<double>());
  EXPECT_NEAR(reported, mine, 1e-6 * mine);
}

// What a wrong "input" says.
TEST(Chain, BadInputIsASpecError) {
  const Chain chain;
  const std::string dir = fixtures::temp_dir("chain_bad");
  for (const auto& [input, says] : std::vector<std::pair<std::string, std::string>>{
           {"nope", "'nope' is not an earlier layer"}, {"b1", "'b1' is not an earlier layer"},
           {"head", "'head' is not an earlier layer"}}) {
    try {
      convert(chain, dir, "f32", chain.spec(input));
      ADD_FAILURE() << "\"input\": \"" << input << "\" converted";
    } catch (const ConvertError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("layer 'b1'"), std::string::npos) << e.what();
    }
  }
}


// The 16-bit residual stream through a graph (issue 37, --residual int16):
// b0 -> b1 hand over int16 rows, a final LayerNorm reads them (contract 4b)
// and writes int8 for the head. Invoke gives the bytes of the layers run one
// by one; the chain is closer to its float64 model than the int8 stream's;
// a head straight after a block cannot read the stream (a convert error).
struct NormChain {
  Chain chain;
  Array gain, bias;
  NormChain() {
    fixtures::Rng rng(34);
    gain = fixtures::random_weight(rng, {size_t(kDim)}, 1.0);
    bias = fixtures::random_weight(rng, {size_t(kDim)}, 0.5);
    chain.weights.emplace_back("norm.weight", gain);
    chain.weights.emplace_back("norm.bias", bias);
  }
  std::string spec() const {
    return R"({"model": "chain16", "layers": [
      {"name": "b0", "kind": "encoder_block", "preset": "torch", "prefix": "b0.", "embed_dim": 16, "num_heads": 2,
       "ffn_dim": 40, "mask": "key_padding", "max_q_len": 9},
      {"name": "b1", "kind": "encoder_block", "preset": "torch", "prefix": "b1.", "embed_dim": 16, "num_heads": 2,
       "ffn_dim": 40, "mask": "key_padding", "max_q_len": 9, "input": "b0"},
      {"name": "norm", "kind": "layernorm", "prefix": "norm.", "dim": 16, "max_q_len": 9, "input": "b1"},
      {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": 9, "input": "norm"}]})";
  }
  // float64: b0, b1, the LayerNorm (eps 1e-5), the head, for sample i.
  std::vector<double> reference(int i) const {
    const Array& q = chain.b0.calib[0].second;
    const Array& v = chain.b0.calib[1].second;
    ArrayMap in;
    in["block.query"] = fixtures::make("F32", {1, size_t(kRows), size_t(kDim)},
                                       std::vector<double>(q.data.begin() + i * kRows * kDim,
                                                           q.data.begin() + (i + 1) * kRows * kDim));
    in["block.kv_valid_len"] = fixtures::make("<i4", {1}, {v.data[static_cast<size_t>(i)]});
    std::vector<double> y0, y1, w;
    chain.b0.reference(in, &y0, &w);
    in["block.query"].data = y0;
    chain.b1.reference(in, &y1, &w);
    std::vector<double> out(static_cast<size_t>(kRows) * kClasses);
    for (int r = 0; r < kRows; ++r) {
      const double* x = y1.data() + static_cast<size_t>(r) * kDim;
      double mean = 0, var = 0;
      for (int k = 0; k < kDim; ++k) mean += x[k] / kDim;
      for (int k = 0; k < kDim; ++k) var += (x[k] - mean) * (x[k] - mean) / kDim;
      std::vector<double> n(kDim);
      for (int k = 0; k < kDim; ++k) {
        n[static_cast<size_t>(k)] = (x[k] - mean) / std::sqrt(var + 1e-5) * gain.data[static_cast<size_t>(k)] +
                                    bias.data[static_cast<size_t>(k)];
      }
      for (int c = 0; c < kClasses; ++c) {
        double acc = chain.head_b.data[static_cast<size_t>(c)];
        for (int k = 0; k < kDim; ++k) acc += chain.head_w.data[static_cast<size_t>(c) * kDim + k] * n[static_cast<size_t>(k)];
        out[static_cast<size_t>(r) * kClasses + c] = acc;
      }
    }
    return out;
  }
};

TEST(Chain, Residual16StreamThroughInvoke) {
  const NormChain nc;
  const Array& q = nc.chain.b0.calib[0].second;
  const Array& valid = nc.chain.b0.calib[1].second;
  double err[2] = {0, 0};
  for (int stream = 0; stream < 2; ++stream) {
    const bool s16 = stream == 1;
    const std::string model = convert(nc.chain, fixtures::temp_dir(s16 ? "chain_res16" : "chain_res8"), "int8",
                                      nc.spec(), "", s16 ? "int16" : "int8");
    Runtime rt(model);
    edgeattn::GraphInfo g = {};
    ASSERT_EQ(rt.model.GetGraphInfo(&g), edgeattn::Status::kOk) << rt.model.error();
    EXPECT_EQ(g.input_dtype, s16 ? EA_S16 : EA_S8);
    EXPECT_EQ(g.output_dtype, EA_S8);
    EXPECT_EQ(rt.info(1).input_dtype, s16 ? EA_S16 : EA_S8);
    EXPECT_EQ(rt.info(2).input_dtype, s16 ? EA_S16 : EA_S8);  // the LayerNorm reads the stream
    EXPECT_EQ(rt.info(2).output_dtype, EA_S8);
    // The int16 hand-overs share one scale, zero point 0.
    EXPECT_EQ(rt.info(0).output_quant.scale, rt.info(1).query_quant.scale);
    EXPECT_EQ(rt.info(1).output_quant.scale, rt.info(2).query_quant.scale);
    const size_t es = s16 ? 2 : 1;
    double e2 = 0, r2 = 0;
    for (int i = 0; i < 8; ++i) {
      // Input rows at the first layer's quantization (int16: symmetric).
      const edgeattn::LayerInfo in0 = rt.info(0);
      std::vector<uint8_t> x(static_cast<size_t>(kRows) * kDim * es);
      for (size_t k = 0; k < static_cast<size_t>(kRows) * kDim; ++k) {
        const double v = std::nearbyint(q.data[static_cast<size_t>(i) * kRows * kDim + k] / in0.query_quant.scale) +
                         in0.query_quant.zero_point;
        if (s16) {
          const int16_t h = static_cast<int16_t>(std::fmin(32767.0, std::fmax(-32768.0, v)));
          std::memcpy(&x[k * 2], &h, 2);
        } else {
          x[k] = static_cast<uint8_t>(static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, v))));
        }
      }
      // One by one: each layer's output bytes are the next one's input.
      std::vector<uint8_t> y0(x.size()), y1(x.size()), n(static_cast<size_t>(kRows) * kDim);
      std::vector<int8_t> want(static_cast<size_t>(kRows) * kClasses);
      edgeattn::RunArgs a = {};
      a.q_len = a.kv_len = kRows;
      a.kv_valid_len = static_cast<int>(valid.data[static_cast<size_t>(i)]);
      const void* ins[4] = {x.data(), y0.data(), y1.data(), n.data()};
      void* outs[4] = {y0.data(), y1.data(), n.data(), want.data()};
      for (int l = 0; l < 4; ++l) {
        a.query = ins[l];
        a.output = outs[l];
        ASSERT_EQ(rt.interp.Run(l, a), edgeattn::Status::kOk) << rt.interp.error();
      }
      std::vector<int8_t> got(want.size(), 0x55);
      edgeattn::ModelInputs mi = {};
      mi.rows = x.data();
      mi.num_rows = kRows;
      mi.valid_rows = a.kv_valid_len;
      edgeattn::ModelOutputs mo = {got.data(), 0};
      ASSERT_EQ(rt.interp.Invoke(mi, &mo), edgeattn::Status::kOk) << rt.interp.error();
      EXPECT_EQ(got, want) << "sample " << i;
      const edgeattn::LayerInfo out = rt.info(3);
      const std::vector<double> ref = nc.reference(i);
      for (size_t k = 0; k < static_cast<size_t>(a.kv_valid_len) * kClasses; ++k) {
        const double d = out.output_quant.scale * (got[k] - out.output_quant.zero_point) - ref[k];
        e2 += d * d;
        r2 += ref[k] * ref[k];
      }
    }
    err[stream] = std::sqrt(e2 / r2);
    std::printf("  chain b0 -> b1 -> norm -> head, residual %s: relL2 %.4f\n", s16 ? "int16" : "int8", err[stream]);
  }
  EXPECT_LT(err[1], err[0]);
  // A head straight after the blocks cannot read the int16 stream.
  try {
    convert(nc.chain, fixtures::temp_dir("chain_res16_bad"), "int8", nc.chain.spec(), "", "int16");
    ADD_FAILURE() << "a linear layer after an int16 block converted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'head' (linear) reads the int16 residual stream of 'b1'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace chain_test
}  // namespace
