// Build-time generator of the fuzz_paths seed corpus (host only: it links the
// converter library). Writes small random-weight models of every layer kind
// into OUTDIR, int8 and f32, each as a whole .eatn file and with a few
// 16-byte trailers (model_input.h) that pick the corners: lengths 1, 2, 8,
// 16, 17, 31..33, 64, 65, 70, kv_valid_len at 0 / 1 / kv_len - 1 / kv_len,
// attention weights on and off.
//
// Layers: MHA self-attention (no mask, key padding, causal) with head dims
// 1..33, MHA cross-attention with kdim / vdim != embed_dim, causal
// self-attention with a KV cache and grouped-/multi-query heads, additive
// (Bahdanau, separate value dims; with coverage too: the cached-keys run of
// fuzz_paths is then a decoding sequence of q_len steps), Luong dot / general
// / scaled_dot, pooling, the block kinds and their parts, linear;
// every max length is 70. Some models use extreme weight or input scales
// (saturation, one-hot softmax, tiny scales). Deterministic: the same bytes
// on every run, so cross builds can replay the host's files.
//
//   make_paths_seeds OUTDIR
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/write/model_file.h"
#include "converter/model/dataset.h"
#include "converter/spec/spec.h"
#include "converter/io/file.h"
#include "converter/spec/spec.h"
#include "model_input.h"

namespace cv = edgeattn::convert;

namespace {

constexpr int kLen = 70;      // max_q_len / max_kv_len of every layer
constexpr size_t kSamples = 3;  // calibration samples per layer

uint64_t g_state = 0x9A775EED5ull;
double Normal() {
  const double u1 = (static_cast<double>(eafuzz::Mix(g_state) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(eafuzz::Mix(g_state) >> 11) * (1.0 / 9007199254740992.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

cv::Array Random(const char* dtype, std::vector<size_t> shape, double sd) {
  cv::Array a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(a.numel());
  for (double& v : a.data) v = Normal() * sd;
  return a;
}

// A model under construction: weights, calibration inputs and spec layers.
struct Builder {
  std::string name;
  double weight_gain = 1.0;  // weight sd = gain / sqrt(fan_in)
  double input_sd = 1.0;
  bool residual16 = false;  // int8 file: the blocks on the 16-bit residual stream (--residual int16)
  cv::ArrayMap weights, calib;
  std::string layers;

  void Weight(const std::string& key, size_t out, size_t in) {
    weights[key] = Random("F32", {out, in}, weight_gain / std::sqrt(static_cast<double>(in)));
  }
  void Bias(const std::string& key, size_t n) { weights[key] = Random("F32", {n}, 0.1 * weight_gain); }
  void Input(const std::string& key, int dim) {
    calib[key] = Random("<f4", {kSamples, static_cast<size_t>(kLen), static_cast<size_t>(dim)}, input_sd);
  }
  void ValidLens(const std::string& layer) {
    cv::Array a;
    a.dtype = "<i4";
    a.is_float = false;
    a.shape = {kSamples};
    for (size_t i = 0; i < kSamples; ++i) a.data.push_back(i == 0 ? kLen : 1 + static_cast<int>(eafuzz::Mix(g_state) % kLen));
    calib[layer + ".kv_valid_len"] = a;
  }
  void Layer(const std::string& json, const std::string& layer, const char* mask) {
    if (!layers.empty()) layers += ",\n";
    layers += "{\"name\": \"" + layer + "\", \"prefix\": \"" + layer + ".\", \"mask\": \"" + mask + "\", " + json + "}";
    if (std::string(mask) == "key_padding") ValidLens(layer);
  }
  void Lengths(std::string* json, bool q) {
    *json += ", \"max_kv_len\": " + std::to_string(kLen);
    if (q) *json += ", \"max_q_len\": " + std::to_string(kLen);
  }

  // Self-attention (packed in_proj) or cross-attention (separate q/k/v).
  // out16: "output": "int16" (an int16 output row, contract 5c-out).
  void Mha(const std::string& l, int e, int heads, const char* mask, int kdim = 0, int vdim = 0, bool out16 = false) {
    const bool cross = kdim != 0;
    const size_t E = static_cast<size_t>(e);
    if (!cross) {
      Weight(l + ".in_proj_weight", 3 * E, E);
    } else {
      Weight(l + ".q_proj_weight", E, E);
      Weight(l + ".k_proj_weight", E, static_cast<size_t>(kdim));
      Weight(l + ".v_proj_weight", E, static_cast<size_t>(vdim));
    }
    Bias(l + ".in_proj_bias", 3 * E);
    Weight(l + ".out_proj.weight", E, E);
    Bias(l + ".out_proj.bias", E);
    std::string j = "\"kind\": \"mha\", \"preset\": \"torch_mha\", \"embed_dim\": " + std::to_string(e) +
                    ", \"num_heads\": " + std::to_string(heads) + ", \"cross\": " + (cross ? "true" : "false");
    if (cross) j += ", \"kdim\": " + std::to_string(kdim) + ", \"vdim\": " + std::to_string(vdim);
    if (out16) j += ", \"output\": \"int16\"";
    Lengths(&j, true);
    Input(l + ".query", e);
    if (cross) {
      Input(l + ".key", kdim);
      Input(l + ".value", vdim);
    }
    Layer(j, l, mask);
  }
  // Causal self-attention that decodes with a KV cache, with kv_heads K/V
  // heads (grouped-query when fewer than heads): separate q/k/v projections.
  void Decoder(const std::string& l, int e, int heads, int kv_heads, bool out16 = false) {
    const size_t E = static_cast<size_t>(e), KV = E / static_cast<size_t>(heads) * static_cast<size_t>(kv_heads);
    Weight(l + ".q_proj.weight", E, E);
    Bias(l + ".q_proj.bias", E);
    Weight(l + ".k_proj.weight", KV, E);
    Bias(l + ".k_proj.bias", KV);
    Weight(l + ".v_proj.weight", KV, E);
    Bias(l + ".v_proj.bias", KV);
    Weight(l + ".out_proj.weight", E, E);
    Bias(l + ".out_proj.bias", E);
    std::string j = "\"kind\": \"mha\", \"preset\": \"linear\", \"embed_dim\": " + std::to_string(e) +
                    ", \"num_heads\": " + std::to_string(heads) + ", \"num_kv_heads\": " +
                    std::to_string(kv_heads) + ", \"kv_cache\": true";
    if (out16) j += ", \"output\": \"int16\"";
    Lengths(&j, true);
    Input(l + ".query", e);
    Layer(j, l, "causal");
  }
  // A layer with query, key and value inputs (additive, Luong).
  void QkvLayer(const std::string& l, std::string j, int qd, int kd, int vd, const char* mask) {
    j += ", \"query_dim\": " + std::to_string(qd) + ", \"key_dim\": " + std::to_string(kd) +
         ", \"value_dim\": " + std::to_string(vd);
    Lengths(&j, true);
    Input(l + ".query", qd);
    Input(l + ".key", kd);
    Input(l + ".value", vd);
    Layer(j, l, mask);
  }
  void Additive(const std::string& l, int qd, int kd, int ad, int vd, const char* mask, bool coverage = false) {
    Weight(l + ".W_q.weight", static_cast<size_t>(ad), static_cast<size_t>(qd));
    Weight(l + ".W_k.weight", static_cast<size_t>(ad), static_cast<size_t>(kd));
    Bias(l + ".W_k.bias", static_cast<size_t>(ad));
    Weight(l + ".v.weight", 1, static_cast<size_t>(ad));
    if (coverage) Weight(l + ".W_c.weight", static_cast<size_t>(ad), 1);  // nn.Linear(1, ad)
    QkvLayer(l, "\"kind\": \"additive\", \"attn_dim\": " + std::to_string(ad) +
                    (coverage ? ", \"coverage\": true" : ""), qd, kd, vd, mask);
  }
  void Luong(const std::string& l, const char* score, int qd, int kd, int vd, const char* mask) {
    if (std::string(score) == "general") Weight(l + ".W.weight", static_cast<size_t>(qd), static_cast<size_t>(kd));
    QkvLayer(l, std::string("\"kind\": \"luong\", \"score\": \"") + score + "\"", qd, kd, vd, mask);
  }
  // nn.LayerNorm: gains around 1, small biases.
  void Norm(const std::string& key, size_t d) {
    cv::Array gain = Random("F32", {d}, 0.3);
    for (double& g : gain.data) g += 1.0;
    weights[key + ".weight"] = gain;
    weights[key + ".bias"] = Random("F32", {d}, 0.1);
  }
  void LayerNorm(const std::string& l, int d) {
    Norm(l, static_cast<size_t>(d));
    std::string j = "\"kind\": \"layernorm\", \"dim\": " + std::to_string(d);
    Lengths(&j, true);
    Input(l + ".query", d);
    Layer(j, l, "none");
  }
  // nn.Linear(in, out) as a layer of its own (an output head).
  void Linear(const std::string& l, int in, int out) {
    Weight(l + ".weight", static_cast<size_t>(out), static_cast<size_t>(in));
    Bias(l + ".bias", static_cast<size_t>(out));
    std::string j = "\"kind\": \"linear\", \"in_features\": " + std::to_string(in) +
                    ", \"out_features\": " + std::to_string(out);
    Lengths(&j, true);
    Input(l + ".query", in);
    Layer(j, l, "none");
  }
  void Ffn(const std::string& l, int d, int h, const char* act) {
    Weight(l + ".fc1.weight", static_cast<size_t>(h), static_cast<size_t>(d));
    Bias(l + ".fc1.bias", static_cast<size_t>(h));
    Weight(l + ".fc2.weight", static_cast<size_t>(d), static_cast<size_t>(h));
    Bias(l + ".fc2.bias", static_cast<size_t>(d));
    std::string j = "\"kind\": \"ffn\", \"preset\": \"mlp\", \"dim\": " + std::to_string(d) +
                    ", \"activation\": \"" + act + "\"";
    Lengths(&j, true);
    Input(l + ".query", d);
    Layer(j, l, "none");
  }
  // nn.TransformerEncoderLayer (preset torch) with FFN width ff; branch_norm:
  // the norms on the sub-layers' outputs (Torch-KWT's post-norm form).
  void Block(const std::string& l, int e, int heads, int ff, bool norm_first, const char* act, const char* mask,
             bool branch_norm = false) {
    const size_t E = static_cast<size_t>(e);
    Norm(l + ".norm1", E);
    Norm(l + ".norm2", E);
    Weight(l + ".self_attn.in_proj_weight", 3 * E, E);
    Bias(l + ".self_attn.in_proj_bias", 3 * E);
    Weight(l + ".self_attn.out_proj.weight", E, E);
    Bias(l + ".self_attn.out_proj.bias", E);
    Weight(l + ".linear1.weight", static_cast<size_t>(ff), E);
    Bias(l + ".linear1.bias", static_cast<size_t>(ff));
    Weight(l + ".linear2.weight", E, static_cast<size_t>(ff));
    Bias(l + ".linear2.bias", E);
    std::string j = "\"kind\": \"encoder_block\", \"preset\": \"torch\", \"embed_dim\": " + std::to_string(e) +
                    ", \"num_heads\": " + std::to_string(heads) + ", \"norm_first\": " +
                    (norm_first ? "true" : "false") + ", \"activation\": \"" + act + "\"";
    if (branch_norm) j += ", \"branch_norm\": true";
    Lengths(&j, true);
    Input(l + ".query", e);
    Layer(j, l, mask);
  }
  // nn.TransformerDecoderLayer (preset torch) with FFN width ff; the memory is the key input.
  void Decoder(const std::string& l, int e, int heads, int ff, bool norm_first, const char* act, const char* mask) {
    const size_t E = static_cast<size_t>(e);
    for (const char* n : {".norm1", ".norm2", ".norm3"}) Norm(l + n, E);
    for (const char* a : {".self_attn", ".multihead_attn"}) {
      Weight(l + a + ".in_proj_weight", 3 * E, E);
      Bias(l + a + ".in_proj_bias", 3 * E);
      Weight(l + a + ".out_proj.weight", E, E);
      Bias(l + a + ".out_proj.bias", E);
    }
    Weight(l + ".linear1.weight", static_cast<size_t>(ff), E);
    Bias(l + ".linear1.bias", static_cast<size_t>(ff));
    Weight(l + ".linear2.weight", E, static_cast<size_t>(ff));
    Bias(l + ".linear2.bias", E);
    std::string j = "\"kind\": \"decoder_block\", \"preset\": \"torch\", \"embed_dim\": " + std::to_string(e) +
                    ", \"num_heads\": " + std::to_string(heads) + ", \"norm_first\": " +
                    (norm_first ? "true" : "false") + ", \"activation\": \"" + act + "\"";
    Lengths(&j, true);
    Input(l + ".query", e);
    Input(l + ".key", e);
    Layer(j, l, mask);
  }
  void Pooling(const std::string& l, int d, const char* mask) {
    weights[l + ".query.weight"] = Random("F32", {1, static_cast<size_t>(d)}, weight_gain);
    std::string j = "\"kind\": \"pooling\", \"dim\": " + std::to_string(d);
    Lengths(&j, false);
    Input(l + ".key", d);
    Layer(j, l, mask);
  }
};

// Trailers: {q cap, kv cap, q_len even/odd - 1, kv_len even/odd - 1, bits,
// kv_valid_len byte}. Bit 8 (re-seal) is set in all of them so that the
// fuzzer's mutations keep passing the file checksum.
struct Trailer {
  uint8_t b[8];
};
constexpr Trailer kTrailers[] = {
    {{71, 71, 69, 15, 69, 32, 2 | 8, 0}},              // 70 / 16, kv 70 / 33, weights, all valid
    {{71, 71, 0, 1, 0, 64, 2 | 8, (1 << 1) | 1}},      // 1 / 2, kv 1 / 65, weights, kv_valid_len 1
    {{71, 71, 30, 63, 63, 16, 8, (63 << 1) | 1}},      // 31 / 64, kv 64 / 17, kv_valid_len 63 (kv 64)
    {{71, 71, 32, 7, 31, 69, 2 | 8, (70 << 1) | 1}},   // 33 / 8, kv 32 / 70, weights, kv_valid_len 70 (kv 70)
    {{71, 71, 16, 64, 16, 0, 3 | 8, (0 << 1) | 1}},    // 17 / 65, kv 17 / 1, weights, float specials
};

void Write(const std::string& path, const std::vector<uint8_t>& bytes) {
  cv::write_file_atomic(path, bytes.data(), bytes.size());
}

void Emit(const Builder& b, const std::string& dir, int* files) {
  const std::string spec_text = "{\"model\": \"" + b.name + "\", \"layers\": [\n" + b.layers + "\n]}\n";
  const cv::ModelSpec spec = cv::load_spec(b.name + ".json", spec_text, b.weights, b.name, cv::LengthOverrides{});
  std::vector<cv::LayerData> calib;
  for (const cv::FloatLayer& L : spec.layers) calib.push_back(cv::load_layer_data(b.calib, b.name, L, false));
  cv::ModelSpec spec16 = spec;
  if (b.residual16) cv::use_residual16(&spec16);
  for (const cv::OutputType type : {cv::OutputType::kInt8, cv::OutputType::kF32}) {
    const std::vector<uint8_t> model =
        cv::build_model(type == cv::OutputType::kInt8 ? spec16 : spec, type, calib, b.name, "make_paths_seeds");
    const std::string base = dir + "/" + b.name + (type == cv::OutputType::kInt8 ? "_int8" : "_f32");
    Write(base + ".eatn", model);
    ++*files;
    for (size_t t = 0; t < sizeof(kTrailers) / sizeof(kTrailers[0]); ++t) {
      std::vector<uint8_t> bytes = model;
      bytes.insert(bytes.end(), kTrailers[t].b, kTrailers[t].b + 8);
      uint64_t seed = 0x5EED0000u + t;
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(eafuzz::Mix(seed)));
      Write(base + "_t" + std::to_string(t) + ".bin", bytes);
      ++*files;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::vector<Builder> models;
  auto add = [&](const char* name, double gain = 1.0, double input_sd = 1.0) -> Builder& {
    models.emplace_back();
    models.back().name = name;
    models.back().weight_gain = gain;
    models.back().input_sd = input_sd;
    return models.back();
  };
  // MHA: self-attention with head dims 1..33 (embed_dim / num_heads) and
  // every mask; cross-attention with kdim / vdim != embed_dim.
  struct MhaCase {
    const char* model;
    const char* layer;
    int embed_dim, heads;
    const char* mask;
    int kdim, vdim;  // 0: self-attention
  };
  static const MhaCase kMha[] = {
      {"mha_self_a", "hd1", 1, 1, "none", 0, 0},         {"mha_self_a", "hd3", 3, 1, "causal", 0, 0},
      {"mha_self_a", "hd8", 16, 2, "key_padding", 0, 0}, {"mha_self_b", "hd16", 32, 2, "causal", 0, 0},
      {"mha_self_b", "hd17", 34, 2, "none", 0, 0},       {"mha_self_b", "hd33", 33, 1, "key_padding", 0, 0},
      {"mha_self_c", "hd16x4", 64, 4, "none", 0, 0},     {"mha_self_c", "hd31", 62, 2, "causal", 0, 0},
      {"mha_self_c", "hd32", 32, 1, "key_padding", 0, 0}, {"mha_self_d", "hd2", 8, 4, "none", 0, 0},
      {"mha_self_d", "hd5", 20, 4, "causal", 0, 0},      {"mha_self_d", "hd7", 21, 3, "key_padding", 0, 0},
      {"mha_self_d", "hd9", 27, 3, "none", 0, 0},        {"mha_self_e", "hd11", 44, 4, "causal", 0, 0},
      {"mha_self_e", "hd13", 26, 2, "none", 0, 0},       {"mha_self_e", "hd15", 30, 2, "key_padding", 0, 0},
      {"mha_self_e", "hd18", 36, 2, "none", 0, 0},       {"mha_self_f", "hd20", 60, 3, "causal", 0, 0},
      {"mha_self_f", "hd23", 23, 1, "none", 0, 0},       {"mha_self_f", "hd25", 50, 2, "key_padding", 0, 0},
      {"mha_self_f", "hd29", 29, 1, "causal", 0, 0},     {"mha_cross_a", "x_hd8", 16, 2, "key_padding", 5, 17},
      {"mha_cross_a", "x_hd11", 33, 3, "none", 64, 1},   {"mha_cross_a", "x_hd1", 4, 4, "key_padding", 33, 65},
      {"mha_cross_b", "x_hd32", 64, 2, "none", 64, 64},  {"mha_cross_b", "x_hd17", 17, 1, "key_padding", 16, 31},
  };
  for (const MhaCase& m : kMha) {
    if (models.empty() || models.back().name != m.model) add(m.model);
    models.back().Mha(m.layer, m.embed_dim, m.heads, m.mask, m.kdim, m.vdim);
  }
  {  // decoding with a KV cache: plain, grouped-query and multi-query heads
    Builder& b = add("mha_decode");
    b.Decoder("kv_hd4", 16, 4, 4);
    b.Decoder("gqa_hd4", 24, 6, 2);
    b.Decoder("mqa_hd17", 51, 3, 1);
    b.Decoder("gqa_hd1", 8, 8, 4);
  }
  {  // additive (Bahdanau)
    Builder& b = add("additive_a");
    b.Additive("add_small", 10, 12, 8, 12, "key_padding");
    b.Additive("add_one", 1, 1, 1, 1, "none");
    b.Additive("add_odd", 33, 17, 33, 5, "key_padding");
    Builder& c = add("additive_b");
    c.Additive("add_wide", 64, 65, 16, 65, "none");
    c.Additive("add_a64", 7, 31, 64, 33, "key_padding");
  }
  {  // additive with coverage: attn dims 1, 8, 21 (vector tails), 64
    Builder& b = add("additive_cov");
    b.Additive("cov_small", 10, 12, 8, 12, "key_padding", true);
    b.Additive("cov_one", 1, 1, 1, 1, "none", true);
    b.Additive("cov_odd", 33, 17, 21, 5, "key_padding", true);
    b.Additive("cov_a64", 7, 31, 64, 33, "none", true);
    Builder& c = add("additive_cov_big", 4.0, 4.0);  // larger coverage terms (saturating tanh)
    c.Additive("cov_big", 9, 16, 17, 3, "key_padding", true);
  }
  {  // Luong
    Builder& b = add("luong_a");
    b.Luong("dot16", "dot", 16, 16, 16, "key_padding");
    b.Luong("sdot33", "scaled_dot", 33, 33, 7, "none");
    b.Luong("gen17", "general", 17, 31, 5, "key_padding");
    Builder& c = add("luong_b");
    c.Luong("dot1", "dot", 1, 1, 1, "none");
    c.Luong("gen64", "general", 64, 65, 64, "none");
    c.Luong("sdot32", "scaled_dot", 32, 32, 65, "key_padding");
  }
  {  // pooling
    Builder& b = add("pooling_a");
    b.Pooling("pool1", 1, "none");
    b.Pooling("pool16", 16, "key_padding");
    b.Pooling("pool17", 17, "none");
    b.Pooling("pool33", 33, "key_padding");
    b.Pooling("pool64", 64, "none");
    b.Pooling("pool65", 65, "key_padding");
  }
  {  // transformer blocks and their parts
    Builder& b = add("block_a");
    b.Block("pre16", 16, 2, 64, true, "gelu", "key_padding");
    b.Block("post17", 17, 1, 33, false, "relu", "none");
    b.Block("pre_causal", 32, 4, 48, true, "silu", "causal");
    b.Decoder("dec_pre16", 16, 2, 64, true, "gelu", "key_padding");
    Builder& c = add("block_b");
    c.Block("post_tanh", 24, 3, 96, false, "gelu_tanh", "key_padding");
    c.LayerNorm("norm1", 1);
    c.LayerNorm("norm65", 65);
    c.Ffn("ffn_gelu", 33, 130, "gelu");
    c.Ffn("ffn_relu", 8, 3, "relu");
    c.Decoder("dec_post24", 24, 3, 96, false, "relu", "none");
    Builder& d = add("block_extreme", 5.0, 10.0);  // saturating residuals and activations
    d.Block("big_pre", 16, 4, 64, true, "gelu", "key_padding");
    d.LayerNorm("big_norm", 16);
    d.Decoder("big_dec", 16, 4, 64, true, "gelu", "key_padding");
  }
  {  // extreme scales: saturating projections, one-hot softmax, tiny values
    Builder& b = add("extreme_large", 6.0, 20.0);
    b.Mha("big_self", 16, 2, "key_padding");
    b.Mha("big_cross", 16, 4, "none", 9, 3);
    b.Additive("big_add", 9, 16, 17, 3, "key_padding");
    b.Luong("big_dot", "dot", 32, 32, 32, "key_padding");
    b.Pooling("big_pool", 17, "key_padding");
    Builder& c = add("extreme_small", 0.01, 0.05);
    c.Mha("tiny_self", 32, 4, "causal");
    c.Additive("tiny_add", 16, 16, 32, 16, "none");
    c.Luong("tiny_gen", "general", 16, 8, 8, "none");
    c.Pooling("tiny_pool", 32, "none");
  }
  {  // linear layers (output heads): widths 1, ragged 16-channel blocks and
     // inputs not a multiple of 4; last, so the models above keep their bytes
    Builder& b = add("linear_a");
    b.Linear("lin1", 1, 1);
    b.Linear("lin13", 60, 13);
    b.Linear("lin33", 33, 17);
    b.Linear("lin65", 64, 65);
    Builder& c = add("linear_extreme", 6.0, 20.0);  // saturating outputs
    c.Linear("big_lin", 31, 20);
  }
  {  // mha layers with int16 outputs (contract 5c-out): every mask, cross,
     // KV-cache decoding with grouped-query heads, saturating outputs
    Builder& b = add("mha_out16");
    b.Mha("o16_pad", 16, 2, "key_padding", 0, 0, true);
    b.Mha("o16_causal", 33, 3, "causal", 0, 0, true);
    b.Mha("o16_cross", 17, 1, "none", 9, 31, true);
    b.Decoder("o16_gqa", 24, 6, 2, true);
    Builder& c = add("mha_out16_extreme", 6.0, 20.0);
    c.Mha("o16_big", 16, 2, "key_padding", 0, 0, true);
  }
  {  // blocks on the 16-bit residual stream (the narrowing, the int16
     // LayerNorms and epilogues) and the branch-norm form on both streams
     // (its adds: qs8_add, qs8_add16), saturating ones too; last, so the
     // models above keep their bytes
    Builder& b = add("block_stream16");
    b.residual16 = true;
    b.Block("post16", 24, 3, 96, false, "gelu", "key_padding");
    b.Block("pre16s", 17, 1, 40, true, "relu", "none");
    b.Block("branch16", 16, 2, 64, false, "gelu_tanh", "causal", true);
    Builder& c = add("block_branch");
    c.Block("branch8", 24, 3, 96, false, "gelu", "key_padding", true);
    c.Block("branch8_odd", 17, 1, 33, false, "relu", "none", true);
    Builder& d = add("block_stream16_extreme", 5.0, 10.0);
    d.residual16 = true;
    d.Block("big_post16", 16, 4, 64, false, "gelu", "key_padding");
    d.Block("big_branch16", 16, 4, 64, false, "gelu", "none", true);
  }
  int files = 0;
  try {
    for (const Builder& b : models) Emit(b, dir, &files);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_paths_seeds: %s\n", e.what());
    return 1;
  }
  std::printf("make_paths_seeds: %d files in %s\n", files, dir.c_str());
  return 0;
}
