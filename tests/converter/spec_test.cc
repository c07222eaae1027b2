// Spec parsing and preset resolution (and their error messages).
#include <gtest/gtest.h>

#include <cmath>

#include "converter/base/error.h"
#include "converter/kinds/additive.h"
#include "converter/kinds/luong.h"
#include "converter/kinds/mha.h"
#include "converter/kinds/pooling.h"
#include "converter/spec/spec.h"
#include "fixtures.h"

namespace {

using fixtures::to_map;

using namespace edgeattn::convert;

std::string error_of(const std::string& spec, const ArrayMap& w) {
  try {
    load_spec("s.json", spec, w, "w.safetensors", {});
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

TEST(ConverterSpec, TorchMhaPackedSlices) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", false, "torch_mha", 1);
  const ArrayMap w = to_map(c.weights);
  const ModelSpec s = load_spec("s.json", c.spec_json, w, "w.safetensors", {});
  ASSERT_EQ(s.layers.size(), 1u);
  const FloatLayer& L = s.layers[0];
  EXPECT_EQ(L.kind, &kinds::kind_mha);
  const MhaParams& P = L.as<MhaParams>();
  EXPECT_EQ(P.head_dim, 5);
  EXPECT_DOUBLE_EQ(P.scale, 1.0 / std::sqrt(5.0));
  const Array& packed = w.at("blk.attn.in_proj_weight");
  EXPECT_EQ(P.k_proj.w[0], packed.data[20 * 20]);
  EXPECT_EQ(P.v_proj.w.back(), packed.data.back());
  EXPECT_EQ(P.k_proj.b[0], w.at("blk.attn.in_proj_bias").data[20]);
  EXPECT_EQ(L.max_q_len, 8);
  const ModelSpec o = load_spec("s.json", c.spec_json, w, "w.safetensors", {32, 40});
  EXPECT_EQ(o.layers[0].max_q_len, 32);
  EXPECT_EQ(o.layers[0].max_kv_len, 40);
}

TEST(ConverterSpec, ExplicitMhaTensorsAndNoBias) {
  const fixtures::LayerCase c = fixtures::mha_case("none", false, "linear", 5);
  ArrayMap w = to_map(c.weights);
  std::string spec = c.spec_json;
  spec.replace(spec.find("\"preset\": \"linear\""), 18,
               "\"tensors\": {\"q_w\": \"blk.attn.q_proj.weight\", \"k_w\": \"blk.attn.k_proj.weight\", "
               "\"v_w\": \"blk.attn.v_proj.weight\", \"o_w\": \"blk.attn.out_proj.weight\", "
               "\"o_b\": \"blk.attn.out_proj.bias\"}");
  const FloatLayer L = load_spec("s.json", spec, w, "w", {}).layers[0];
  const MhaParams& P = L.as<MhaParams>();
  EXPECT_TRUE(P.q_proj.b.empty());
  EXPECT_EQ(P.out_proj.b.size(), 20u);
  EXPECT_EQ(P.v_proj.w, w.at("blk.attn.v_proj.weight").data);
}

TEST(ConverterSpec, LuongGeneralStoresTranspose) {
  const fixtures::LayerCase c = fixtures::luong_case("general", 2);
  const ArrayMap w = to_map(c.weights);
  const FloatLayer L = load_spec("s.json", c.spec_json, w, "w", {}).layers[0];
  const Array& W = w.at("attn.W.weight");  // [query_dim 12][key_dim 10]
  const LuongParams& P = L.as<LuongParams>();
  EXPECT_EQ(P.w.in, 12);
  EXPECT_EQ(P.w.out, 10);
  for (int r = 0; r < 12; ++r)
    for (int k = 0; k < 10; ++k) EXPECT_EQ(P.w.w[static_cast<size_t>(k) * 12 + r], W.data[static_cast<size_t>(r) * 10 + k]);
  EXPECT_DOUBLE_EQ(P.scale, 1.0);
  const FloatLayer S = load_spec("s.json", fixtures::luong_case("scaled_dot", 2).spec_json, w, "w", {}).layers[0];
  EXPECT_DOUBLE_EQ(S.as<LuongParams>().scale, 0.25);
}

TEST(ConverterSpec, PoolingQueryShapes) {
  fixtures::LayerCase c = fixtures::pooling_case(3);
  ArrayMap w = to_map(c.weights);
  EXPECT_EQ(load_spec("s.json", c.spec_json, w, "w", {}).layers[0].max_q_len, 1);
  w["pool.query.weight"].shape = {16};
  EXPECT_EQ(load_spec("s.json", c.spec_json, w, "w", {}).layers[0].as<PoolingParams>().query.size(), 16u);
  w["pool.query.weight"].shape = {2, 8};
  EXPECT_NE(error_of(c.spec_json, w).find("tensor 'pool.query.weight' has shape [2, 8], expected [16]"), std::string::npos)
      << error_of(c.spec_json, w);
}

TEST(ConverterSpec, Errors) {
  const fixtures::LayerCase c = fixtures::mha_case("causal", false, "linear", 4);
  ArrayMap w = to_map(c.weights);
  EXPECT_EQ(error_of(c.spec_json, w), "");
  EXPECT_NE(error_of("{\"layers\": 3}", w).find("s.json: expected an object with a \"layers\" array"), std::string::npos);
  EXPECT_EQ(error_of("{\"layers\": [}", w),
            "s.json: malformed JSON at line 1, column 13: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  std::string spec = c.spec_json;
  spec.replace(spec.find("\"causal\""), 8, "\"diagonal\"");
  EXPECT_NE(error_of(spec, w).find("unknown mask 'diagonal'"), std::string::npos);
  ArrayMap missing = w;
  missing.erase("blk.attn.k_proj.weight");
  EXPECT_EQ(error_of(c.spec_json, missing), "w.safetensors: layer 'attn': missing tensor 'blk.attn.k_proj.weight'");
  // Linear preset biases are optional.
  ArrayMap nobias = w;
  nobias.erase("blk.attn.v_proj.bias");
  EXPECT_EQ(error_of(c.spec_json, nobias), "");
  spec = c.spec_json;
  spec.replace(spec.find("\"max_q_len\": 8"), 14, "\"max_q_len\": -1");
  EXPECT_NE(error_of(spec, w).find("field 'max_q_len' must be a positive integer"), std::string::npos);
  const std::string additive_causal = fixtures::additive_case(1).spec_json;
  std::string ac = additive_causal;
  ac.replace(ac.find("\"key_padding\""), 13, "\"causal\"");
  EXPECT_NE(error_of(ac, to_map(fixtures::additive_case(1).weights)).find("causal masks are supported for mha, encoder_block layers only"),
            std::string::npos);
}

// Coverage: "coverage": true reads w_c (default name W_c.weight under the
// prefix, or tensors.w_c) as PyTorch's Linear(1, attn_dim) weight [A, 1] or as
// [A]; the field is additive-only and boolean; tensors.w_c needs coverage.
TEST(ConverterSpec, CoverageField) {
  const fixtures::LayerCase c = fixtures::additive_case(1);
  ArrayMap w = to_map(c.weights);
  const std::string plain = c.spec_json;
  auto with = [&](const std::string& field, const std::string& tensor) {
    std::string s = plain;
    s.replace(s.find("\"attn_dim\": 8"), 13, "\"attn_dim\": 8, " + field);
    const std::string v = "\"v\": \"attn.v.weight\"";
    if (!tensor.empty()) s.replace(s.find(v), v.size(), v + ", " + tensor);
    return s;
  };
  const std::string cov = with("\"coverage\": true", "\"w_c\": \"attn.W_c.weight\"");
  EXPECT_NE(error_of(cov, w).find("missing tensor 'attn.W_c.weight'"), std::string::npos) << error_of(cov, w);
  w["attn.W_c.weight"].dtype = "F32";
  w["attn.W_c.weight"].shape = {8, 1};
  w["attn.W_c.weight"].data.assign(8, 0.5);
  EXPECT_EQ(error_of(cov, w), "");
  const ModelSpec spec = load_spec("s.json", cov, w, "w.safetensors", {});
  ASSERT_EQ(spec.layers.size(), 1u);
  EXPECT_TRUE(spec.layers[0].as<AdditiveParams>().coverage);
  EXPECT_EQ(spec.layers[0].as<AdditiveParams>().w_c, std::vector<double>(8, 0.5));
  EXPECT_FALSE(load_spec("s.json", plain, w, "w.safetensors", {}).layers[0].as<AdditiveParams>().coverage);
  w["attn.W_c.weight"].shape = {8};
  EXPECT_EQ(error_of(cov, w), "");
  w["attn.W_c.weight"].shape = {4, 2};
  EXPECT_NE(error_of(cov, w).find("tensor 'attn.W_c.weight' has shape [4, 2], expected [8]"), std::string::npos)
      << error_of(cov, w);
  w["attn.W_c.weight"].shape = {8, 1};
  EXPECT_NE(error_of(with("\"coverage\": 1", "\"w_c\": \"attn.W_c.weight\""), w).find("field 'coverage' must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"coverage\": false", "\"w_c\": \"attn.W_c.weight\""), w).find("tensors.w_c needs \"coverage\": true"),
            std::string::npos);
  const fixtures::LayerCase m = fixtures::mha_case("causal", false, "linear", 4);
  std::string mc = m.spec_json;
  mc.replace(mc.find("\"embed_dim\""), 11, "\"coverage\": true, \"embed_dim\"");
  EXPECT_NE(error_of(mc, to_map(m.weights)).find("field 'coverage' is not used by mha layers (only by additive)"),
            std::string::npos) << error_of(mc, to_map(m.weights));
}

// Unknown fields are errors naming the field and the layer, with the nearest
// known field (a misspelled "mask" used to convert into a non-causal model).
TEST(ConverterSpec, UnknownFields) {
  const fixtures::LayerCase c = fixtures::mha_case("causal", false, "linear", 4);
  const ArrayMap w = to_map(c.weights);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string spec = c.spec_json;
    const size_t p = spec.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    return spec.replace(p, from.size(), to);
  };
  EXPECT_EQ(error_of(with("\"mask\"", "\"masking\""), w),
            "s.json: layer 'attn': unknown field 'masking', did you mean 'mask'?");
  EXPECT_EQ(error_of(with("\"num_heads\"", "\"num_head\""), w),
            "s.json: layer 'attn': unknown field 'num_head', did you mean 'num_heads'?");
  EXPECT_EQ(error_of(with("\"embed_dim\"", "\"embed_dmi\""), w),
            "s.json: layer 'attn': unknown field 'embed_dmi', did you mean 'embed_dim'?");
  EXPECT_EQ(error_of(with("\"max_kv_len\"", "\"Max_KV_Len\""), w),
            "s.json: layer 'attn': unknown field 'Max_KV_Len', did you mean 'max_kv_len'?");
  // Nothing close: the fields of the kind are listed.
  EXPECT_EQ(error_of(with("\"bias\": true", "\"dropout\": 0.1"), w),
            "s.json: layer 'attn': unknown field 'dropout' (mha layers have: name, kind, mask, max_q_len, "
            "max_kv_len, prefix, tensors, input, memory, calib_method, calib_headroom, repeat, embed_dim, num_heads, "
            "cross, kdim, vdim, scale, bias, preset, kv_cache, num_kv_heads, output, out_proj)");
  // A field of another kind.
  EXPECT_EQ(error_of(with("\"bias\": true", "\"dim\": 3"), w),
            "s.json: layer 'attn': field 'dim' is not used by mha layers (only by pooling, layernorm, ffn, embedding, argmax, positions, row_pool, quantize, dequantize, add), did you mean 'kdim'?");
  EXPECT_EQ(error_of(with("\"bias\": true", "\"query_dim\": 3"), w),
            "s.json: layer 'attn': field 'query_dim' is not used by mha layers (only by additive, luong) (mha "
            "layers have: name, kind, mask, max_q_len, max_kv_len, prefix, tensors, input, memory, calib_method, "
            "calib_headroom, repeat, embed_dim, num_heads, cross, kdim, vdim, scale, bias, preset, kv_cache, num_kv_heads, output, out_proj)");
  // Explicit tensor names.
  EXPECT_EQ(error_of(with("\"preset\": \"linear\"", "\"tensors\": {\"q_w\": \"x\", \"qb\": \"y\"}"), w),
            "s.json: layer 'attn': unknown field 'tensors.qb', did you mean 'tensors.q_b'?");
  // A misspelled kind field is reported as such, not as a missing 'kind'.
  EXPECT_EQ(error_of(with("\"kind\"", "\"knd\""), w),
            "s.json: layer 'attn': unknown field 'knd', did you mean 'kind'?");
  // Top level.
  EXPECT_EQ(error_of("{\"model\": \"m\", \"layer\": []}", w),
            "s.json: unknown field 'layer', did you mean 'layers'?");
  EXPECT_EQ(error_of(with("\"test_mha\"", "3"), w), "s.json: field 'model' must be a string");
  // Pooling has no max_q_len (its query length is 1).
  const fixtures::LayerCase p = fixtures::pooling_case(3);
  std::string ps = p.spec_json;
  ps.replace(ps.find("\"dim\""), 5, "\"max_q_len\": 1, \"dim\"");
  EXPECT_EQ(error_of(ps, to_map(p.weights)),
            "s.json: layer 'pool': field 'max_q_len' is not used by pooling layers (their query length is 1)");
}

TEST(ConverterSpec, MalformedJsonLineColumn) {
  const ArrayMap w;
  EXPECT_EQ(error_of("{\n  \"layers\": [\n    {\"name\": \"a\",,}\n  ]\n}\n", w),
            "s.json: malformed JSON at line 3, column 18: syntax error while parsing object key - unexpected ','; "
            "expected string literal");
  EXPECT_EQ(error_of("{\"layers\": [ {\"name\": ", w),
            "s.json: malformed JSON at line 1, column 23: syntax error while parsing value - unexpected end of "
            "input; expected '[', '{', or a literal");
}

}  // namespace

namespace {

// An mha layer's "output" (issue 37, contract 5c-out): "int16" or "int8";
// --residual int16 (use_residual16) gives int16 to the mha layers no other
// layer reads, auto (use_residual16_inside) to none; an int16 mha output
// cannot be another layer's input.
TEST(ConverterSpec, MhaOutput16) {
  const fixtures::LayerCase c = fixtures::mha_case("key_padding", false, "torch_mha", 1);
  const ArrayMap w = to_map(c.weights);
  const std::string layer = c.spec_json.substr(c.spec_json.find('[') + 1,
                                               c.spec_json.rfind(']') - c.spec_json.find('[') - 1);
  const auto named = [&](const std::string& name, const std::string& extra) {
    std::string l = layer;
    l.replace(l.find("\"attn\""), 6, "\"" + name + "\"");
    return l.substr(0, l.rfind('}')) + extra + "}";
  };
  const auto two = [&](const std::string& a_extra) {
    return R"({"model": "m", "layers": [)" + named("a", a_extra) + ", " + named("b", R"(, "input": "a")") + "]}";
  };
  EXPECT_FALSE(load_spec("s.json", c.spec_json, w, "w", {}).layers[0].output16);
  const std::string one16 = c.spec_json.substr(0, c.spec_json.rfind('}', c.spec_json.rfind(']'))) +
                            R"(, "output": "int16"}]})";
  EXPECT_TRUE(load_spec("s.json", one16, w, "w", {}).layers[0].output16);
  ModelSpec s = load_spec("s.json", two(""), w, "w", {});
  use_residual16(&s);
  EXPECT_FALSE(s.layers[0].output16);  // b reads it
  EXPECT_TRUE(s.layers[1].output16);   // the model's output
  ModelSpec a = load_spec("s.json", two(""), w, "w", {});
  std::string why;
  EXPECT_FALSE(use_residual16_inside(&a, &why));
  EXPECT_FALSE(a.layers[0].output16 || a.layers[1].output16);
  EXPECT_NE(error_of(two(R"(, "output": "int16")"), w).find("whose \"output\" is \"int16\""), std::string::npos)
      << error_of(two(R"(, "output": "int16")"), w);
  EXPECT_NE(error_of(two(R"(, "output": "int32")"), w).find("field 'output' must be \"int8\" or \"int16\""),
            std::string::npos)
      << error_of(two(R"(, "output": "int32")"), w);
}

}  // namespace
