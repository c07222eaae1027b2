// Every tensor of the weights file accounted for (spec.h, UnusedTensor and
// check_unused): used by a layer, listed as unused, or an error when it sits
// next to a used one; and the additive kind's biases (b_q, b_k, b_v).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "converter/io/file.h"
#include "converter/model/dataset.h"
#include "converter/kinds/additive.h"
#include "converter/eval/metrics.h"
#include "converter/spec/spec.h"
#include "fixtures.h"

namespace {

using fixtures::to_map;

using namespace edgeattn::convert;

ModelSpec load(const std::string& spec, const ArrayMap& w) { return load_spec("s.json", spec, w, "w.safetensors", {}); }

// check_unused's error, or "" when it accepts the spec.
std::string unused_error(const std::string& spec, const ArrayMap& w) {
  try {
    check_unused(load(spec, w), "w.safetensors", false);
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const std::vector<UnusedTensor>& u) {
  std::vector<std::string> n;
  for (const UnusedTensor& t : u) n.push_back(t.name);
  return n;
}

const char* kAdditiveFields = "additive layers take w_q, b_q, w_k, b_k, b, v, b_v, w_c";

// The tutorial's decoder with every bias mapped: the attention's six tensors
// are used, the embedding, GRU and output head are listed (not errors).
TEST(ConverterUnused, TutorialBiasesUsedOthersListed) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  const ArrayMap w = to_map(c.weights);
  const ModelSpec s = load(c.spec_json, w);
  EXPECT_EQ(s.weights_tensors, 13u);
  EXPECT_EQ(names(s.unused), (std::vector<std::string>{"embedding.weight", "gru.bias_hh_l0", "gru.bias_ih_l0",
                                                        "gru.weight_hh_l0", "gru.weight_ih_l0", "out.bias",
                                                        "out.weight"}));
  for (const UnusedTensor& t : s.unused) EXPECT_EQ(t.beside, "") << t.name;
  EXPECT_EQ(s.unused[0].shape, (std::vector<size_t>{13, 8}));
  EXPECT_TRUE(check_unused(s, "w.safetensors", false).empty());
  const AdditiveParams& P = s.layers[0].as<AdditiveParams>();
  EXPECT_EQ(P.w_q.b, w.at("attention.Wa.bias").data);
  EXPECT_EQ(P.w_k.b, w.at("attention.Ua.bias").data);
  EXPECT_EQ(P.b_v, w.at("attention.Va.bias").data[0]);
  EXPECT_EQ(P.b_v_name, "attention.Va.bias");
  EXPECT_TRUE(P.unmapped_b_q.empty());
  EXPECT_TRUE(P.unmapped_b_k.empty());
  EXPECT_EQ(P.unmapped_b_v, 0.0);
}

// The float64 reference convert checks the runtime against is PyTorch's
// layer: b_q where PyTorch adds it (not folded), b_v in every score (a
// dropped or mis-folded bias would show in the accuracy report).
TEST(ConverterUnused, AdditiveReferenceIsTheTutorialForward) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(2);
  const ModelSpec s = load(c.spec_json, to_map(c.weights));
  const LayerData d = load_layer_data(c.test, "test", s.layers[0], false);
  std::vector<double> out, w, want, want_w;
  reference_forward(s.layers[0], d, &out, &w);
  c.reference(c.test, &want, &want_w);
  ASSERT_EQ(out.size(), want.size());
  ASSERT_EQ(w.size(), want_w.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-12) << i;
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w[i], want_w[i], 1e-12) << i;
  // The same without b_q and b_v in the spec (--allow-unused): the reference
  // still adds them as PyTorch does.
  const ArrayMap wm = to_map(c.weights);
  const ModelSpec u = load(fixtures::spec_without(fixtures::spec_without(c.spec_json, "b_q"), "b_v"), wm);
  EXPECT_EQ(u.layers[0].as<AdditiveParams>().unmapped_b_v, wm.at("attention.Va.bias").data[0]);
  std::vector<double> out_u, w_u;
  reference_forward(u.layers[0], d, &out_u, &w_u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out_u[i], want[i], 1e-12) << i;
}

// An unmapped Wa.bias (beside the used Wa.weight) was dropped silently.
TEST(ConverterUnused, UnmappedBiasIsAnErrorNamingIt) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  const ArrayMap w = to_map(c.weights);
  EXPECT_EQ(unused_error(fixtures::spec_without(c.spec_json, "b_q"), w),
            std::string("w.safetensors: tensor 'attention.Wa.bias' (in module 'attention.Wa' with "
                        "'attention.Wa.weight' of layer 'attn') is used by no layer: map it in the spec (\"tensors\" "
                        "of layer 'attn'; ") +
                kAdditiveFields + ") or pass --allow-unused to convert without it");
  EXPECT_NE(unused_error(fixtures::spec_without(c.spec_json, "b_v"), w)
                .find("tensor 'attention.Va.bias' (in module 'attention.Va' with 'attention.Va.weight'"),
            std::string::npos);
  // Several: the first in full, the others named.
  const std::string two = fixtures::spec_without(fixtures::spec_without(c.spec_json, "b_q"), "b_k");
  const std::string e = unused_error(two, w);
  EXPECT_NE(e.find(": tensor 'attention.Ua.bias' (in module 'attention.Ua'"), std::string::npos) << e;
  EXPECT_NE(e.find("to convert without it; also unused next to used tensors: 'attention.Wa.bias'"), std::string::npos)
      << e;
}

TEST(ConverterUnused, AllowUnusedWarnsOncePerTensor) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  const ArrayMap w = to_map(c.weights);
  const ModelSpec s = load(fixtures::spec_without(c.spec_json, "b_q"), w);
  EXPECT_EQ(check_unused(s, "w.safetensors", true),
            (std::vector<std::string>{"tensor 'attention.Wa.bias' (in module 'attention.Wa' with "
                                      "'attention.Wa.weight' of layer 'attn') is used by no layer: converted "
                                      "without it (--allow-unused)"}));
  ASSERT_EQ(s.unused.size(), 8u);
  EXPECT_EQ(s.unused[0].name, "attention.Wa.bias");
  EXPECT_EQ(s.unused[0].beside, "attention.Wa.weight");
  EXPECT_EQ(s.unused[0].layer, "attn");
  // Not in the model; in the float reference (PyTorch's nn.Linear adds it).
  const AdditiveParams& P = s.layers[0].as<AdditiveParams>();
  EXPECT_TRUE(P.w_q.b.empty());
  EXPECT_EQ(P.unmapped_b_q, w.at("attention.Wa.bias").data);
  EXPECT_TRUE(P.unmapped_b_k.empty());
}

// A tensor directly in the module holding the layer's tensors (the common
// module of attention.Wa, .Ua, .Va) is next to them; one in a sibling module
// is not.
TEST(ConverterUnused, LayerModuleTensorIsNextToIt) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  ArrayMap w = to_map(c.weights);
  w["attention.temperature"] = fixtures::make("F32", {1}, {2.0});
  w["attention_norm.weight"] = fixtures::make("F32", {8}, std::vector<double>(8, 1.0));
  const std::string e = unused_error(c.spec_json, w);
  EXPECT_NE(e.find("tensor 'attention.temperature' (in module 'attention' with 'attention.Ua.bias' of layer 'attn')"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("attention_norm"), std::string::npos) << e;
  w.erase("attention.temperature");
  EXPECT_EQ(unused_error(c.spec_json, w), "");
}

// Names without a '.' are in the top level: next to a used top-level tensor.
TEST(ConverterUnused, TopLevelNames) {
  ArrayMap w;
  w["Wq"] = fixtures::make("F32", {2, 3}, std::vector<double>(6, 0.1));
  w["Wk"] = fixtures::make("F32", {2, 3}, std::vector<double>(6, 0.2));
  w["v"] = fixtures::make("F32", {2}, {1.0, -1.0});
  w["bq"] = fixtures::make("F32", {2}, {0.5, 0.5});
  const std::string spec = R"({"layers": [{"name": "a", "kind": "additive", "query_dim": 3, "key_dim": 3,
    "attn_dim": 2, "tensors": {"w_q": "Wq", "w_k": "Wk", "v": "v"}, "max_q_len": 2, "max_kv_len": 2}]})";
  EXPECT_NE(unused_error(spec, w).find("tensor 'bq' (in the top level with 'Wk' of layer 'a')"), std::string::npos)
      << unused_error(spec, w);
}

// PyTorch's add_bias_kv beside in_proj_weight changes what the layer computes.
TEST(ConverterUnused, MhaBiasKvIsAnError) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", false, "torch_mha", 7);
  ArrayMap w = to_map(c.weights);
  EXPECT_EQ(unused_error(c.spec_json, w), "");
  w["blk.attn.bias_k"] = fixtures::make("F32", {1, 1, 20}, std::vector<double>(20, 0.1));
  EXPECT_NE(unused_error(c.spec_json, w).find("tensor 'blk.attn.bias_k' (in module 'blk.attn' with "
                                              "'blk.attn.in_proj_bias' of layer 'attn')"),
            std::string::npos)
      << unused_error(c.spec_json, w);
}

// Without "tensors", the preset names' biases are used when the file has them.
TEST(ConverterUnused, AdditivePresetBiases) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  const ArrayMap t = to_map(c.weights);
  ArrayMap w;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"Wa.weight", "W_q.weight"}, {"Wa.bias", "W_q.bias"}, {"Ua.weight", "W_k.weight"},
           {"Ua.bias", "W_k.bias"}, {"Va.weight", "v.weight"}, {"Va.bias", "v.bias"}}) {
    w["dec.attn." + to] = t.at("attention." + from);
  }
  const std::string spec = R"({"layers": [{"name": "a", "kind": "additive", "prefix": "dec.attn.", "query_dim": 8,
    "key_dim": 8, "attn_dim": 8, "max_q_len": 2, "max_kv_len": 2}]})";
  const ModelSpec s = load(spec, w);
  EXPECT_TRUE(s.unused.empty());
  const AdditiveParams& P = s.layers[0].as<AdditiveParams>();
  EXPECT_EQ(P.w_q.b_name, "dec.attn.W_q.bias");
  EXPECT_EQ(P.w_k.b_name, "dec.attn.W_k.bias");
  EXPECT_EQ(P.b_v_name, "dec.attn.v.bias");
  // Absent preset biases are no bias.
  w.erase("dec.attn.W_q.bias");
  w.erase("dec.attn.v.bias");
  const ModelSpec s2 = load(spec, w);
  EXPECT_TRUE(s2.layers[0].as<AdditiveParams>().w_q.b.empty());
  EXPECT_EQ(s2.layers[0].as<AdditiveParams>().b_v_name, "");
}

TEST(ConverterUnused, AdditiveBiasSpecErrors) {
  const fixtures::LayerCase c = fixtures::additive_tutorial_case(1);
  ArrayMap w = to_map(c.weights);
  // A bias named in the spec must be there (a missing "b" was skipped).
  w.erase("attention.Wa.bias");
  try {
    load(c.spec_json, w);
    ADD_FAILURE() << "no error";
  } catch (const ConvertError& e) {
    EXPECT_EQ(std::string(e.what()), "w.safetensors: layer 'attn': missing tensor 'attention.Wa.bias'");
  }
  w = to_map(c.weights);
  std::string both = c.spec_json;
  both.replace(both.find("\"b_k\""), 5, "\"b\": \"attention.Ua.bias\", \"b_k\"");
  try {
    load(both, w);
    ADD_FAILURE() << "no error";
  } catch (const ConvertError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: layer 'attn': tensors.b and tensors.b_k both name w_k's bias (b is its older name): keep b_k");
  }
  // b_v is PyTorch's nn.Linear(attn_dim, 1) bias: one value.
  w["attention.Va.bias"] = fixtures::make("F32", {2}, {1.0, 2.0});
  try {
    load(c.spec_json, w);
    ADD_FAILURE() << "no error";
  } catch (const ConvertError& e) {
    EXPECT_EQ(std::string(e.what()),
              "w.safetensors: layer 'attn': tensor 'attention.Va.bias' has shape [2], expected [1] (b_v [1])");
  }
}

// The bundled models convert as they are: what their specs leave out is in no
// converted layer's module. The transformer's encoder block alone leaves its
// encoder.norm_out (a module beside the block's) listed, not an error.
TEST(ConverterUnused, BundledModelsAccountedFor) {
  const std::string dir = EA_MODELS_DIR;
  struct Case {
    std::string spec, weights;
    size_t unused;
  };
  for (const Case& m : std::vector<Case>{{"bahdanau/spec.json", "bahdanau/weights.safetensors", 12},
                                         {"coverage/spec.json", "coverage/weights.safetensors", 10},
                                         {"encoder_block/spec.json", "encoder_block/weights.safetensors", 0},
                                         {"pooling/spec.json", "pooling/weights.safetensors", 6},
                                         {"transformer/spec.json", "transformer/weights.safetensors", 28},
                                         {"transformer/encoder_block.spec.json", "transformer/weights.safetensors",
                                          26}}) {
    SCOPED_TRACE(m.spec);
    const ArrayMap w = load_weights(dir + "/" + m.weights);
    const std::vector<uint8_t> text = read_file(dir + "/" + m.spec);
    const ModelSpec s = load_spec(m.spec, std::string(text.begin(), text.end()), w, m.weights, {});
    EXPECT_EQ(s.unused.size(), m.unused);
    EXPECT_NO_THROW(check_unused(s, m.weights, false));
  }
  const ArrayMap w = load_weights(dir + "/transformer/weights.safetensors");
  const std::vector<uint8_t> text = read_file(dir + "/transformer/encoder_block.spec.json");
  std::string spec(text.begin(), text.end());
  spec.erase(spec.rfind(",\n    {"), spec.rfind("}\n  ]") + 1 - spec.rfind(",\n    {"));  // the block alone
  const ModelSpec s = load_spec("block.json", spec, w, "w", {});
  ASSERT_EQ(s.layers.size(), 1u);
  bool listed = false;
  for (const UnusedTensor& t : s.unused) {
    if (t.name == "encoder.norm_out.weight") listed = t.beside.empty();
  }
  EXPECT_TRUE(listed);
  EXPECT_NO_THROW(check_unused(s, "w", false));
}

}  // namespace
