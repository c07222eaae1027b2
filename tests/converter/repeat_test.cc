// "repeat" in the spec (N chained blocks from one entry over a name pattern)
// and the encoder block variants real checkpoints hold: a state dict made
// here in float64 (timm ViT names, nn.TransformerEncoder names, Hugging Face
// ViT names with separate q/k/v), written as safetensors, converted, and the
// runtime's int8 and f32 chains checked against this file's own float64
// forward of the same stack (written from the PyTorch / timm definitions;
// no converter code computes the expected values).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/kinds/encoder_block.h"
#include "converter/spec/spec.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"
#include "whole_model.h"

namespace {
namespace repeat_test {  // tests/CMakeLists.txt: unity builds

using fixtures::to_map;

using namespace edgeattn::convert;
using fixtures::Entries;
using Mat = std::vector<double>;
using nlohmann::json;

// ---- the stack's own float64 forward -----------------------------------------

// y [rows][out] = x [rows][in] W^T + b (b empty: no bias).
Mat linear(const Mat& x, int rows, int in, const Mat& w, const Mat& b, int out) {
  Mat y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r) {
    for (int n = 0; n < out; ++n) {
      double acc = b.empty() ? 0.0 : b[static_cast<size_t>(n)];
      for (int k = 0; k < in; ++k) acc += w[static_cast<size_t>(n) * in + k] * x[static_cast<size_t>(r) * in + k];
      y[static_cast<size_t>(r) * out + n] = acc;
    }
  }
  return y;
}

// nn.LayerNorm: biased variance, eps inside the square root.
Mat layer_norm(const Mat& x, int rows, int d, const Mat& g, const Mat& b, double eps) {
  Mat y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = x.data() + static_cast<size_t>(r) * d;
    double mean = 0, var = 0;
    for (int k = 0; k < d; ++k) mean += xr[k];
    mean /= d;
    for (int k = 0; k < d; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    var /= d;
    for (int k = 0; k < d; ++k) {
      y[static_cast<size_t>(r) * d + k] = (xr[k] - mean) / std::sqrt(var + eps) * g[static_cast<size_t>(k)] + b[static_cast<size_t>(k)];
    }
  }
  return y;
}

// nn.GELU() (erf) and nn.GELU(approximate="tanh").
double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

struct BlockWeights {
  Mat n1g, n1b, wq, wk, wv, bq, bk, bv, wo, bo, n2g, n2b, w1, b1, w2, b2;
};

// How the checkpoint writes a block, and the block's options.
struct Variant {
  std::string naming = "timm";  // timm | torch | hf (separate query/key/value)
  bool norm_first = true;
  bool q_bias = true, k_bias = true, v_bias = true;
  bool tanh_gelu = false;
  double eps = 1e-6;
  bool bias_free = false;  // nn.TransformerEncoderLayer(bias=False): no bias in any Linear or LayerNorm
};

constexpr int kE = 16, kH = 2, kF = 40, kRows = 9, kClasses = 5, kSamples = 16;

Mat self_attention(const Mat& x, const BlockWeights& w) {
  const int hd = kE / kH;
  const Mat q = linear(x, kRows, kE, w.wq, w.bq, kE), k = linear(x, kRows, kE, w.wk, w.bk, kE),
            v = linear(x, kRows, kE, w.wv, w.bv, kE);
  Mat ctx(static_cast<size_t>(kRows) * kE, 0.0);
  for (int h = 0; h < kH; ++h) {
    for (int r = 0; r < kRows; ++r) {
      std::vector<double> s(kRows);
      for (int j = 0; j < kRows; ++j) {
        double acc = 0;
        for (int c = 0; c < hd; ++c) acc += q[static_cast<size_t>(r) * kE + h * hd + c] * k[static_cast<size_t>(j) * kE + h * hd + c];
        s[static_cast<size_t>(j)] = acc / std::sqrt(static_cast<double>(hd));
      }
      const double m = *std::max_element(s.begin(), s.end());
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - m));
      for (int j = 0; j < kRows; ++j) {
        for (int c = 0; c < hd; ++c) {
          ctx[static_cast<size_t>(r) * kE + h * hd + c] += s[static_cast<size_t>(j)] / sum * v[static_cast<size_t>(j) * kE + h * hd + c];
        }
      }
    }
  }
  return linear(ctx, kRows, kE, w.wo, w.bo, kE);
}

Mat mlp(const Mat& x, const BlockWeights& w, bool tanh_gelu) {
  Mat h = linear(x, kRows, kE, w.w1, w.b1, kF);
  for (double& e : h) e = gelu(e, tanh_gelu);
  return linear(h, kRows, kF, w.w2, w.b2, kE);
}

void add_to(Mat* y, const Mat& a) {
  for (size_t k = 0; k < y->size(); ++k) (*y)[k] += a[k];
}

// timm's Block (pre-norm) or nn.TransformerEncoderLayer(norm_first=False).
Mat block_forward(const Mat& x, const BlockWeights& w, const Variant& v) {
  Mat y = x;
  if (v.norm_first) {
    add_to(&y, self_attention(layer_norm(y, kRows, kE, w.n1g, w.n1b, v.eps), w));
    add_to(&y, mlp(layer_norm(y, kRows, kE, w.n2g, w.n2b, v.eps), w, v.tanh_gelu));
  } else {
    add_to(&y, self_attention(y, w));
    y = layer_norm(y, kRows, kE, w.n1g, w.n1b, v.eps);
    add_to(&y, mlp(y, w, v.tanh_gelu));
    y = layer_norm(y, kRows, kE, w.n2g, w.n2b, v.eps);
  }
  return y;
}

// ---- the state dict ------------------------------------------------------------

Array f64(std::vector<size_t> shape, const Mat& data) { return fixtures::make("F64", std::move(shape), data); }

// N blocks (then a final LayerNorm and a linear head when asked) with their
// state dict, spec and calibration inputs.
struct Stack {
  Variant v;
  int blocks = 4;
  bool final_norm = false, head = false;
  std::vector<BlockWeights> w;
  Mat ng, nb, hw, hb;
  Entries weights;
  Mat inputs;  // [kSamples][kRows][kE]
  std::string preset_spec;  // when set, converted instead of spec(): a whole-model preset

  // sigma: the spread of the input rows (small rows make the LayerNorm's eps count).
  Stack(const Variant& variant, int n, bool norm, bool with_head, unsigned seed, double sigma = 1.0)
      : v(variant), blocks(n), final_norm(norm), head(with_head) {
    fixtures::Rng rng(seed);
    auto uniform = [&](size_t count, double a) {
      Mat m(count);
      for (double& e : m) e = rng.uniform(-a, a);
      return m;
    };
    auto gain = [&](size_t count) {
      Mat m = uniform(count, 0.3);
      for (double& e : m) e += 1.0;
      return m;
    };
    const size_t E = kE, F = kF;
    const double we = 1.0 / std::sqrt(double(kE)), wf = 1.0 / std::sqrt(double(kF));
    for (int i = 0; i < blocks; ++i) {
      BlockWeights b;
      b.n1g = gain(E), b.n1b = uniform(E, 0.2), b.n2g = gain(E), b.n2b = uniform(E, 0.2);
      b.wq = uniform(E * E, we), b.wk = uniform(E * E, we), b.wv = uniform(E * E, we), b.wo = uniform(E * E, we);
      if (v.q_bias) b.bq = uniform(E, 0.3);
      if (v.k_bias) b.bk = uniform(E, 0.3);
      if (v.v_bias) b.bv = uniform(E, 0.3);
      b.bo = uniform(E, 0.3);
      b.w1 = uniform(F * E, we), b.b1 = uniform(F, 0.3), b.w2 = uniform(E * F, wf), b.b2 = uniform(E, 0.3);
      if (v.bias_free) {
        b.bo.clear(), b.b1.clear(), b.b2.clear();
        b.n1b.assign(E, 0.0), b.n2b.assign(E, 0.0);
      }
      add_block(i, b);
      w.push_back(std::move(b));
    }
    if (final_norm) {
      ng = gain(E), nb = uniform(E, 0.2);
      weights.emplace_back("norm.weight", f64({E}, ng));
      weights.emplace_back("norm.bias", f64({E}, nb));
    }
    if (head) {
      hw = uniform(size_t(kClasses) * E, 2.0 * we), hb = uniform(kClasses, 0.5);
      weights.emplace_back("head.weight", f64({size_t(kClasses), E}, hw));
      weights.emplace_back("head.bias", f64({size_t(kClasses)}, hb));
    }
    inputs.resize(static_cast<size_t>(kSamples) * kRows * kE);
    for (double& e : inputs) e = sigma * rng.normal();
  }

  std::string block_prefix(int i) const {
    if (v.naming == "timm") return "blocks." + std::to_string(i) + ".";
    if (v.naming == "torch") return "layers." + std::to_string(i) + ".";
    return "vit.encoder.layer." + std::to_string(i) + ".";
  }

  void add_block(int i, const BlockWeights& b) {
    const size_t E = kE, F = kF;
    const std::string p = block_prefix(i);
    auto put = [&](const std::string& name, std::vector<size_t> shape, const Mat& m) {
      const bool bias = name.size() > 4 && name.compare(name.size() - 4, 4, "bias") == 0;
      if (v.bias_free && bias) return;  // the module has none
      weights.emplace_back(p + name, f64(std::move(shape), m));
    };
    Mat qkv = b.wq, qkv_b;
    qkv.insert(qkv.end(), b.wk.begin(), b.wk.end());
    qkv.insert(qkv.end(), b.wv.begin(), b.wv.end());
    if (v.q_bias) {  // fused q/k/v: all three biases or none
      qkv_b = b.bq;
      qkv_b.insert(qkv_b.end(), b.bk.begin(), b.bk.end());
      qkv_b.insert(qkv_b.end(), b.bv.begin(), b.bv.end());
    }
    if (v.naming == "timm") {  // timm VisionTransformer's Block
      put("norm1.weight", {E}, b.n1g), put("norm1.bias", {E}, b.n1b);
      put("attn.qkv.weight", {3 * E, E}, qkv);
      if (!qkv_b.empty()) put("attn.qkv.bias", {3 * E}, qkv_b);
      put("attn.proj.weight", {E, E}, b.wo), put("attn.proj.bias", {E}, b.bo);
      put("norm2.weight", {E}, b.n2g), put("norm2.bias", {E}, b.n2b);
      put("mlp.fc1.weight", {F, E}, b.w1), put("mlp.fc1.bias", {F}, b.b1);
      put("mlp.fc2.weight", {E, F}, b.w2), put("mlp.fc2.bias", {E}, b.b2);
    } else if (v.naming == "torch") {  // nn.TransformerEncoder's layers
      put("self_attn.in_proj_weight", {3 * E, E}, qkv);
      if (!qkv_b.empty()) put("self_attn.in_proj_bias", {3 * E}, qkv_b);
      put("self_attn.out_proj.weight", {E, E}, b.wo), put("self_attn.out_proj.bias", {E}, b.bo);
      put("linear1.weight", {F, E}, b.w1), put("linear1.bias", {F}, b.b1);
      put("linear2.weight", {E, F}, b.w2), put("linear2.bias", {E}, b.b2);
      put("norm1.weight", {E}, b.n1g), put("norm1.bias", {E}, b.n1b);
      put("norm2.weight", {E}, b.n2g), put("norm2.bias", {E}, b.n2b);
    } else {  // Hugging Face ViTLayer: separate query / key / value
      put("layernorm_before.weight", {E}, b.n1g), put("layernorm_before.bias", {E}, b.n1b);
      put("attention.attention.query.weight", {E, E}, b.wq);
      if (v.q_bias) put("attention.attention.query.bias", {E}, b.bq);
      put("attention.attention.key.weight", {E, E}, b.wk);
      if (v.k_bias) put("attention.attention.key.bias", {E}, b.bk);
      put("attention.attention.value.weight", {E, E}, b.wv);
      if (v.v_bias) put("attention.attention.value.bias", {E}, b.bv);
      put("attention.output.dense.weight", {E, E}, b.wo), put("attention.output.dense.bias", {E}, b.bo);
      put("layernorm_after.weight", {E}, b.n2g), put("layernorm_after.bias", {E}, b.n2b);
      put("intermediate.dense.weight", {F, E}, b.w1), put("intermediate.dense.bias", {F}, b.b1);
      put("output.dense.weight", {E, F}, b.w2), put("output.dense.bias", {E}, b.b2);
    }
  }

  // The "repeat" entry of the blocks (plus `extra` fields).
  json repeat_entry(const json& extra = json::object()) const {
    json e = {{"repeat", blocks},           {"name", "block{i}"},    {"kind", "encoder_block"},
              {"embed_dim", kE},            {"num_heads", kH},       {"max_q_len", kRows},
              {"norm_first", v.norm_first}, {"eps", v.eps},          {"activation", v.tanh_gelu ? "gelu_tanh" : "gelu"}};
    if (v.naming == "timm") {
      e["preset"] = "vit", e["prefix"] = "blocks.{i}.";
    } else if (v.naming == "torch") {
      e["preset"] = "torch", e["prefix"] = "layers.{i}.";
    } else {
      const std::string p = "vit.encoder.layer.{i}.";
      json t = {{"norm1_w", p + "layernorm_before.weight"}, {"norm1_b", p + "layernorm_before.bias"},
                {"q_w", p + "attention.attention.query.weight"}, {"k_w", p + "attention.attention.key.weight"},
                {"v_w", p + "attention.attention.value.weight"}, {"o_w", p + "attention.output.dense.weight"},
                {"o_b", p + "attention.output.dense.bias"},      {"norm2_w", p + "layernorm_after.weight"},
                {"norm2_b", p + "layernorm_after.bias"},         {"fc1_w", p + "intermediate.dense.weight"},
                {"fc1_b", p + "intermediate.dense.bias"},        {"fc2_w", p + "output.dense.weight"},
                {"fc2_b", p + "output.dense.bias"}};
      if (v.q_bias) t["q_b"] = p + "attention.attention.query.bias";
      if (v.k_bias) t["k_b"] = p + "attention.attention.key.bias";
      if (v.v_bias) t["v_b"] = p + "attention.attention.value.bias";
      e["tensors"] = t;
    }
    for (auto it = extra.begin(); it != extra.end(); ++it) e[it.key()] = it.value();
    return e;
  }

  std::string spec(const json& extra = json::object()) const {
    json layers = json::array({repeat_entry(extra)});
    const std::string last = "block" + std::to_string(blocks - 1);
    if (final_norm) {
      layers.push_back({{"name", "norm"}, {"kind", "layernorm"}, {"prefix", "norm."}, {"dim", kE}, {"eps", v.eps},
                        {"max_q_len", kRows}, {"input", last}});
    }
    if (head) {
      layers.push_back({{"name", "head"}, {"kind", "linear"}, {"prefix", "head."}, {"max_q_len", kRows},
                        {"input", final_norm ? std::string("norm") : last}});
    }
    return json{{"model", "stack"}, {"layers", layers}}.dump(1);
  }

  int layers() const { return blocks + (final_norm ? 1 : 0) + (head ? 1 : 0); }
  int out_dim() const { return head ? kClasses : kE; }

  // Sample s through the whole stack in float64.
  Mat forward(int s) const {
    Mat x(inputs.begin() + static_cast<long>(s) * kRows * kE, inputs.begin() + static_cast<long>(s + 1) * kRows * kE);
    for (const BlockWeights& b : w) x = block_forward(x, b, v);
    if (final_norm) x = layer_norm(x, kRows, kE, ng, nb, v.eps);
    if (head) x = linear(x, kRows, kE, hw, hb, kClasses);
    return x;
  }

  Entries calib() const {
    return {{"block0.query", fixtures::make("<f8", {size_t(kSamples), size_t(kRows), size_t(kE)}, inputs)}};
  }
};

std::string convert(const Stack& s, const std::string& dir, const std::string& dtype) {
  save_safetensors(dir + "/weights.safetensors", s.weights);
  fixtures::write_text(dir + "/spec.json", s.preset_spec.empty() ? s.spec() : s.preset_spec);
  save_npz(dir + "/calib.npz", s.calib());
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dtype == "int8" ? dir + "/calib.npz" : "";
  o.dtype = dtype;
  o.output = dir + "/stack_" + dtype + ".eatn";
  std::ostringstream report;
  run_convert(o, report);
  return o.output;
}

using Runtime = fixtures::RunnableModel;

// Sample s through the runtime's layers one after another, each layer's
// output buffer the next one's input as it is (int8: its bytes).
template <typename T>
Mat run_chain(Runtime& rt, const Stack& s, int sample) {
  const size_t width = kE;
  std::vector<T> x(static_cast<size_t>(kRows) * width);
  const edgeattn::LayerInfo first = rt.info(0), last = rt.info(s.layers() - 1);
  for (size_t k = 0; k < x.size(); ++k) {
    const double v = s.inputs[static_cast<size_t>(sample) * x.size() + k];
    if constexpr (std::is_same_v<T, float>) {
      x[k] = static_cast<float>(v);
    } else {
      const double q = std::nearbyint(v / first.query_quant.scale) + first.query_quant.zero_point;
      x[k] = static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, q)));
    }
  }
  for (int l = 0; l < s.layers(); ++l) {
    std::vector<T> y(static_cast<size_t>(kRows) * rt.info(l).output_dim);
    edgeattn::RunArgs a = {};
    a.q_len = a.kv_len = kRows;
    a.query = x.data();
    a.output = y.data();
    EXPECT_EQ(rt.interp.Run(l, a), edgeattn::Status::kOk) << rt.interp.error();
    x = std::move(y);
  }
  Mat out(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    if constexpr (std::is_same_v<T, float>) {
      out[k] = x[k];
    } else {
      out[k] = last.output_quant.scale * (x[k] - last.output_quant.zero_point);
    }
  }
  return out;
}

double relative_l2(const Mat& got, const Mat& want) {
  double e2 = 0, r2 = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    e2 += (got[k] - want[k]) * (got[k] - want[k]);
    r2 += want[k] * want[k];
  }
  return std::sqrt(e2 / r2);
}

struct Figures {
  double f32 = 0, int8 = 0;  // worst sample's relative L2 against the float64 forward
};

Figures check_stack(const Stack& s, const std::string& tag) {
  Figures fig;
  const std::string dir = fixtures::temp_dir(tag);
  {
    Runtime rt(convert(s, dir, "f32"));
    EXPECT_EQ(rt.model.num_layers(), s.layers());
    for (int i = 0; i < kSamples; ++i) fig.f32 = std::max(fig.f32, relative_l2(run_chain<float>(rt, s, i), s.forward(i)));
  }
  Runtime rt(convert(s, dir, "int8"));
  EXPECT_EQ(rt.model.num_layers(), s.layers());
  for (int l = 0; l < s.blocks; ++l) EXPECT_EQ(std::string(rt.info(l).name), "block" + std::to_string(l));
  // One quantization per hand-over: block i's output bytes are block i+1's input.
  for (int l = 1; l < s.layers(); ++l) {
    const edgeattn::LayerInfo from = rt.info(l - 1), to = rt.info(l);
    EXPECT_EQ(std::memcmp(&from.output_quant.scale, &to.query_quant.scale, sizeof(float)), 0) << to.name;
    EXPECT_EQ(from.output_quant.zero_point, to.query_quant.zero_point) << to.name;
  }
  for (int i = 0; i < kSamples; ++i) fig.int8 = std::max(fig.int8, relative_l2(run_chain<int8_t>(rt, s, i), s.forward(i)));
  std::printf("  %s: worst sample's relative L2 against float64: f32 %.2e, int8 %.4f\n", tag.c_str(), fig.f32,
              fig.int8);
  return fig;
}

// ---- item 3: a ViT-shaped stack from one "repeat" entry ----------------------

// timm ViT (qkv_bias=False, pre-norm, exact GELU, eps 1e-6): 4 blocks, the
// final norm and the head. f32: float32 arithmetic over 6 layers, well
// inside 1e-5. int8: one block round trip is 1.5-2.2 % relative L2
// (tests/kinds), and chain_test's two blocks and head 4.5 %; the pre-norm
// residual stream carries each block's error on to the next, so six layers
// in a chain stay within 8 %.
TEST(Repeat, VitStackMatchesItsFloat64Forward) {
  Variant v;
  v.q_bias = v.k_bias = v.v_bias = false;
  Stack s(v, 4, true, true, 41);
  // The ViT's front end, not converted: listed as unused, not an error.
  const size_t E = kE;
  s.weights.emplace_back("cls_token", f64({1, 1, E}, Mat(E, 0.01)));
  s.weights.emplace_back("pos_embed", f64({1, size_t(kRows), E}, Mat(size_t(kRows) * E, 0.02)));
  s.weights.emplace_back("patch_embed.proj.weight", f64({E, 3, 4, 4}, Mat(E * 48, 0.03)));
  s.weights.emplace_back("patch_embed.proj.bias", f64({E}, Mat(E, 0.04)));
  {
    ArrayMap w;
    for (const auto& [k, a] : s.weights) w[k] = a;
    const ModelSpec m = load_spec("spec.json", s.spec(), w, "w.safetensors", {});
    ASSERT_EQ(m.unused.size(), 4u);
    for (const UnusedTensor& t : m.unused) EXPECT_TRUE(t.beside.empty() && t.beyond.empty()) << t.name;
    EXPECT_TRUE(check_unused(m, "w.safetensors", false).empty());
  }
  const Figures f = check_stack(s, "repeat_vit");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.08);
}

// ---- item 2: the block variants of real checkpoints ---------------------------

// nn.TransformerEncoder(nn.TransformerEncoderLayer(..., activation=
// gelu tanh), post-norm) with its fused in_proj biases, eps 1e-5.
TEST(Repeat, TorchEncoderStackPostNormTanhGelu) {
  Variant v;
  v.naming = "torch";
  v.norm_first = false;
  v.tanh_gelu = true;
  v.eps = 1e-5;
  const Figures f = check_stack(Stack(v, 2, false, false, 42), "repeat_torch_post");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// nn.TransformerEncoder of nn.TransformerEncoderLayer(..., bias=False,
// norm_first=True): no bias tensor at all (LayerNorms without bias too).
TEST(Repeat, TorchEncoderStackWithoutBiases) {
  Variant v;
  v.naming = "torch";
  v.q_bias = v.k_bias = v.v_bias = false;
  v.bias_free = true;
  v.eps = 1e-5;
  const Figures f = check_stack(Stack(v, 3, false, false, 49), "repeat_torch_no_bias");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// The same stack from the whole-model preset torch_encoder (model_presets.h):
// the blocks' count, width and the final norm read from the weights, the
// options the state dict does not hold from the spec's top level.
TEST(Repeat, TorchEncoderPresetConvertsTheStack) {
  Variant v;
  v.naming = "torch";
  v.norm_first = false;
  v.tanh_gelu = true;
  v.eps = 1e-5;
  Stack s(v, 3, true, false, 50);
  s.preset_spec = json{{"model", "stack"}, {"preset", "torch_encoder"}, {"num_heads", kH}, {"max_q_len", kRows},
                       {"activation", "gelu_tanh"}}
                      .dump();
  const ModelSpec m = load_spec("spec.json", s.preset_spec, to_map(s.weights), "w.safetensors", {});
  ASSERT_EQ(m.layers.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(m.layers[i].input_layer, static_cast<int>(i) - 1);
  EXPECT_EQ(m.layers[3].name, "norm");
  EXPECT_EQ(m.preset, "torch_encoder: 3 blocks layers.{i}. (16, 2 heads, post-norm) -> norm");
  const Figures f = check_stack(s, "preset_torch_encoder");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// Hugging Face ViT layers: separate query / key / value (with biases),
// pre-norm, exact GELU, LayerNorm eps 1e-12, on input rows small enough
// (sigma 0.03) that eps 1e-5 instead would be 0.3 % off.
TEST(Repeat, SeparateQkvTensorsEps1e12) {
  Variant v;
  v.naming = "hf";
  v.eps = 1e-12;
  const Figures f = check_stack(Stack(v, 2, false, false, 43, 0.03), "repeat_hf");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// The same layers from the block preset hf_vit (its default names, the
// key's missing bias left out as every preset's), with Hugging Face's eps.
TEST(Repeat, HfVitBlockPresetReadsHuggingFacesNames) {
  Variant v;
  v.naming = "hf";
  v.k_bias = false;
  v.eps = 1e-12;
  Stack s(v, 2, false, false, 51, 0.03);
  s.preset_spec =
      json{{"layers", {s.repeat_entry({{"preset", "hf_vit"}, {"prefix", "vit.encoder.layer.{i}."}, {"tensors", nullptr},
                                        {"norm_first", nullptr}, {"eps", nullptr}, {"activation", nullptr}})}}}
          .dump();
  const Figures f = check_stack(s, "repeat_hf_preset");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// Separate q/k/v with a key projection that has no bias (as Whisper's
// encoder layers), post-norm, tanh GELU.
TEST(Repeat, SeparateQkvKeyWithoutBiasPostNorm) {
  Variant v;
  v.naming = "hf";
  v.k_bias = false;
  v.norm_first = false;
  v.tanh_gelu = true;
  v.eps = 1e-5;
  const Figures f = check_stack(Stack(v, 2, false, false, 44), "repeat_hf_nokbias");
  EXPECT_LE(f.f32, 1e-5);
  EXPECT_LE(f.int8, 0.06);
}

// A test of the tests: each variant's difference in the float64 forward is
// well above the f32 bound of 1e-5, so a converter that read the wrong GELU
// form, ignored eps or dropped a q or v bias would fail the f32 checks above.
// (A key bias adds q.b_k to every score of a row, which the softmax cancels:
// a lost k bias cannot show, and none is asserted.)
TEST(Repeat, TheForwardSeesEveryVariantsDifference) {
  Variant v;
  v.naming = "hf";
  v.eps = 1e-12;
  const Stack s(v, 2, false, false, 45, 0.03);
  const double bound = 2e-5;
  Stack other = s;
  other.v.tanh_gelu = true;
  EXPECT_GT(relative_l2(other.forward(0), s.forward(0)), bound) << "gelu_tanh";
  other = s;
  other.v.eps = 1e-5;  // encoder_block's default without a preset
  EXPECT_GT(relative_l2(other.forward(0), s.forward(0)), bound) << "eps";
  other = s;
  other.v.norm_first = false;
  EXPECT_GT(relative_l2(other.forward(0), s.forward(0)), 1e-2) << "norm_first";
  other = s;
  for (BlockWeights& b : other.w) b.bq.clear();
  EXPECT_GT(relative_l2(other.forward(0), s.forward(0)), bound) << "q bias";
  other = s;
  for (BlockWeights& b : other.w) b.bv.clear();
  EXPECT_GT(relative_l2(other.forward(0), s.forward(0)), bound) << "v bias";
}

// ---- the spec: what a repeat expands to, and its errors -------------------------

std::string error_of(const std::string& spec, const ArrayMap& w, bool unused = true) {
  try {
    const ModelSpec s = load_spec("spec.json", spec, w, "w.safetensors", {});
    if (unused) check_unused(s, "w.safetensors", false);
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(Repeat, ExpandsToChainedBlocks) {
  Variant v;
  const Stack s(v, 8, true, true, 46);
  const ModelSpec m = load_spec("spec.json", s.spec(), to_map(s.weights), "w.safetensors", {});
  ASSERT_EQ(m.layers.size(), 10u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(m.layers[static_cast<size_t>(i)].name, "block" + std::to_string(i));
    EXPECT_EQ(m.layers[static_cast<size_t>(i)].input_layer, i - 1);  // block 0: -1, the model's input
    // Block i reads its own tensors.
    const auto& M = m.layers[static_cast<size_t>(i)].as<BlockParams>().attn.as<MhaParams>();
    EXPECT_EQ(M.q_proj.w_name, "blocks." + std::to_string(i) + ".attn.qkv.weight[0:16]");
  }
  EXPECT_EQ(m.layers[9].name, "head");
  EXPECT_TRUE(m.unused.empty());
  // The first block takes the entry's own "input".
  const std::string spec =
      R"({"layers": [{"name": "pre", "kind": "layernorm", "prefix": "norm.", "dim": 16, "max_q_len": 9},)" +
      s.repeat_entry({{"input", "pre"}}).dump() + "]}";
  const ModelSpec m2 = load_spec("spec.json", spec, to_map(s.weights), "w.safetensors", {});
  EXPECT_EQ(m2.layers[1].name, "block0");
  EXPECT_EQ(m2.layers[1].input_layer, 0);
  EXPECT_EQ(m2.layers[2].input_layer, 1);
}

TEST(Repeat, Errors) {
  Variant v;
  const Stack s(v, 8, false, false, 47);
  const ArrayMap w = to_map(s.weights);
  auto with = [&](const json& extra) { return json{{"layers", {s.repeat_entry(extra)}}}.dump(); };
  EXPECT_HAS(error_of(with({{"repeat", 0}}), w), "layer 'block{i}': field 'repeat' must be the number of blocks, an integer in 1..4096, got 0");
  EXPECT_HAS(error_of(with({{"repeat", -3}}), w), "got -3");
  EXPECT_HAS(error_of(with({{"repeat", "8"}}), w), "got \"8\"");
  EXPECT_HAS(error_of(with({{"name", "block"}}), w), "field 'name' of a \"repeat\" entry must contain {i}");
  EXPECT_HAS(error_of(with({{"prefix", "blocks.0."}}), w),
             "field 'prefix' 'blocks.0.' of a \"repeat\" entry has no {i}: every block would read the same tensors");
  EXPECT_HAS(error_of(with({{"prefix", nullptr}}), w), "a \"repeat\" entry needs a 'prefix' with {i}");
  EXPECT_HAS(error_of(with({{"tensors", {{"q_w", "blocks.0.attn.q.weight"}}}}), w),
             "tensors.q_w 'blocks.0.attn.q.weight' of a \"repeat\" entry has no {i}");
  EXPECT_HAS(error_of(with({{"input", "block{i}"}}), w), "field 'input' of a \"repeat\" entry is the first block's input");
  EXPECT_HAS(error_of(with({{"repeats", 3}}), w),
             "spec.json: layer 'block0' (block 0 of \"repeat\" 'block{i}'): unknown field 'repeats', did you mean 'repeat'?");
  EXPECT_HAS(error_of(json{{"layers", {{{"repeats", 3}, {"name", "b"}, {"kind", "layernorm"}, {"dim", kE}, {"max_q_len", kRows}}}}}.dump(), w),
             "spec.json: layer 'b': unknown field 'repeats', did you mean 'repeat'?");
  // Name clashes: with a layer before the repeat, and between two repeats.
  const std::string clash = json{{"layers", {{{"name", "block2"}, {"kind", "layernorm"}, {"prefix", "blocks.0.norm1."},
                                              {"dim", kE}, {"max_q_len", kRows}},
                                             s.repeat_entry()}}}
                                .dump();
  EXPECT_HAS(error_of(clash, w, false),
             "spec.json: layer 'block2' (block 2 of \"repeat\" 'block{i}'): duplicate layer name 'block2'");
  const std::string twice = json{{"layers", {s.repeat_entry(), s.repeat_entry({{"input", "block7"}})}}}.dump();
  EXPECT_HAS(error_of(twice, w, false), "layer 'block0' (block 0 of \"repeat\" 'block{i}'): duplicate layer name");
  // A tensor missing for block 7 names block 7 and the tensor.
  ArrayMap missing = w;
  missing.erase("blocks.7.mlp.fc1.weight");
  EXPECT_HAS(error_of(with({}), missing),
             "w.safetensors: layer 'block7' (block 7 of \"repeat\" 'block{i}'): missing tensor 'blocks.7.mlp.fc1.weight'");
  // A count above the model's blocks: block 8 is missing.
  EXPECT_HAS(error_of(with({{"repeat", 9}}), w),
             "layer 'block8' (block 8 of \"repeat\" 'block{i}'): missing tensor 'blocks.8.norm1.weight' (no tensor "
             "starts with prefix 'blocks.8.'");
  // A count below the model's blocks: blocks 6 and 7 would be left out.
  EXPECT_HAS(error_of(with({{"repeat", 6}}), w),
             "w.safetensors: tensor 'blocks.6.attn.proj.bias' (block 6 under prefix 'blocks.{i}.' of \"repeat\" "
             "'block{i}', which converts blocks 0..5) is used by no layer: the model has more blocks than the spec "
             "converts; set \"repeat\" to the model's number of blocks or pass --allow-unused");
  {
    const ModelSpec m = load_spec("spec.json", with({{"repeat", 6}}), w, "w.safetensors", {});
    EXPECT_EQ(check_unused(m, "w.safetensors", true).size(), 2u * s.weights.size() / 8);  // --allow-unused: warnings
  }
  // A tensor under a block's prefix that the block does not read (timm's
  // LayerScale) is next to that block.
  ArrayMap scaled = w;
  scaled["blocks.3.ls1.gamma"] = fixtures::make("F64", {size_t(kE)}, Mat(kE, 1e-5));
  EXPECT_HAS(error_of(with({}), scaled), "tensor 'blocks.3.ls1.gamma' (in module 'blocks.3.ls1' with ");
  EXPECT_HAS(error_of(with({}), scaled), "of layer 'block3') is used by no layer");
  // Only layers whose one input is their query rows chain: a cross-attention
  // reads a key sequence of its own.
  const std::string p = "blocks.{i}.attn.proj.weight";
  const std::string cross =
      json{{"layers", {{{"repeat", 2}, {"name", "x{i}"}, {"kind", "mha"}, {"cross", true}, {"embed_dim", kE},
                        {"num_heads", kH}, {"max_q_len", kRows}, {"max_kv_len", kRows},
                        {"tensors", {{"q_w", p}, {"k_w", p}, {"v_w", p}, {"o_w", p}}}}}}}
          .dump();
  EXPECT_HAS(error_of(cross, w, false),
             "spec.json: layer 'x1' (block 1 of \"repeat\" 'x{i}'): \"repeat\" (each block reads the one before): a "
             "mha layer reads a key sequence of its own");
  // Field errors of the entry name the block.
  EXPECT_HAS(error_of(with({{"num_heads", 3}}), w), "layer 'block0' (block 0 of \"repeat\" 'block{i}'): embed_dim 16 is not divisible by num_heads 3");
}

// A bias the spec names must be in the file (it is not left out quietly),
// and every named tensor must be one the layer reads.
TEST(Repeat, NamedTensorsAreRead) {
  Variant v;
  v.naming = "hf";
  v.k_bias = false;
  const Stack s(v, 2, false, false, 48);
  const ArrayMap w = to_map(s.weights);
  const std::string p = "vit.encoder.layer.{i}.";
  auto with = [&](const json& tensors) {
    json e = s.repeat_entry();
    for (auto it = tensors.begin(); it != tensors.end(); ++it) e["tensors"][it.key()] = it.value();
    return json{{"layers", {e}}}.dump();
  };
  EXPECT_EQ(error_of(with(json::object()), w), "");
  EXPECT_HAS(error_of(with({{"k_b", p + "attention.attention.key.bias"}}), w),
             "w.safetensors: layer 'block0' (block 0 of \"repeat\" 'block{i}'): missing tensor "
             "'vit.encoder.layer.0.attention.attention.key.bias' (tensors.k_b)");
  EXPECT_HAS(error_of(with({{"norm2_b", p + "layernorm_after.bais"}}), w),
             "missing tensor 'vit.encoder.layer.0.layernorm_after.bais' (tensors.norm2_b)");
  // A fused weight beside the separate ones is not read: an error, not a choice.
  ArrayMap fused = w;
  for (int i = 0; i < 2; ++i) {
    fused["vit.encoder.layer." + std::to_string(i) + ".attention.attention.qkv.weight"] =
        fixtures::make("F64", {size_t(3 * kE), size_t(kE)}, Mat(3 * kE * kE, 0.1));
  }
  EXPECT_HAS(error_of(with({{"qkv_w", p + "attention.attention.qkv.weight"}}), fused),
             "spec.json: layer 'block0' (block 0 of \"repeat\" 'block{i}'): tensors.qkv_w names "
             "'vit.encoder.layer.0.attention.attention.qkv.weight', which this encoder_block layer does not read");
}

}  // namespace repeat_test
}  // namespace
