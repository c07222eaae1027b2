// The whole-model preset torch_kwt (Torch-KWT's KWT, ID56/Torch-KWT
// models/kwt.py): a state dict under Torch-KWT's names made here, converted
// from the one-line preset and run with one Interpreter::Invoke, against the
// test's own float64 forward of KWT written from models/kwt.py. Post-norm
// (pre_norm false, the published KWT-1/2/3) is x + LayerNorm(f(x)): the
// preset writes mha -> layernorm -> add per sub-layer; pre-norm is the fused
// encoder_block. One head of dim_head == dim has no to_out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/spec/spec.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"
#include "whole_model.h"

namespace {
namespace torch_kwt_test {  // tests/CMakeLists.txt: unity builds

using namespace edgeattn::convert;
using fixtures::Entries;

constexpr int kFrames = 10, kFeatures = 8, kDim = 16, kMlp = 32, kDepth = 2, kClasses = 5, kSamples = 64;
constexpr int kRows = kFrames + 1;

using Rows = std::vector<double>;  // [rows][cols], row-major

Rows linear(const Rows& x, int rows, const Array& w, const Array* b) {
  const int out = static_cast<int>(w.shape[0]), in = static_cast<int>(w.shape[1]);
  Rows y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      double acc = b != nullptr ? b->data[static_cast<size_t>(o)] : 0.0;
      for (int i = 0; i < in; ++i) acc += w.data[static_cast<size_t>(o) * in + i] * x[static_cast<size_t>(r) * in + i];
      y[static_cast<size_t>(r) * out + o] = acc;
    }
  }
  return y;
}

Rows layernorm(const Rows& x, int rows, const Array& g, const Array& b) {
  Rows y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = x.data() + static_cast<size_t>(r) * kDim;
    double mu = 0, var = 0;
    for (int k = 0; k < kDim; ++k) mu += xr[k] / kDim;
    for (int k = 0; k < kDim; ++k) var += (xr[k] - mu) * (xr[k] - mu) / kDim;
    for (int k = 0; k < kDim; ++k) {
      y[static_cast<size_t>(r) * kDim + k] =
          (xr[k] - mu) / std::sqrt(var + 1e-5) * g.data[static_cast<size_t>(k)] + b.data[static_cast<size_t>(k)];
    }
  }
  return y;
}

struct Kwt {
  int heads;
  bool pre_norm, to_out, mean_pool;
  Entries weights;
  Array frames;  // [kSamples][kFrames][kFeatures]

  Kwt(int num_heads, bool pre, bool mean, unsigned seed) : heads(num_heads), pre_norm(pre), mean_pool(mean) {
    to_out = !(heads == 1);  // Torch-KWT's project_out with dim_head == dim / heads
    fixtures::Rng rng(seed);
    weights = fixtures::torch_kwt_weights(rng, to_out, kFeatures, kDim, kMlp, kDepth, kClasses, kRows);
    frames = fixtures::random_normal(rng, {size_t(kSamples), size_t(kFrames), size_t(kFeatures)}, 1.0);
  }

  const Array& w(const std::string& name) const {
    for (const auto& [n, a] : weights) {
      if (n == name) return a;
    }
    ADD_FAILURE() << "no tensor " << name;
    return weights[0].second;
  }

  std::string spec(const std::string& more = "") const {
    return R"({"preset": "torch_kwt", "num_heads": )" + std::to_string(heads) + R"(, "pre_norm": )" +
           (pre_norm ? "true" : "false") + (mean_pool ? R"(, "pool": "mean")" : "") + more + "}";
  }

  // models/kwt.py's Attention: to_qkv, per head softmax(q k^T dim_head^-0.5) v, to_out.
  Rows attention(const Rows& x, const std::string& b) const {
    const Rows qkv = linear(x, kRows, w(b + "0.fn.to_qkv.weight"), nullptr);
    const int hd = kDim / heads;
    Rows o(static_cast<size_t>(kRows) * kDim);
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < kRows; ++i) {
        std::vector<double> s(kRows);
        double m = -1e300, sum = 0;
        for (int j = 0; j < kRows; ++j) {
          double d = 0;
          for (int k = 0; k < hd; ++k) {
            d += qkv[static_cast<size_t>(i) * 3 * kDim + h * hd + k] * qkv[static_cast<size_t>(j) * 3 * kDim + kDim + h * hd + k];
          }
          s[static_cast<size_t>(j)] = d / std::sqrt(static_cast<double>(hd));
          m = std::max(m, s[static_cast<size_t>(j)]);
        }
        for (double& v : s) sum += (v = std::exp(v - m));
        for (int k = 0; k < hd; ++k) {
          double acc = 0;
          for (int j = 0; j < kRows; ++j) acc += s[static_cast<size_t>(j)] / sum * qkv[static_cast<size_t>(j) * 3 * kDim + 2 * kDim + h * hd + k];
          o[static_cast<size_t>(i) * kDim + h * hd + k] = acc;
        }
      }
    }
    return to_out ? linear(o, kRows, w(b + "0.fn.to_out.0.weight"), &w(b + "0.fn.to_out.0.bias")) : o;
  }

  Rows feed_forward(const Rows& x, const std::string& b) const {
    Rows h = linear(x, kRows, w(b + "1.fn.net.0.weight"), &w(b + "1.fn.net.0.bias"));
    for (double& v : h) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));  // nn.GELU()
    return linear(h, kRows, w(b + "1.fn.net.3.weight"), &w(b + "1.fn.net.3.bias"));
  }

  // KWT.forward on sample i, with its blocks in the given form.
  std::vector<double> forward(int i, bool pre) const {
    const Rows x0(frames.data.begin() + static_cast<long>(i) * kFrames * kFeatures,
                  frames.data.begin() + static_cast<long>(i + 1) * kFrames * kFeatures);
    const Rows e = linear(x0, kFrames, w("to_patch_embedding.1.weight"), &w("to_patch_embedding.1.bias"));
    Rows x(static_cast<size_t>(kRows) * kDim);
    for (int r = 0; r < kRows; ++r) {
      for (int k = 0; k < kDim; ++k) {
        const double v = r == 0 ? w("cls_token").data[static_cast<size_t>(k)] : e[static_cast<size_t>(r - 1) * kDim + k];
        x[static_cast<size_t>(r) * kDim + k] = v + w("pos_embedding").data[static_cast<size_t>(r) * kDim + k];
      }
    }
    for (int l = 0; l < kDepth; ++l) {
      const std::string b = "transformer.layers." + std::to_string(l) + ".";
      for (int part = 0; part < 2; ++part) {
        const std::string n = b + std::to_string(part) + ".norm.";
        auto fn = [&](const Rows& in) { return part == 0 ? attention(in, b) : feed_forward(in, b); };
        // PreNorm: fn(norm(x)); PostNorm: norm(fn(x)); then x = that + x.
        const Rows f = pre ? fn(layernorm(x, kRows, w(n + "weight"), w(n + "bias")))
                           : layernorm(fn(x), kRows, w(n + "weight"), w(n + "bias"));
        for (size_t k = 0; k < x.size(); ++k) x[k] += f[k];
      }
    }
    Rows pooled(kDim, 0.0);
    for (int r = 0; r < (mean_pool ? kRows : 1); ++r) {
      for (int k = 0; k < kDim; ++k) pooled[static_cast<size_t>(k)] += x[static_cast<size_t>(r) * kDim + k] / (mean_pool ? kRows : 1);
    }
    const Rows h = layernorm(pooled, 1, w("mlp_head.0.weight"), w("mlp_head.0.bias"));
    return linear(h, 1, w("mlp_head.1.weight"), &w("mlp_head.1.bias"));
  }
};

std::string convert(const Kwt& m, const std::string& dtype, const std::string& tag, const std::string& residual = "",
                    const std::string& spec = "") {
  return fixtures::convert_files(fixtures::temp_dir("torch_kwt_" + tag + "_" + dtype + residual), m.weights,
                                 spec.empty() ? m.spec() : spec, {{"embed.query", m.frames}}, dtype, residual);
}

// Every sample through one Invoke; the logits against the float64 KWT.
fixtures::LogitErrors run_all(const Kwt& m, const std::string& path, int steps) {
  fixtures::RunnableModel rt(path);
  const edgeattn::GraphInfo g = rt.graph();
  EXPECT_EQ(g.num_steps, steps);
  EXPECT_EQ(g.input_dim, kFeatures);
  EXPECT_EQ(g.output_dim, kClasses);
  fixtures::LogitErrors e;
  for (int i = 0; i < kSamples; ++i) {
    const double* x = m.frames.data.data() + static_cast<size_t>(i) * kFrames * kFeatures;
    e.add(fixtures::invoke_logits(rt, x, kFrames), m.forward(i, m.pre_norm));
  }
  return e;
}

// f32 against the float64 KWT, and int8 on the 16-bit stream (the
// default) and with --residual int8, each printed and held to the bounds;
// returns the two int8 figures.
std::pair<fixtures::LogitErrors, fixtures::LogitErrors> check_both_streams(const Kwt& m, const std::string& tag,
                                                                         const char* what, int steps) {
  const fixtures::LogitErrors f = run_all(m, convert(m, "f32", tag), steps);
  const fixtures::LogitErrors q = run_all(m, convert(m, "int8", tag), steps);
  const fixtures::LogitErrors q8 = run_all(m, convert(m, "int8", tag, "int8"), steps);
  std::printf("  torch_kwt %s: f32 worst %.2e; int8 relative L2 %.4f (worst %.4f), top-1 %d/%d; "
              "--residual int8: %.4f (worst %.4f), top-1 %d/%d\n",
              what, f.worst_sample, q.rel_l2(), q.worst_sample, q.top1_agree, kSamples, q8.rel_l2(), q8.worst_sample,
              q8.top1_agree, kSamples);
  EXPECT_LE(f.worst_sample, 1e-5);
  for (const fixtures::LogitErrors& e : {q, q8}) {
    EXPECT_LE(e.rel_l2(), 0.05);
    EXPECT_GE(e.top1_agree, kSamples * 9 / 10);
  }
  return {q, q8};
}

// The published configurations' form: post-norm, one head of dim_head ==
// dim (no to_out), the class row.
TEST(TorchKwt, PostNormOneHeadIsKwtsForward) {
  const Kwt m(1, false, false, 91);
  const ModelSpec spec = load_spec("spec.json", m.spec(), [&] {
    ArrayMap w;
    for (const auto& [n, a] : m.weights) w[n] = a;
    return w;
  }(), "w.safetensors", {});
  ASSERT_EQ(spec.layers.size(), 2u + kDepth + 3u);
  EXPECT_EQ(spec.layers[2].name, "block0");
  EXPECT_EQ(spec.layers[3].input_layer, 2);
  EXPECT_EQ(spec.preset, "torch_kwt: 10 frames of 8 -> to_patch_embedding.1 (16) -> cls_token + pos_embedding -> 2 blocks "
                         "transformer.layers.{i}. (1 head, no to_out, post-norm x + LayerNorm(f(x))) -> the class row -> "
                         "mlp_head (5)");
  const auto [q, q8] = check_both_streams(m, "post1", "post-norm, 1 head", static_cast<int>(spec.layers.size()));
  EXPECT_LT(q.rel_l2(), q8.rel_l2());  // the 16-bit stream (the default here) rounds the stream less
}

// The same weights with pre_norm true (the fused encoder_block), beside the
// post-norm case above: what the branch-norm form's extra roundings cost.
TEST(TorchKwt, PreNormOneHeadOnTheSameWeights) {
  const Kwt m(1, true, false, 91);
  check_both_streams(m, "pre1", "pre-norm, 1 head", 2 + kDepth + 3);
}

// pre_norm true (the class's default) is the fused encoder_block; two heads
// with to_out; the mean of every row, the class row too.
TEST(TorchKwt, PreNormTwoHeadsMeanPoolIsKwtsForward) {
  const Kwt m(2, true, true, 92);
  const int steps = 2 + kDepth + 3;
  const fixtures::LogitErrors f = run_all(m, convert(m, "f32", "pre2"), steps);
  const fixtures::LogitErrors q = run_all(m, convert(m, "int8", "pre2"), steps);
  std::printf("  torch_kwt pre-norm, 2 heads, mean: f32 worst %.2e; int8 relative L2 %.4f (worst %.4f), top-1 %d/%d\n",
              f.worst_sample, q.rel_l2(), q.worst_sample, q.top1_agree, kSamples);
  EXPECT_LE(f.worst_sample, 1e-5);
  EXPECT_LE(q.rel_l2(), 0.05);
  EXPECT_GE(q.top1_agree, kSamples * 9 / 10);
}

// The int8 bytes of every sample's logits, through one Invoke each.
std::vector<int8_t> logits_bytes(const Kwt& m, const std::string& path) {
  fixtures::RunnableModel rt(path);
  const edgeattn::GraphInfo g = rt.graph();
  std::vector<int8_t> all;
  for (int i = 0; i < kSamples; ++i) {
    const double* x = m.frames.data.data() + static_cast<size_t>(i) * kFrames * kFeatures;
    std::vector<int8_t> x8(static_cast<size_t>(kFrames) * kFeatures), y8(kClasses);
    for (size_t k = 0; k < x8.size(); ++k) {
      x8[k] = static_cast<int8_t>(
          std::clamp(std::nearbyint(x[k] / g.input_quant.scale) + g.input_quant.zero_point, -128.0, 127.0));
    }
    edgeattn::ModelInputs in = {x8.data(), kFrames, 0, nullptr, 0, 0};
    edgeattn::ModelOutputs out = {y8.data(), 0};
    EXPECT_EQ(rt.interp.Invoke(in, &out), edgeattn::Status::kOk) << rt.interp.error();
    all.insert(all.end(), y8.begin(), y8.end());
  }
  return all;
}

// The branch-norm block on the int8 stream computes what its parts as
// layers of their own do (mha, layernorm, add, ffn, layernorm, add): the
// same calibrated points, the same roundings, so the same logits, byte for
// byte.
TEST(TorchKwt, TheBranchNormBlockIsItsPartsAsLayers) {
  const Kwt m(1, false, false, 91);
  std::string spec = R"({"model": "kwt_parts", "layers": [
    {"name": "embed", "kind": "linear", "prefix": "to_patch_embedding.1.", "max_q_len": 10},
    {"name": "tok", "kind": "positions", "tensors": {"pos_embed": "pos_embedding", "cls_token": "cls_token"},
     "max_q_len": 10, "input": "embed"})";
  std::string stream = "tok";
  for (int i = 0; i < kDepth; ++i) {
    const std::string b = "transformer.layers." + std::to_string(i) + ".", n = std::to_string(i);
    spec += R"(,
    {"name": "attn)" + n + R"(", "kind": "mha", "embed_dim": 16, "num_heads": 1, "out_proj": false, "max_q_len": 11,
     "tensors": {"qkv_w": ")" + b + R"(0.fn.to_qkv.weight"}, "input": ")" + stream + R"("},
    {"name": "n1_)" + n + R"(", "kind": "layernorm", "prefix": ")" + b + R"(0.norm.", "dim": 16, "eps": 1e-5,
     "max_q_len": 11, "input": "attn)" + n + R"("},
    {"name": "h)" + n + R"(", "kind": "add", "dim": 16, "max_q_len": 11, "memory": ")" + stream + R"(", "input": "n1_)" + n + R"("},
    {"name": "ffn)" + n + R"(", "kind": "ffn", "dim": 16, "max_q_len": 11, "input": "h)" + n + R"(",
     "tensors": {"fc1_w": ")" + b + R"(1.fn.net.0.weight", "fc1_b": ")" + b + R"(1.fn.net.0.bias",
                 "fc2_w": ")" + b + R"(1.fn.net.3.weight", "fc2_b": ")" + b + R"(1.fn.net.3.bias"}},
    {"name": "n2_)" + n + R"(", "kind": "layernorm", "prefix": ")" + b + R"(1.norm.", "dim": 16, "eps": 1e-5,
     "max_q_len": 11, "input": "ffn)" + n + R"("},
    {"name": "y)" + n + R"(", "kind": "add", "dim": 16, "max_q_len": 11, "memory": "h)" + n + R"(", "input": "n2_)" + n + R"("})";
    stream = "y" + n;
  }
  spec += R"(,
    {"name": "pool", "kind": "row_pool", "mode": "first", "dim": 16, "max_kv_len": 11, "input": ")" + stream + R"("},
    {"name": "head_norm", "kind": "layernorm", "prefix": "mlp_head.0.", "dim": 16, "eps": 1e-5, "max_q_len": 1,
     "input": "pool"},
    {"name": "head", "kind": "linear", "prefix": "mlp_head.1.", "max_q_len": 1, "input": "head_norm"}]})";
  const std::vector<int8_t> parts = logits_bytes(m, convert(m, "int8", "parts", "", spec));
  const std::vector<int8_t> block = logits_bytes(m, convert(m, "int8", "post1", "int8"));  // the parts' int8 stream
  ASSERT_EQ(parts.size(), block.size());
  EXPECT_EQ(parts, block);
  const fixtures::LogitErrors f = run_all(m, convert(m, "f32", "parts", "", spec), 2 + 6 * kDepth + 3);
  EXPECT_LE(f.worst_sample, 1e-5);
}

// A test of the tests: the two block forms differ far beyond the f32 bound,
// so a preset that wired the other form would fail above.
TEST(TorchKwt, TheFormsDifferInTheForward) {
  const Kwt m(1, false, false, 91);
  double e2 = 0, r2 = 0;
  for (int i = 0; i < 8; ++i) {
    const std::vector<double> post = m.forward(i, false), pre = m.forward(i, true);
    for (size_t c = 0; c < post.size(); ++c) {
      e2 += (post[c] - pre[c]) * (post[c] - pre[c]);
      r2 += post[c] * post[c];
    }
  }
  EXPECT_GT(std::sqrt(e2 / r2), 1e-2);
}

TEST(TorchKwt, WhatTheWeightsDoNotSayIsAskedFor) {
  const Kwt one(1, false, false, 93);
  ArrayMap w;
  for (const auto& [n, a] : one.weights) w[n] = a;
  auto error_of = [&](const std::string& spec, const ArrayMap& weights) {
    try {
      load_spec("spec.json", spec, weights, "w.safetensors", {});
    } catch (const ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("converted");
  };
  EXPECT_NE(error_of(R"({"preset": "torch_kwt", "num_heads": 1})", w).find("needs \"pre_norm\""), std::string::npos);
  EXPECT_NE(error_of(R"({"preset": "torch_kwt", "num_heads": 2, "pre_norm": false})", w)
                .find("has no 'transformer.layers.0.0.fn.to_out.0.weight', which Torch-KWT leaves out only for one head"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"preset": "torch_kwt", "num_heads": 1, "pre_norm": false, "pool": "avg"})", w)
                .find("field 'pool' must be \"cls\""),
            std::string::npos);
  ArrayMap wrapped;  // a training checkpoint's names (model_state_dict saved with its module path)
  for (const auto& [n, a] : w) wrapped["module." + n] = a;
  EXPECT_NE(error_of(R"({"preset": "torch_kwt", "num_heads": 1, "pre_norm": false})", wrapped)
                .find("has no tensor 'to_patch_embedding.1.weight'"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"preset": "torch_kwt", "num_heads": 1, "pre_norm": false, "prefix": "module."})", wrapped),
            "converted");
}

}  // namespace torch_kwt_test
}  // namespace
