// The spec fields of a generating model (models/transformer/
// generate.spec.json): "memory" chains a decoder's memory to an encoder
// layer, "decoder_start" marks the per-token part, a layer's
// "calib_method" overrides --calib-method; and their error messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/spec/spec.h"

namespace {

using namespace edgeattn::convert;
using json = nlohmann::json;

const std::string kDir = std::string(EA_MODELS_DIR) + "/transformer/";

json BundledSpec() {
  const std::vector<uint8_t> b = read_file(kDir + "generate.spec.json");
  return json::parse(std::string(b.begin(), b.end()));
}

const ArrayMap& Weights() {
  static const ArrayMap w = load_weights(kDir + "weights.safetensors");
  return w;
}

std::string ErrorOf(const json& spec) {
  try {
    load_spec("generate.spec.json", spec.dump(), Weights(), "weights.safetensors", {});
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

json& Layer(json& spec, const std::string& name) {
  for (json& l : spec["layers"]) {
    if (l["name"] == name) return l;
  }
  throw std::runtime_error("no layer " + name);
}

TEST(GenerateSpec, TheBundledSpecHasTwoPartsAndAChainedMemory) {
  const ModelSpec s = load_spec("generate.spec.json", BundledSpec().dump(), Weights(), "weights.safetensors", {});
  ASSERT_EQ(s.layers.size(), 10u);
  EXPECT_EQ(s.decoder_start, 4);  // tgt_emb
  const FloatLayer& dec = s.layers[6];
  EXPECT_EQ(dec.name, "decoder");
  EXPECT_EQ(dec.input_layer, 5);   // tgt_pos
  EXPECT_EQ(dec.memory_layer, 3);  // enc_norm
  EXPECT_EQ(dec.calib_method, "mse");
  EXPECT_EQ(s.layers[2].calib_method, "");  // the encoder: --calib-method's
  EXPECT_EQ(s.layers[4].input_layer, -1);   // tgt_emb reads the last token
}

TEST(GenerateSpec, BadFieldsAreErrorsNamingThem) {
  struct Case {
    const char* what;
    void (*edit)(json& s);
    const char* message;
  };
  const Case cases[] = {
      {"memory not an earlier layer", [](json& s) { Layer(s, "decoder")["memory"] = "head"; },
       "layer 'decoder': field 'memory': 'head' is not an earlier layer"},
      {"memory on a layer that reads none", [](json& s) { Layer(s, "dec_norm")["memory"] = "enc_norm"; },
       "field 'memory': a layernorm layer reads no memory (only cross-attention does)"},
      {"memory from a decoder layer",
       [](json& s) {
         Layer(s, "decoder")["memory"] = "tgt_pos";
         Layer(s, "decoder")["max_kv_len"] = 13;  // its 13 rows fit
       },
       "layer 'decoder': \"memory\" is for a decoder layer reading an encoder layer's rows"},
      {"decoder_start not a layer", [](json& s) { s["decoder_start"] = "nope"; },
       "field 'decoder_start': 'nope' is not a layer"},
      {"decoder_start the first layer", [](json& s) { s["decoder_start"] = "src_emb"; },
       "'src_emb' is the first layer; the encoder part before it must not be empty"},
      {"decoder_start with an input", [](json& s) { s["decoder_start"] = "tgt_pos"; },
       "layer 'tgt_pos' reads the last generated token, so it has no \"input\""},
      {"a decoder layer reading the encoder", [](json& s) { Layer(s, "dec_norm")["input"] = "enc_norm"; },
       "layer 'dec_norm' is in the decoder part (after decoder_start 'tgt_emb'): its \"input\" must be a decoder "
       "layer"},
      {"an unknown calib_method", [](json& s) { Layer(s, "head")["calib_method"] = "max"; },
       "layer 'head': field 'calib_method': 'max' (expected minmax, percentile or mse)"},
      {"a calib_headroom word", [](json& s) { Layer(s, "head")["calib_headroom"] = "wide"; },
       "layer 'head': field 'calib_headroom': \"wide\" (expected \"auto\" or a percentage in [0, 1000])"},
      {"a negative calib_headroom", [](json& s) { Layer(s, "head")["calib_headroom"] = -5; },
       "layer 'head': field 'calib_headroom': -5 (expected \"auto\" or a percentage in [0, 1000])"},
      {"a calib_headroom above 1000 %", [](json& s) { Layer(s, "head")["calib_headroom"] = 1500.5; },
       "layer 'head': field 'calib_headroom': 1500.5 (expected \"auto\" or a percentage in [0, 1000])"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    json spec = BundledSpec();
    c.edit(spec);
    const std::string e = ErrorOf(spec);
    EXPECT_NE(e.find(c.message), std::string::npos) << "error: " << e;
  }
}

}  // namespace
