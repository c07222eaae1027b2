// libFuzzer target: the converter's JSON spec reader (load_spec) resolved
// against a fixed set of weights (the bundled models' weights.safetensors,
// read once, plus a few small in-memory tensors the hand-written seeds use).
// A spec that resolves is also planned and converted to f32 (build_model),
// and the result loaded by the runtime: the writer must not crash on
// anything load_spec accepts. ConvertError is an accepted rejection.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "converter/write/model_file.h"
#include "converter/base/error.h"
#include "converter/io/safetensors.h"
#include "converter/spec/spec.h"
#include "edgeattn/edgeattn.hpp"
#include "fuzz_util.h"

namespace cv = edgeattn::convert;

namespace {

cv::ArrayMap* g_weights = nullptr;

cv::Array Tensor(std::vector<size_t> shape) {
  cv::Array a;
  a.dtype = "F32";
  a.shape = std::move(shape);
  a.data.resize(a.numel());
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = 0.05 * static_cast<double>((i * 7) % 13) - 0.3;
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_weights = new cv::ArrayMap();
  for (const char* m : {"transformer", "bahdanau", "pooling", "digits_vit"}) {  // digits_vit: the vit preset's seed
    try {
      for (auto& [k, v] : cv::load_safetensors(std::string(EA_MODELS_DIR) + "/" + m +
                                              "/weights.safetensors")) {
        g_weights->emplace(k, std::move(v));
      }
    } catch (const cv::ConvertError&) {
    }
  }
  g_weights->emplace("fz.W.weight", Tensor({10, 12}));
  g_weights->emplace("fz.query.weight", Tensor({1, 12}));
  g_weights->emplace("fz.in_proj_weight", Tensor({24, 8}));
  g_weights->emplace("fz.in_proj_bias", Tensor({24}));
  g_weights->emplace("fz.out_proj.weight", Tensor({8, 8}));
  g_weights->emplace("fz.out_proj.bias", Tensor({8}));
  g_weights->emplace("fz.bad", Tensor({0}));
  // nn.Transformer's layers (width 8, 2 heads, FFN 16) under `b`; a decoder
  // layer (`cross`) has multihead_attn and norm3 too.
  auto add_layer = [](const std::string& b, bool cross) {
    for (const char* attn : {"self_attn.", "multihead_attn."}) {
      if (!cross && std::string(attn) == "multihead_attn.") continue;
      g_weights->emplace(b + attn + "in_proj_weight", Tensor({24, 8}));
      g_weights->emplace(b + attn + "in_proj_bias", Tensor({24}));
      g_weights->emplace(b + attn + "out_proj.weight", Tensor({8, 8}));
      g_weights->emplace(b + attn + "out_proj.bias", Tensor({8}));
    }
    g_weights->emplace(b + "linear1.weight", Tensor({16, 8}));
    g_weights->emplace(b + "linear1.bias", Tensor({16}));
    g_weights->emplace(b + "linear2.weight", Tensor({8, 16}));
    g_weights->emplace(b + "linear2.bias", Tensor({8}));
    for (const char* n : {"norm1.", "norm2.", "norm3."}) {
      if (!cross && std::string(n) == "norm3.") continue;
      g_weights->emplace(b + n + "weight", Tensor({8}));
      g_weights->emplace(b + n + "bias", Tensor({8}));
    }
  };
  // An nn.TransformerEncoder of two layers under fz.layers.{i}. and its final
  // norm, for the torch_encoder preset's seed (preset_torch_encoder.json).
  add_layer("fz.layers.0.", false);
  add_layer("fz.layers.1.", false);
  g_weights->emplace("fz.norm.weight", Tensor({8}));
  g_weights->emplace("fz.norm.bias", Tensor({8}));
  // A seq2seq nn.Transformer (one layer on each side, vocabulary 10) under
  // PyTorch's translation tutorial's names, for the torch_transformer
  // preset's seed (preset_torch_transformer.json).
  add_layer("transformer.encoder.layers.0.", false);
  add_layer("transformer.decoder.layers.0.", true);
  for (const char* n : {"transformer.encoder.norm.", "transformer.decoder.norm."}) {
    g_weights->emplace(std::string(n) + "weight", Tensor({8}));
    g_weights->emplace(std::string(n) + "bias", Tensor({8}));
  }
  g_weights->emplace("src_tok_emb.embedding.weight", Tensor({10, 8}));
  g_weights->emplace("tgt_tok_emb.embedding.weight", Tensor({10, 8}));
  g_weights->emplace("generator.weight", Tensor({10, 8}));
  g_weights->emplace("generator.bias", Tensor({10}));
  // A 2-block Torch-KWT (width 8, 1 head without to_out, FFN 16, 6 frames of
  // 4, 3 classes) under kwt. for the torch_kwt preset's seed
  // (preset_torch_kwt.json: post-norm, the add kind's chain).
  g_weights->emplace("kwt.to_patch_embedding.1.weight", Tensor({8, 4}));
  g_weights->emplace("kwt.to_patch_embedding.1.bias", Tensor({8}));
  g_weights->emplace("kwt.pos_embedding", Tensor({1, 7, 8}));
  g_weights->emplace("kwt.cls_token", Tensor({1, 1, 8}));
  for (const char* b : {"kwt.transformer.layers.0.", "kwt.transformer.layers.1."}) {
    const std::string p = b;
    g_weights->emplace(p + "0.fn.to_qkv.weight", Tensor({24, 8}));
    g_weights->emplace(p + "1.fn.net.0.weight", Tensor({16, 8}));
    g_weights->emplace(p + "1.fn.net.0.bias", Tensor({16}));
    g_weights->emplace(p + "1.fn.net.3.weight", Tensor({8, 16}));
    g_weights->emplace(p + "1.fn.net.3.bias", Tensor({8}));
    for (const char* n : {"0.norm.", "1.norm."}) {
      g_weights->emplace(p + n + "weight", Tensor({8}));
      g_weights->emplace(p + n + "bias", Tensor({8}));
    }
  }
  g_weights->emplace("kwt.mlp_head.0.weight", Tensor({8}));
  g_weights->emplace("kwt.mlp_head.0.bias", Tensor({8}));
  g_weights->emplace("kwt.mlp_head.1.weight", Tensor({3, 8}));
  g_weights->emplace("kwt.mlp_head.1.bias", Tensor({3}));
  // Two blocks under fz.blocks.{i}. for the "repeat" seed (repeat_mha.json).
  for (const char* b : {"fz.blocks.0.", "fz.blocks.1."}) {
    g_weights->emplace(std::string(b) + "in_proj_weight", Tensor({24, 8}));
    g_weights->emplace(std::string(b) + "in_proj_bias", Tensor({24}));
    g_weights->emplace(std::string(b) + "out_proj.weight", Tensor({8, 8}));
    g_weights->emplace(std::string(b) + "out_proj.bias", Tensor({8}));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    cv::LengthOverrides none;
    cv::ModelSpec spec = cv::load_spec("fuzz.json", text, *g_weights, "weights.safetensors", none);
    std::vector<uint8_t> bytes = cv::build_model(spec, cv::OutputType::kF32, {}, "", "fuzz");
    void* buf = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64 + 64);
    std::memcpy(buf, bytes.data(), bytes.size());
    edgeattn::Model model;
    (void)model.Load(buf, bytes.size());  // run_convert reports a rejection; not a crash
    std::free(buf);
  } catch (const cv::ConvertError&) {
  }
  return 0;
}
