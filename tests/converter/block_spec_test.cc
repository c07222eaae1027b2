// Spec resolution of the block kinds (encoder_block, decoder_block, layernorm, ffn) and of
// the linear kind (the "head" of models/encoder_block, nn.Linear(64, 20)) on the
// PyTorch state dict of models/encoder_block: what a preset reads, and an
// error naming the tensor or field for every state dict or spec that does
// not fit (never a silently wrong model).
#include <gtest/gtest.h>

#include <string>

#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "converter/io/file.h"
#include "converter/kinds/linear.h"
#include "converter/spec/spec.h"

namespace {

using namespace edgeattn::convert;

const std::string kDir = std::string(EA_MODELS_DIR) + "/encoder_block/";

const ArrayMap& Weights() {
  static const ArrayMap w = load_weights(kDir + "weights.safetensors");
  return w;
}

// One layer spec around `fields`.
std::string Spec(const std::string& fields) {
  return "{\"layers\": [{\"name\": \"pre\", \"max_q_len\": 16, " + fields + "}]}";
}

const std::string kPre =
    "\"kind\": \"encoder_block\", \"preset\": \"torch\", \"prefix\": \"pre.\", \"embed_dim\": 64, \"num_heads\": 4, "
    "\"norm_first\": true, \"activation\": \"gelu\"";

std::string ErrorOf(const std::string& spec, const ArrayMap& w = Weights()) {
  try {
    load_spec("s.json", spec, w, "w.safetensors", {});
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

TEST(BlockSpec, TorchPresetReadsTheEncoderLayer) {
  const ModelSpec s = load_spec("s.json", Spec(kPre), Weights(), "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 1u);
  EXPECT_EQ(s.layers[0].query_dim, 64);
  EXPECT_EQ(s.layers[0].max_kv_len, 16);  // keys are the query rows
  EXPECT_EQ(s.layers[0].heads(), 4);
  EXPECT_TRUE(s.layers[0].self_attention());
}

TEST(BlockSpec, MissingTensorIsNamed) {
  ArrayMap w = Weights();
  w.erase("pre.norm2.weight");
  const std::string e = ErrorOf(Spec(kPre), w);
  EXPECT_NE(e.find("missing tensor 'pre.norm2.weight'"), std::string::npos) << e;
}

TEST(BlockSpec, FfnWidthsThatDisagreeAreNamed) {
  ArrayMap w = Weights();
  Array& fc2 = w.at("pre.linear2.weight");
  fc2.shape = {64, 128};
  fc2.data.resize(64 * 128);
  const std::string e = ErrorOf(Spec(kPre), w);
  EXPECT_NE(e.find("'pre.linear2.weight' has shape [64, 128], expected [64, 256]"), std::string::npos) << e;
  EXPECT_NE(e.find("widths must agree"), std::string::npos) << e;
  // A declared ffn_dim that the weights do not have.
  const std::string e2 = ErrorOf(Spec(kPre + ", \"ffn_dim\": 512"));
  EXPECT_NE(e2.find("'pre.linear1.weight' has shape [256, 64], expected [512, 64]"), std::string::npos) << e2;
}

TEST(BlockSpec, UnknownActivationPlacementAndPresetAreErrors) {
  std::string spec = Spec(kPre);
  spec.replace(spec.find("\"gelu\""), 6, "\"swiglu\"");
  EXPECT_NE(ErrorOf(spec).find("unknown activation 'swiglu' (expected relu, gelu, gelu_tanh or silu)"),
            std::string::npos);
  spec = Spec(kPre);
  spec.replace(spec.find("\"norm_first\": true"), 18, "\"norm_first\": \"pre\"");
  EXPECT_NE(ErrorOf(spec).find("field 'norm_first' must be true or false"), std::string::npos);
  spec = Spec(kPre);
  spec.replace(spec.find("\"torch\""), 7, "\"bert\"");
  EXPECT_NE(ErrorOf(spec).find("unknown preset 'bert'"), std::string::npos);
  EXPECT_NE(ErrorOf(Spec(kPre + ", \"eps\": 0")).find("field 'eps' must be a positive number"), std::string::npos);
}

TEST(BlockSpec, TensorsWithoutPresetMustNameEveryWeight) {
  const std::string e = ErrorOf(Spec(
      "\"kind\": \"encoder_block\", \"embed_dim\": 64, \"num_heads\": 4, \"tensors\": {"
      "\"norm1_w\": \"pre.norm1.weight\", \"qkv_w\": \"pre.self_attn.in_proj_weight\", "
      "\"o_w\": \"pre.self_attn.out_proj.weight\", \"norm2_w\": \"pre.norm2.weight\", "
      "\"fc1_w\": \"pre.linear1.weight\"}"));
  EXPECT_NE(e.find("tensors.fc2_w is required"), std::string::npos) << e;
}

TEST(BlockSpec, LayerNormAndFfnKinds) {
  const ModelSpec s = load_spec(
      "s.json",
      "{\"layers\": [{\"name\": \"n\", \"kind\": \"layernorm\", \"prefix\": \"final_norm.\", \"dim\": 64, "
      "\"max_q_len\": 16}, {\"name\": \"m\", \"kind\": \"ffn\", \"preset\": \"sequential\", \"prefix\": \"mlp.\", "
      "\"dim\": 64, \"activation\": \"silu\", \"max_q_len\": 16}]}",
      Weights(), "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 2u);
  EXPECT_EQ(s.layers[0].heads(), 0);  // no attention weights
  EXPECT_EQ(s.layers[1].heads(), 0);
  const std::string e = ErrorOf(
      "{\"layers\": [{\"name\": \"m\", \"kind\": \"ffn\", \"preset\": \"mlp\", \"prefix\": \"mlp.\", \"dim\": 64, "
      "\"max_q_len\": 16}]}");
  EXPECT_NE(e.find("missing tensor 'mlp.fc1.weight'"), std::string::npos) << e;
}

// The decoder block ("dec_pre" of models/encoder_block, nn.TransformerDecoderLayer).
const std::string kDec =
    "\"kind\": \"decoder_block\", \"preset\": \"torch\", \"prefix\": \"dec_pre.\", \"embed_dim\": 64, "
    "\"num_heads\": 4, \"norm_first\": true, \"activation\": \"gelu\", \"max_kv_len\": 16";

TEST(BlockSpec, DecoderTorchPresetReadsTheDecoderLayer) {
  const ModelSpec s = load_spec("s.json", Spec(kDec), Weights(), "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 1u);
  EXPECT_EQ(s.layers[0].query_dim, 64);
  EXPECT_EQ(s.layers[0].key_dim, 64);       // the memory
  EXPECT_EQ(s.layers[0].max_kv_len, 16);
  EXPECT_EQ(s.layers[0].heads(), 4);        // the cross-attention's weights
  EXPECT_FALSE(s.layers[0].self_attention());
}

TEST(BlockSpec, DecoderMissingTensorIsNamed) {
  ArrayMap w = Weights();
  w.erase("dec_pre.norm3.weight");
  std::string e = ErrorOf(Spec(kDec), w);
  EXPECT_NE(e.find("missing tensor 'dec_pre.norm3.weight'"), std::string::npos) << e;
  w = Weights();
  w.erase("dec_pre.multihead_attn.in_proj_weight");
  e = ErrorOf(Spec(kDec), w);
  EXPECT_NE(e.find("missing tensor 'dec_pre.multihead_attn.in_proj_weight'"), std::string::npos) << e;
}

TEST(BlockSpec, DecoderSpecErrorsNameTheField) {
  // Its self-attention is causal by kind; "mask" is the memory's.
  EXPECT_NE(ErrorOf(Spec(kDec + ", \"mask\": \"causal\"")).find("the self-attention is always causal"),
            std::string::npos);
  std::string spec = Spec(kDec);
  spec.replace(spec.find("\"torch\""), 7, "\"vit\"");
  EXPECT_NE(ErrorOf(spec).find("unknown preset 'vit' (expected torch"), std::string::npos);
  // Without a preset every weight is named: the cross-attention's too.
  const std::string e = ErrorOf(Spec(
      "\"kind\": \"decoder_block\", \"embed_dim\": 64, \"num_heads\": 4, \"max_kv_len\": 16, \"tensors\": {"
      "\"norm1_w\": \"dec_pre.norm1.weight\", \"qkv_w\": \"dec_pre.self_attn.in_proj_weight\", "
      "\"o_w\": \"dec_pre.self_attn.out_proj.weight\", \"norm2_w\": \"dec_pre.norm2.weight\", "
      "\"cross_o_w\": \"dec_pre.multihead_attn.out_proj.weight\", \"norm3_w\": \"dec_pre.norm3.weight\", "
      "\"fc1_w\": \"dec_pre.linear1.weight\", \"fc2_w\": \"dec_pre.linear2.weight\"}"));
  EXPECT_NE(e.find("tensors.cross_qkv_w is required"), std::string::npos) << e;
}

// The linear kind: widths from the weight's shape or the spec, the bias
// optional unless the spec names it, and every mismatch an error naming the
// tensor or field.
std::string Head(const std::string& fields) {
  return "{\"layers\": [{\"name\": \"head\", \"kind\": \"linear\", \"max_q_len\": 16, " + fields + "}]}";
}

TEST(BlockSpec, LinearReadsTheHead) {
  ModelSpec s = load_spec("s.json", Head("\"prefix\": \"head.\""), Weights(), "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 1u);
  EXPECT_EQ(s.layers[0].query_dim, 64);  // from head.weight [20, 64]
  EXPECT_EQ(s.layers[0].output_dim, 20);
  EXPECT_EQ(s.layers[0].max_kv_len, 16);  // no keys: the query rows stand in
  EXPECT_EQ(s.layers[0].heads(), 0);      // no attention weights
  EXPECT_FALSE(s.layers[0].io().keys);     // one input: the rows
  s = load_spec("s.json",
                Head("\"in_features\": 64, \"out_features\": 20, \"tensors\": {\"weight\": \"head.weight\", "
                     "\"bias\": \"head.bias\"}"),
                Weights(), "w.safetensors", {});
  EXPECT_EQ(s.layers[0].output_dim, 20);
  // nn.Linear(bias=False): no bias tensor under the default name is fine.
  ArrayMap w = Weights();
  w.erase("head.bias");
  EXPECT_EQ(ErrorOf(Head("\"prefix\": \"head.\""), w), "");
}

// timm's patch_embed.proj is a Conv2d whose weight [D, C, p, p] is the
// patch projection's matrix [D, C*p*p] (patches flattened channel, row,
// column): linear reads it as that matrix, the same floats in the same order.
TEST(BlockSpec, LinearReadsAConvolutionsPatchWeight) {
  Array conv{"F32", true, {8, 3, 2, 2}, {}};
  for (int i = 0; i < 8 * 12; ++i) conv.data.push_back(0.01 * i - 0.3);
  const Array bias{"F32", true, {8}, std::vector<double>(8, 0.25)};
  ArrayMap w = {{"patch_embed.proj.weight", conv}, {"patch_embed.proj.bias", bias}};
  const std::string patch = "{\"layers\": [{\"name\": \"embed\", \"kind\": \"linear\", \"max_q_len\": 4, "
                            "\"prefix\": \"patch_embed.proj.\"";
  ModelSpec s = load_spec("s.json", patch + "}]}", w, "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 1u);
  EXPECT_EQ(s.layers[0].query_dim, 12);  // C * kh * kw
  EXPECT_EQ(s.layers[0].output_dim, 8);
  const FloatLinear& l = s.layers[0].as<LinearParams>().linear;
  EXPECT_EQ(l.w, conv.data);
  EXPECT_EQ(l.b, bias.data);
  // A Conv1d's [out, C, k] too; widths the spec gives must match the product.
  w["patch_embed.proj.weight"].shape = {8, 4, 3};
  EXPECT_EQ(load_spec("s.json", patch + "}]}", w, "w.safetensors", {}).layers[0].query_dim, 12);
  std::string e = ErrorOf(patch + ", \"in_features\": 10}]}", w);
  EXPECT_NE(e.find("tensor 'patch_embed.proj.weight' has shape [8, 4, 3], expected [8, 10] or a convolution's "
                   "[8, C, kh, kw] with C*kh*kw = 10"),
            std::string::npos)
      << e;
  w["patch_embed.proj.weight"].shape = {8, 3, 2, 2, 1};
  e = ErrorOf(patch + "}]}", w);
  EXPECT_NE(e.find("tensor 'patch_embed.proj.weight' has shape [8, 3, 2, 2, 1], expected [out_features, "
                   "in_features] (or a convolution's [out, C, kh, kw])"),
            std::string::npos)
      << e;
}

TEST(BlockSpec, LinearMissingTensorIsNamed) {
  ArrayMap w = Weights();
  w.erase("head.weight");
  std::string e = ErrorOf(Head("\"prefix\": \"head.\""), w);
  EXPECT_NE(e.find("layer 'head': missing tensor 'head.weight'"), std::string::npos) << e;
  e = ErrorOf(Head("\"prefix\": \"out.\""));
  EXPECT_NE(e.find("missing tensor 'out.weight' (no tensor starts with prefix 'out.'"), std::string::npos) << e;
  // A bias the spec names must be there.
  e = ErrorOf(Head("\"prefix\": \"head.\", \"tensors\": {\"bias\": \"head.b\"}"));
  EXPECT_NE(e.find("missing tensor 'head.b'"), std::string::npos) << e;
}

TEST(BlockSpec, LinearWrongShapeIsNamed) {
  std::string e = ErrorOf(Head("\"prefix\": \"head.\", \"in_features\": 60"));
  EXPECT_NE(e.find("tensor 'head.weight' has shape [20, 64], expected [20, 60]"), std::string::npos) << e;
  e = ErrorOf(Head("\"prefix\": \"head.\", \"out_features\": 13"));
  EXPECT_NE(e.find("tensor 'head.weight' has shape [20, 64], expected [13, 64]"), std::string::npos) << e;
  // A 1-D tensor as the weight, a bias of another width.
  e = ErrorOf(Head("\"tensors\": {\"weight\": \"head.bias\"}"));
  EXPECT_NE(e.find("tensor 'head.bias' has shape [20], expected [out_features, in_features]"), std::string::npos)
      << e;
  e = ErrorOf(Head("\"tensors\": {\"weight\": \"head.weight\", \"bias\": \"final_norm.bias\"}"));
  EXPECT_NE(e.find("tensor 'final_norm.bias' has shape [64], expected [20]"), std::string::npos) << e;
  e = ErrorOf(Head("\"prefix\": \"head.\", \"in_features\": 0"));
  EXPECT_NE(e.find("field 'in_features' must be a positive integer, got 0"), std::string::npos) << e;
  // Fields of other kinds are named as such.
  e = ErrorOf(Head("\"prefix\": \"head.\", \"dim\": 64"));
  EXPECT_NE(e.find("field 'dim' is not used by linear layers"), std::string::npos) << e;
}

}  // namespace
