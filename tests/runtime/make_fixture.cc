// Build-time generator of a small random-weight model covering every layer
// kind and mask, in the converter's input formats:
//   OUTDIR/weights.safetensors, OUTDIR/spec.json, OUTDIR/calib.npz
// tests/runtime/CMakeLists.txt then runs edgeattn-convert on it (int8, f32).
// Deterministic (fixed seed), so the .eatn files are reproducible.
//
// Layers (names are what the tests look up):
//   self_pad  MHA self-attention, E=16, 2 heads, key padding, max 8
//   causal    MHA self-attention, E=16, 4 heads, causal, max 8
//   cross     MHA cross-attention, E=16, 2 heads, kdim=vdim=12, key padding, q 6 / kv 10
//   additive  Bahdanau, query 10, key 12, attn 8, key padding, q 6 / kv 10
//   luong     Luong general, query 10, key 12, q 6 / kv 10
//   pool      attention pooling, dim 12, key padding, kv 20
//   decoder   MHA causal self-attention with a KV cache, E=16, 4 heads, max 12
//   gqa       the same with grouped-query heads: 4 query heads, 2 K/V heads
//             (separate q/k/v projections, k/v 8 wide), KV cache, max 10
// With a second argument "coverage", a model of coverage attention layers
// instead (kept apart so the generic tests of the main fixture stay as they are):
//   coverage       additive + coverage, query 10, key 12, attn 8, key padding,
//                  q 6 / kv 10, W_c as PyTorch's Linear(1, 8) weight [8, 1]
//   coverage_wide  additive + coverage, query 10, key 12, attn 21 (vector
//                  tails), value 5, q 8 / kv 16, w_c given as a [21] tensor
// With "kwt", a whole Torch-KWT model with post-norm (branch_norm) blocks
// (kwt_fixture below).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/array.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"

namespace cv = edgeattn::convert;

namespace {

uint64_t g_state = 0x5EEDF1C5ull;
double Uniform01() {
  uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<double>((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}
double Normal() {
  const double u1 = std::max(Uniform01(), 1e-300), u2 = Uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

cv::Array Random(const std::string& dtype, std::vector<size_t> shape, double sd) {
  cv::Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(a.numel());
  for (double& v : a.data) v = Normal() * sd;
  return a;
}

cv::Array ValidLens(size_t n, int lk) {
  cv::Array a;
  a.dtype = "<i4";
  a.is_float = false;
  a.shape = {n};
  for (size_t i = 0; i < n; ++i) a.data.push_back(i == 0 ? lk : 1 + static_cast<int>(Uniform01() * lk));
  return a;
}

}  // namespace

int coverage_fixture(const std::string& dir) {
  const double w = 0.35;
  std::vector<std::pair<std::string, cv::Array>> weights = {
      {"cov.W_q.weight", Random("F32", {8, 10}, w)},
      {"cov.W_k.weight", Random("F32", {8, 12}, w)},
      {"cov.W_k.bias", Random("F32", {8}, 0.1)},
      {"cov.v.weight", Random("F32", {1, 8}, 1.0)},
      {"cov.W_c.weight", Random("F32", {8, 1}, 1.0)},
      {"wide.W_q.weight", Random("F32", {21, 10}, w)},
      {"wide.W_k.weight", Random("F32", {21, 12}, w)},
      {"wide.W_k.bias", Random("F32", {21}, 0.1)},
      {"wide.v.weight", Random("F32", {21}, 1.0)},
      {"wide.coverage_w", Random("F32", {21}, 1.0)},
  };
  cv::save_safetensors(dir + "/weights.safetensors", weights);
  const size_t n = 8;
  std::vector<std::pair<std::string, cv::Array>> calib = {
      {"coverage.query", Random("<f4", {n, 6, 10}, 1.0)},
      {"coverage.key", Random("<f4", {n, 10, 12}, 1.0)},
      {"coverage.kv_valid_len", ValidLens(n, 10)},
      {"coverage_wide.query", Random("<f4", {n, 8, 10}, 1.0)},
      {"coverage_wide.key", Random("<f4", {n, 16, 12}, 1.0)},
      {"coverage_wide.value", Random("<f4", {n, 16, 5}, 1.0)},
  };
  cv::save_npz(dir + "/calib.npz", calib);
  std::ofstream spec(dir + "/spec.json");
  spec << R"({
  "model": "coverage_fixture",
  "layers": [
    {"name": "coverage", "kind": "additive", "prefix": "cov.", "query_dim": 10, "key_dim": 12,
     "attn_dim": 8, "coverage": true, "mask": "key_padding", "max_q_len": 6, "max_kv_len": 10},
    {"name": "coverage_wide", "kind": "additive", "prefix": "wide.", "query_dim": 10, "key_dim": 12,
     "attn_dim": 21, "value_dim": 5, "coverage": true, "max_q_len": 8, "max_kv_len": 16,
     "tensors": {"w_q": "wide.W_q.weight", "w_k": "wide.W_k.weight", "b": "wide.W_k.bias",
                 "v": "wide.v.weight", "w_c": "wide.coverage_w"}}
  ]
}
)";
  return spec.good() ? 0 : 1;
}

// A whole Torch-KWT model (models/kwt.py's names, the torch_kwt preset):
// 10 frames of 8 -> dim 16 -> class token + positions -> 2 post-norm blocks
// x + LayerNorm(f(x)) (encoder_block branch_norm: 2 heads with to_out, MLP
// 32) -> the class row -> mlp_head (5 classes), one Invoke per input.
int kwt_fixture(const std::string& dir) {
  const double w = 0.35;
  std::vector<std::pair<std::string, cv::Array>> weights = {
      {"to_patch_embedding.1.weight", Random("F32", {16, 8}, w)},
      {"to_patch_embedding.1.bias", Random("F32", {16}, 0.1)},
      {"pos_embedding", Random("F32", {1, 11, 16}, 0.5)},
      {"cls_token", Random("F32", {1, 1, 16}, 0.5)}};
  for (const char* b : {"transformer.layers.0.", "transformer.layers.1."}) {
    const std::string p = b;
    for (const char* n : {"0.norm.", "1.norm."}) {
      cv::Array g = Random("F32", {16}, 0.2);
      for (double& v : g.data) v += 1.0;
      weights.emplace_back(p + n + "weight", g);
      weights.emplace_back(p + n + "bias", Random("F32", {16}, 0.1));
    }
    weights.emplace_back(p + "0.fn.to_qkv.weight", Random("F32", {48, 16}, w));
    weights.emplace_back(p + "0.fn.to_out.0.weight", Random("F32", {16, 16}, w));
    weights.emplace_back(p + "0.fn.to_out.0.bias", Random("F32", {16}, 0.1));
    weights.emplace_back(p + "1.fn.net.0.weight", Random("F32", {32, 16}, w));
    weights.emplace_back(p + "1.fn.net.0.bias", Random("F32", {32}, 0.1));
    weights.emplace_back(p + "1.fn.net.3.weight", Random("F32", {16, 32}, w));
    weights.emplace_back(p + "1.fn.net.3.bias", Random("F32", {16}, 0.1));
  }
  weights.emplace_back("mlp_head.0.weight", Random("F32", {16}, 0.2));
  weights.emplace_back("mlp_head.0.bias", Random("F32", {16}, 0.1));
  weights.emplace_back("mlp_head.1.weight", Random("F32", {5, 16}, w));
  weights.emplace_back("mlp_head.1.bias", Random("F32", {5}, 0.1));
  for (double& v : weights[weights.size() - 4].second.data) v += 1.0;  // mlp_head.0's gain near 1
  cv::save_safetensors(dir + "/weights.safetensors", weights);
  cv::save_npz(dir + "/calib.npz", {{"embed.query", Random("<f4", {32, 10, 8}, 1.0)}});
  std::ofstream spec(dir + "/spec.json");
  spec << R"({"model": "kwt_fixture", "preset": "torch_kwt", "num_heads": 2, "pre_norm": false})" << "\n";
  return spec.good() ? 0 : 1;
}

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[2] : "";
  if (argc != 2 && !(argc == 3 && (mode == "coverage" || mode == "kwt"))) {
    std::fprintf(stderr, "usage: %s OUTDIR [coverage|kwt]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  if (mode == "coverage") return coverage_fixture(dir);
  if (mode == "kwt") return kwt_fixture(dir);
  const double w = 0.35;  // weight standard deviation: O(1) activations for O(1) inputs
  std::vector<std::pair<std::string, cv::Array>> weights = {
      {"self_pad.in_proj_weight", Random("F32", {48, 16}, w)},
      {"self_pad.in_proj_bias", Random("F32", {48}, 0.1)},
      {"self_pad.out_proj.weight", Random("F32", {16, 16}, w)},
      {"self_pad.out_proj.bias", Random("F32", {16}, 0.1)},
      {"causal.in_proj_weight", Random("F32", {48, 16}, w)},
      {"causal.in_proj_bias", Random("F32", {48}, 0.1)},
      {"causal.out_proj.weight", Random("F32", {16, 16}, w)},
      {"causal.out_proj.bias", Random("F32", {16}, 0.1)},
      {"cross.q_proj_weight", Random("F32", {16, 16}, w)},
      {"cross.k_proj_weight", Random("F32", {16, 12}, w)},
      {"cross.v_proj_weight", Random("F32", {16, 12}, w)},
      {"cross.in_proj_bias", Random("F32", {48}, 0.1)},
      {"cross.out_proj.weight", Random("F32", {16, 16}, w)},
      {"cross.out_proj.bias", Random("F32", {16}, 0.1)},
      {"add.W_q.weight", Random("F32", {8, 10}, w)},
      {"add.W_k.weight", Random("F32", {8, 12}, w)},
      {"add.W_k.bias", Random("F32", {8}, 0.1)},
      {"add.v.weight", Random("F32", {1, 8}, 1.0)},
      {"luong.W.weight", Random("F32", {10, 12}, w)},
      {"pool.query.weight", Random("F32", {1, 12}, 0.8)},
      {"decoder.in_proj_weight", Random("F32", {48, 16}, w)},
      {"decoder.in_proj_bias", Random("F32", {48}, 0.1)},
      {"decoder.out_proj.weight", Random("F32", {16, 16}, w)},
      {"decoder.out_proj.bias", Random("F32", {16}, 0.1)},
      {"gqa.q_proj.weight", Random("F32", {16, 16}, w)},
      {"gqa.q_proj.bias", Random("F32", {16}, 0.1)},
      {"gqa.k_proj.weight", Random("F32", {8, 16}, w)},
      {"gqa.k_proj.bias", Random("F32", {8}, 0.1)},
      {"gqa.v_proj.weight", Random("F32", {8, 16}, w)},
      {"gqa.v_proj.bias", Random("F32", {8}, 0.1)},
      {"gqa.out_proj.weight", Random("F32", {16, 16}, w)},
      {"gqa.out_proj.bias", Random("F32", {16}, 0.1)},
  };
  cv::save_safetensors(dir + "/weights.safetensors", weights);

  const size_t n = 8;
  std::vector<std::pair<std::string, cv::Array>> calib = {
      {"self_pad.query", Random("<f4", {n, 8, 16}, 1.0)},
      {"self_pad.kv_valid_len", ValidLens(n, 8)},
      {"causal.query", Random("<f4", {n, 8, 16}, 1.0)},
      {"cross.query", Random("<f4", {n, 6, 16}, 1.0)},
      {"cross.key", Random("<f4", {n, 10, 12}, 1.0)},
      {"cross.kv_valid_len", ValidLens(n, 10)},
      {"additive.query", Random("<f4", {n, 6, 10}, 1.0)},
      {"additive.key", Random("<f4", {n, 10, 12}, 1.0)},
      {"additive.kv_valid_len", ValidLens(n, 10)},
      {"luong.query", Random("<f4", {n, 6, 10}, 1.0)},
      {"luong.key", Random("<f4", {n, 10, 12}, 1.0)},
      {"pool.key", Random("<f4", {n, 20, 12}, 1.0)},
      {"pool.kv_valid_len", ValidLens(n, 20)},
      {"decoder.query", Random("<f4", {n, 12, 16}, 1.0)},
      {"gqa.query", Random("<f4", {n, 10, 16}, 1.0)},
  };
  cv::save_npz(dir + "/calib.npz", calib);

  std::ofstream spec(dir + "/spec.json");
  spec << R"({
  "model": "fixture",
  "layers": [
    {"name": "self_pad", "kind": "mha", "preset": "torch_mha", "prefix": "self_pad.",
     "embed_dim": 16, "num_heads": 2, "cross": false, "mask": "key_padding", "max_q_len": 8},
    {"name": "causal", "kind": "mha", "preset": "torch_mha", "prefix": "causal.",
     "embed_dim": 16, "num_heads": 4, "cross": false, "mask": "causal", "max_q_len": 8},
    {"name": "cross", "kind": "mha", "preset": "torch_mha", "prefix": "cross.",
     "embed_dim": 16, "num_heads": 2, "cross": true, "kdim": 12, "vdim": 12, "mask": "key_padding",
     "max_q_len": 6, "max_kv_len": 10},
    {"name": "additive", "kind": "additive", "prefix": "add.", "query_dim": 10, "key_dim": 12,
     "attn_dim": 8, "mask": "key_padding", "max_q_len": 6, "max_kv_len": 10},
    {"name": "luong", "kind": "luong", "score": "general", "prefix": "luong.", "query_dim": 10,
     "key_dim": 12, "max_q_len": 6, "max_kv_len": 10},
    {"name": "pool", "kind": "pooling", "prefix": "pool.", "dim": 12, "mask": "key_padding",
     "max_kv_len": 20},
    {"name": "decoder", "kind": "mha", "preset": "torch_mha", "prefix": "decoder.",
     "embed_dim": 16, "num_heads": 4, "mask": "causal", "kv_cache": true, "max_q_len": 12},
    {"name": "gqa", "kind": "mha", "preset": "linear", "prefix": "gqa.", "embed_dim": 16,
     "num_heads": 4, "num_kv_heads": 2, "mask": "causal", "kv_cache": true, "max_q_len": 10}
  ]
}
)";
  return spec.good() ? 0 : 1;
}
