#include "converter/spec/model_presets.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/error.h"
#include "converter/spec/spec_fields.h"

namespace edgeattn {
namespace convert {
namespace {

using nlohmann::json;

const std::vector<std::string> kVitFields = {"model",  "preset",         "num_heads",         "prefix",
                                             "depth",  "max_q_len",      "pool",              "eps",
                                             "activation", "quantize_input", "dequantize_output"};
const std::vector<std::string> kTorchEncoderFields = {"model", "preset",     "num_heads",  "max_q_len", "prefix",
                                                      "depth", "norm_first", "activation", "eps",       "mask"};
const std::vector<std::string> kTorchTransformerFields = {
    "model",         "preset",        "num_heads",     "max_src_len",   "max_tgt_len", "prefix",
    "norm_first",    "activation",    "eps",           "src_embedding", "tgt_embedding", "src_positions",
    "tgt_positions", "embed_scale",   "generator"};

const std::vector<std::string> kTorchKwtFields = {"model", "preset",     "num_heads", "pre_norm",       "prefix",
                                                  "depth", "max_q_len",  "pool",      "eps",            "activation",
                                                  "quantize_input", "dequantize_output"};

const Array* find(const ArrayMap& w, const std::string& name) {
  const auto it = w.find(name);
  return it == w.end() ? nullptr : &it->second;
}

// A module's name for the report: its prefix without the trailing '.'.
std::string module(const std::string& prefix) {
  return prefix.substr(0, prefix.size() - (!prefix.empty() && prefix.back() == '.'));
}

// Blocks 0..n-1 have tensors under "<stack>0.", "<stack>1.", ...: n.
int count_blocks(const ArrayMap& w, const std::string& stack) {
  int n = 0;
  for (;; ++n) {
    const std::string p = stack + std::to_string(n) + ".";
    const auto it = w.lower_bound(p);
    if (it == w.end() || it->first.compare(0, p.size(), p) != 0) return n;
  }
}

// The number of blocks the weights hold, checked against the spec's "depth".
int depth_of(const SpecFields& f, const ArrayMap& w, const std::string& stack, const std::string& weights_path) {
  const int depth = count_blocks(w, stack);
  if (depth == 0) {
    fail(f.where, ": ", weights_path, " has no tensors under '", stack, "0.' (the first block); give \"prefix\" if "
         "the names start with a module path, or write the model's \"layers\" (docs/workflow.md)");
  }
  if (f.has("depth") && f.integer("depth") != depth) {
    fail(f.where, ": field 'depth' is ", f.integer("depth"), ", but ", weights_path, " has blocks 0..", depth - 1,
         " under '", stack, "{i}.'");
  }
  return depth;
}

// The fields every block of the stack takes from the preset's top level.
void pass_block_fields(const SpecFields& f, const std::vector<const char*>& keys, json* block) {
  for (const char* k : keys) {
    if (f.has(k)) (*block)[k] = f.j.at(k);
  }
}

// Where a ViT-shaped state dict keeps its parts (full names, or module
// prefixes ending in '.').
struct VitNames {
  const char* preset;                 // for messages
  std::string proj, cls, pos, stack;  // patch projection module, class token, positions table, "<stack>{i}."
  std::vector<std::pair<std::string, const char*>> refused;  // tensor -> what it is
  std::string norm, fc_norm, head;    // modules ("" : the family has none)
  double eps;                         // the family's LayerNorm eps
  const char* block_preset;           // the encoder_block preset of the blocks' tensor names
};

// A ViT-shaped classifier: the patch (or frame) projection -> class token +
// learned positions -> the blocks -> the class row (or the mean of the rows
// without a class token) -> the final norm -> the head.
json vit_family(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, const VitNames& n,
                std::string* summary) {
  const std::string preset = n.preset;
  const int heads = f.integer("num_heads");
  const std::string proj_name = n.proj + "weight";
  const Array* proj = find(w, proj_name);
  if (proj == nullptr) {
    fail(f.where, ": preset ", preset, " reads ", preset == "vit" ? "timm's" : "Hugging Face's", " names, and ",
         weights_path, " has no tensor '", proj_name, "' (the patch or frame projection); give \"prefix\" if the "
         "names start with another module path, or write the model's \"layers\" (docs/workflow.md)");
  }
  if (proj->shape.size() < 2 || proj->shape[0] == 0) {
    fail(f.where, ": tensor '", proj_name, "' has shape ", shape_string(proj->shape), ", expected [embed_dim, ...]");
  }
  const size_t D = proj->shape[0];
  size_t in = 1;
  for (size_t i = 1; i < proj->shape.size(); ++i) in *= proj->shape[i];
  for (const auto& [name, what] : n.refused) {
    if (find(w, name) != nullptr) {
      fail(f.where, ": ", weights_path, " has '", name, "' (", what, "), which preset ", preset,
           " does not convert; write the model's \"layers\" (docs/workflow.md)");
    }
  }
  const int depth = depth_of(f, w, n.stack, weights_path);
  // The class tokens' and table's shapes ([1, n, D] as both families keep
  // them); the positions layer checks them again and names what is wrong.
  const Array* cls = find(w, n.cls);
  const size_t num_cls = cls != nullptr && !cls->shape.empty() && D > 0 ? cls->numel() / D : 0;
  const Array* pos = find(w, n.pos);
  if (pos == nullptr || pos->shape.size() < 2) {
    fail(f.where, ": preset ", preset, " needs a learned positional table '", n.pos, "' [1, rows, ", D, "], which ",
         weights_path, pos == nullptr ? " does not have" : " holds with another shape",
         "; write the model's \"layers\" (a sinusoidal table is a positions layer's \"table\")");
  }
  const size_t table_rows = pos->shape[pos->shape.size() - 2];
  if (table_rows <= num_cls) {
    fail(f.where, ": '", n.pos, "' has ", table_rows, " rows, no more than the ", num_cls, " class token(s)");
  }
  // timm's no_embed_class (DeiT III) adds the table to the patch rows only
  // and the class token after it: its table has one row per patch, a square
  // grid for images, where the usual table has the class rows too. The
  // positions layer adds a table from the class rows on, so such a model is
  // refused rather than converted wrongly.
  auto square = [](size_t v) {
    size_t r = static_cast<size_t>(std::sqrt(static_cast<double>(v)) + 0.5);
    return r * r == v;
  };
  if (num_cls > 0 && square(table_rows) && !square(table_rows - num_cls)) {
    fail(f.where, ": '", n.pos, "' has ", table_rows, " rows, a square grid of patches without the ", num_cls,
         " class token(s): timm's no_embed_class (DeiT III), whose class token takes no position, which preset ",
         preset, " does not convert; write the model's \"layers\" (docs/workflow.md)");
  }
  if (table_rows - num_cls > 65535) {
    fail(f.where, ": '", n.pos, "' has ", table_rows, " rows, above the 65535 a layer takes");
  }
  int patches = static_cast<int>(table_rows - num_cls);
  if (f.has("max_q_len")) {
    const int q = f.integer("max_q_len");
    if (q > patches) {
      fail(f.where, ": field 'max_q_len' is ", q, ", but '", n.pos, "' has positions for ", patches,
           " patch rows after the ", num_cls, " class token(s)");
    }
    patches = q;
  }
  const std::string pool = f.string("pool", num_cls > 0 ? "token" : "avg");
  if (pool != "token" && pool != "avg") {
    fail(f.where, ": field 'pool' must be \"token\" (the class row) or \"avg\" (the mean of the rows), got '", pool,
         "'");
  }
  if (pool == "token" && num_cls == 0) {
    fail(f.where, ": \"pool\": \"token\" takes the class row, and ", weights_path, " has no '", n.cls, "'");
  }
  if (pool == "avg" && num_cls > 0) {
    fail(f.where, ": \"pool\": \"avg\" with a class token: timm's mean leaves the class row out, a row_pool's "
         "\"mean\" does not; write the model's \"layers\"");
  }
  const double eps = f.number("eps").value_or(n.eps);
  const int rows = patches + static_cast<int>(num_cls);

  json layers = json::array();
  std::string last;
  auto add = [&](json layer) {
    if (!last.empty()) layer["input"] = last;
    last = layer.at("name").get<std::string>();
    layers.push_back(std::move(layer));
  };
  if (f.boolean("quantize_input", false)) {
    add({{"name", "in"}, {"kind", "quantize"}, {"dim", in}, {"max_q_len", patches}});
  }
  add({{"name", "embed"}, {"kind", "linear"}, {"prefix", n.proj}, {"max_q_len", patches}});
  json tables = {{"pos_embed", n.pos}};
  if (num_cls > 0) tables["cls_token"] = n.cls;
  add({{"name", "tok"}, {"kind", "positions"}, {"tensors", tables}, {"max_q_len", patches}});
  json blocks = {{"repeat", depth},    {"name", "block{i}"},   {"kind", "encoder_block"},
                 {"preset", n.block_preset}, {"prefix", n.stack + "{i}."}, {"embed_dim", D},
                 {"num_heads", heads}, {"eps", eps},           {"max_q_len", rows},
                 {"input", last}};
  pass_block_fields(f, {"activation"}, &blocks);
  layers.push_back(std::move(blocks));
  last = "block" + std::to_string(depth - 1);
  const bool norm = !n.norm.empty() && find(w, n.norm + "weight") != nullptr;
  auto layernorm = [&](const char* name, const std::string& module, int norm_rows) {
    add({{"name", name}, {"kind", "layernorm"}, {"prefix", module}, {"dim", D}, {"eps", eps},
         {"max_q_len", norm_rows}});
  };
  // LayerNorm works row by row, so the class row is pooled before the final
  // norm (one row normalized instead of all); a mean is taken after it.
  if (pool == "token") {
    add({{"name", "pool"}, {"kind", "row_pool"}, {"mode", "first"}, {"dim", D}, {"max_kv_len", rows}});
    if (norm) layernorm("norm", n.norm, 1);
  } else {
    if (norm) layernorm("norm", n.norm, rows);
    add({{"name", "pool"}, {"kind", "row_pool"}, {"mode", "mean"}, {"dim", D}, {"max_kv_len", rows}});
  }
  const bool fc_norm = !n.fc_norm.empty() && find(w, n.fc_norm + "weight") != nullptr;
  if (fc_norm) layernorm("fc_norm", n.fc_norm, 1);
  const Array* head = find(w, n.head + "weight");
  size_t out = D;
  if (head != nullptr) {
    if (!head->shape.empty()) out = head->shape[0];
    add({{"name", "head"}, {"kind", "linear"}, {"prefix", n.head}, {"max_q_len", 1}});
  }
  if (f.boolean("dequantize_output", false)) {
    add({{"name", "logits"}, {"kind", "dequantize"}, {"dim", out}, {"max_q_len", 1}});
  }
  *summary = preset + ": " + std::to_string(patches) + " rows of " + std::to_string(in) + " -> " + module(n.proj) +
             " (" + std::to_string(D) + ") -> " + std::to_string(num_cls) + " class token" + (num_cls == 1 ? "" : "s") +
             " + " + n.pos + " -> " + std::to_string(depth) + " blocks " + n.stack + "{i}. (" + std::to_string(heads) +
             " head" + (heads == 1 ? "" : "s") + ") -> " + (pool == "token" ? "the class row" : "the mean of the rows") +
             (norm ? ", " + module(n.norm) : "") + (fc_norm ? ", " + module(n.fc_norm) : "") +
             (head != nullptr ? " -> " + module(n.head) + " (" + std::to_string(out) + ")" : "");
  return layers;
}

// timm's VisionTransformer (ViT, DeiT; a keyword-spotting transformer with
// timm's names, whose patch_embed.proj is a Linear over feature frames).
json vit(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary) {
  const std::string P = f.string("prefix", "");
  const VitNames n = {"vit",          P + "patch_embed.proj.", P + "cls_token", P + "pos_embed", P + "blocks.",
                      {{P + "dist_token", "a distilled DeiT's second token and head"},
                       {P + "reg_token", "register tokens"}},
                      P + "norm.",    P + "fc_norm.",          P + "head.",     1e-6,            "vit"};
  return vit_family(f, w, weights_path, n, summary);
}

// Hugging Face's ViTForImageClassification (and ViTModel, DeiT with prefix
// "deit."): the model under "vit." and the head "classifier" at the top.
json hf_vit(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary) {
  const std::string P = f.string("prefix", "vit.");
  const VitNames n = {"hf_vit",
                      P + "embeddings.patch_embeddings.projection.",
                      P + "embeddings.cls_token",
                      P + "embeddings.position_embeddings",
                      P + "encoder.layer.",
                      {{P + "embeddings.distillation_token", "a distilled DeiT's second token and head"}},
                      P + "layernorm.",
                      "",
                      "classifier.",
                      1e-12,
                      "hf_vit"};
  return vit_family(f, w, weights_path, n, summary);
}

// An nn.TransformerEncoder: layers.{i}. (nn.TransformerEncoderLayer's names)
// and its final norm when it has one. Its input rows are the model's input.
json torch_encoder(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary) {
  const std::string P = f.string("prefix", "");
  const int heads = f.integer("num_heads");
  const int rows = f.integer("max_q_len");
  const std::string in_proj = P + "layers.0.self_attn.in_proj_weight";
  const Array* first = find(w, in_proj);
  if (first == nullptr || first->shape.size() != 2) {
    fail(f.where, ": preset torch_encoder reads nn.TransformerEncoder's names, and ", weights_path,
         first == nullptr ? " has no tensor '" : " has another shape for '", in_proj,
         "'; give \"prefix\" if the names start with a module path (\"encoder.\"), or write the model's \"layers\"");
  }
  const size_t D = first->shape[1];
  const int depth = depth_of(f, w, P + "layers.", weights_path);
  json layers = json::array();
  json blocks = {{"repeat", depth},    {"name", "block{i}"}, {"kind", "encoder_block"}, {"preset", "torch"},
                 {"prefix", P + "layers.{i}."}, {"embed_dim", D}, {"num_heads", heads},  {"max_q_len", rows}};
  pass_block_fields(f, {"norm_first", "activation", "eps", "mask"}, &blocks);
  layers.push_back(std::move(blocks));
  const bool norm = find(w, P + "norm.weight") != nullptr;
  if (norm) {
    layers.push_back({{"name", "norm"}, {"kind", "layernorm"}, {"prefix", P + "norm."}, {"dim", D},
                      {"eps", f.number("eps").value_or(1e-5)}, {"max_q_len", rows},
                      {"input", "block" + std::to_string(depth - 1)}});
  }
  *summary = "torch_encoder: " + std::to_string(depth) + " blocks " + P + "layers.{i}. (" + std::to_string(D) + ", " +
             std::to_string(heads) + " head" + (heads == 1 ? "" : "s") + ", " +
             (f.boolean("norm_first", false) ? "pre-norm" : "post-norm") + ")" + (norm ? " -> " + P + "norm" : "");
  return layers;
}

// An nn.Transformer with the parts PyTorch's translation tutorial
// ("Language Translation with nn.Transformer") puts around it, as a
// generating graph: src_tok_emb / tgt_tok_emb (TokenEmbedding: an
// nn.Embedding times sqrt(d_model)), PositionalEncoding's sinusoidal buffer
// positional_encoding.pos_embedding [maxlen, 1, d_model] added to both, the
// stacks transformer.encoder.layers.{i}. and transformer.decoder.layers.{i}.
// with their final norms, and the generator Linear; the argmax at the end
// puts the next token on the device. Every name is a field, the tutorial's
// the default, so the many models copied from it convert as they are.
json torch_transformer(const SpecFields& f, const ArrayMap& w, const std::string& weights_path,
                       std::string* summary) {
  const std::string P = f.string("prefix", "transformer.");
  const int heads = f.integer("num_heads"), src_len = f.integer("max_src_len"), tgt_len = f.integer("max_tgt_len");
  const std::string src_emb = f.string("src_embedding", "src_tok_emb.embedding.");
  const std::string tgt_emb = f.string("tgt_embedding", "tgt_tok_emb.embedding.");
  const std::string generator = f.string("generator", "generator.");
  const Array* src_table = find(w, src_emb + "weight");
  if (src_table == nullptr || src_table->shape.size() != 2) {
    fail(f.where, ": preset torch_transformer reads the source embedding '", src_emb, "weight' [vocab, d_model], which ",
         weights_path, src_table == nullptr ? " does not have" : " holds with another shape",
         "; give \"src_embedding\" (its module, ending in '.'), or write the model's \"layers\"");
  }
  const size_t D = src_table->shape[1];
  const Array* head = find(w, generator + "weight");
  if (head == nullptr || head->shape.size() != 2) {
    fail(f.where, ": preset torch_transformer reads the output projection '", generator, "weight' [vocab, d_model], "
         "which ", weights_path, head == nullptr ? " does not have" : " holds with another shape",
         "; give \"generator\" (its module, ending in '.')");
  }
  const size_t vocab = head->shape[0];
  // TokenEmbedding multiplies by sqrt(d_model); "embed_scale": 1 for a plain nn.Embedding.
  const double scale = f.number("embed_scale").value_or(std::sqrt(static_cast<double>(D)));
  const int enc_depth = depth_of(f, w, P + "encoder.layers.", weights_path);
  const int dec_depth = depth_of(f, w, P + "decoder.layers.", weights_path);
  const double eps = f.number("eps").value_or(1e-5);

  // A positions layer: the named table, or the tutorial's formula
  // (sin / cos of p / 10000^(2i / d_model), the converter's "sinusoidal")
  // when the model computes it without saving it.
  const std::string src_pos = f.string("src_positions", "positional_encoding.pos_embedding");
  const std::string tgt_pos = f.string("tgt_positions", src_pos);
  auto positions = [&](const char* name, const std::string& table, int rows, const char* input) {
    json l = {{"name", name}, {"kind", "positions"}, {"num_cls", 0}, {"max_q_len", rows}, {"input", input}};
    if (table == "sinusoidal") {
      l["table"] = "sinusoidal";
      l["dim"] = D;
    } else {
      l["tensors"] = {{"pos_embed", table}};
    }
    return l;
  };
  auto layernorm = [&](const char* name, const std::string& module, int rows, const std::string& input) {
    return json{{"name", name}, {"kind", "layernorm"}, {"prefix", module}, {"dim", D},
                {"eps", eps},   {"max_q_len", rows},   {"input", input}};
  };
  json layers = json::array();
  layers.push_back({{"name", "src_emb"}, {"kind", "embedding"}, {"prefix", src_emb}, {"scale", scale},
                    {"mask", "key_padding"}, {"max_q_len", src_len}});
  layers.push_back(positions("src_pos", src_pos, src_len, "src_emb"));
  json encoder = {{"repeat", enc_depth}, {"name", "encoder{i}"}, {"kind", "encoder_block"}, {"preset", "torch"},
                  {"prefix", P + "encoder.layers.{i}."}, {"embed_dim", D}, {"num_heads", heads},
                  {"mask", "key_padding"}, {"max_q_len", src_len}, {"input", "src_pos"}};
  pass_block_fields(f, {"norm_first", "activation", "eps"}, &encoder);
  layers.push_back(std::move(encoder));
  std::string memory = "encoder" + std::to_string(enc_depth - 1);
  const bool enc_norm = find(w, P + "encoder.norm.weight") != nullptr;
  if (enc_norm) {
    layers.push_back(layernorm("enc_norm", P + "encoder.norm.", src_len, memory));
    memory = "enc_norm";
  }
  // The decoder part (the spec's "decoder_start"): runs once per token, the
  // first reading the caller's BOS.
  layers.push_back({{"name", "tgt_emb"}, {"kind", "embedding"}, {"prefix", tgt_emb}, {"scale", scale},
                    {"max_q_len", tgt_len}});
  layers.push_back(positions("tgt_pos", tgt_pos, tgt_len, "tgt_emb"));
  json decoder = {{"repeat", dec_depth}, {"name", "decoder{i}"}, {"kind", "decoder_block"}, {"preset", "torch"},
                  {"prefix", P + "decoder.layers.{i}."}, {"embed_dim", D}, {"num_heads", heads},
                  {"mask", "key_padding"}, {"max_q_len", tgt_len}, {"max_kv_len", src_len},
                  {"memory", memory}, {"input", "tgt_pos"}};
  pass_block_fields(f, {"norm_first", "activation", "eps"}, &decoder);
  layers.push_back(std::move(decoder));
  std::string last = "decoder" + std::to_string(dec_depth - 1);
  const bool dec_norm = find(w, P + "decoder.norm.weight") != nullptr;
  if (dec_norm) {
    layers.push_back(layernorm("dec_norm", P + "decoder.norm.", tgt_len, last));
    last = "dec_norm";
  }
  layers.push_back({{"name", "head"}, {"kind", "linear"}, {"prefix", generator}, {"max_q_len", tgt_len},
                    {"input", last}});
  layers.push_back({{"name", "next"}, {"kind", "argmax"}, {"dim", vocab}, {"max_q_len", tgt_len}, {"input", "head"}});

  char times[32];
  std::snprintf(times, sizeof times, "%.6g", scale);
  auto stack = [&](int n, const char* what, const std::string& stack_prefix, bool norm) {
    return std::to_string(n) + " " + what + " layer" + (n == 1 ? " " : "s ") + stack_prefix + "layers.{i}." +
           (norm ? " + " + stack_prefix + "norm" : "");
  };
  *summary = "torch_transformer: up to " + std::to_string(src_len) + " source ids -> " + module(src_emb) + " (" +
             std::to_string(D) + ", x" + times + ") + " + src_pos + " -> " +
             stack(enc_depth, "encoder", P + "encoder.", enc_norm) + " (" + std::to_string(heads) + " head" +
             (heads == 1 ? "" : "s") + ", " + (f.boolean("norm_first", false) ? "pre-norm" : "post-norm") +
             "); per token, up to " + std::to_string(tgt_len) + ": " + module(tgt_emb) + " + " + tgt_pos + " -> " +
             stack(dec_depth, "decoder", P + "decoder.", dec_norm) + " -> " + module(generator) + " (" +
             std::to_string(vocab) + ") -> argmax";
  return layers;
}

// Torch-KWT's KWT (ID56/Torch-KWT, models/kwt.py, a keyword-spotting
// transformer over feature frames): to_patch_embedding.1 (a Linear over each
// frame) -> cls_token + pos_embedding -> transformer.layers.{i}. (0: the
// attention with its norm, 1: the MLP with its norm) -> the class row or the
// mean of every row (the class row too) -> mlp_head (LayerNorm, Linear).
// Its blocks are encoder_block layers: pre_norm true, x + f(LayerNorm(x)),
// "norm_first"; pre_norm false (the published KWT-1/2/3),
// x + LayerNorm(f(x)), "branch_norm". One head of dim_head == dim has no
// to_out (nn.Identity): "out_proj": false.
json torch_kwt(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary) {
  const std::string P = f.string("prefix", "");
  const int heads = f.integer("num_heads");
  if (!f.has("pre_norm")) {
    fail(f.where, ": preset torch_kwt needs \"pre_norm\" (KWT's pre_norm: false in the published KWT-1/2/3 "
         "configurations, true is the class's default); the weights do not say which");
  }
  const bool pre_norm = f.boolean("pre_norm", false);
  const std::string proj = P + "to_patch_embedding.1.";
  const Array* pw = find(w, proj + "weight");
  if (pw == nullptr || pw->shape.size() != 2) {
    fail(f.where, ": preset torch_kwt reads Torch-KWT's names, and ", weights_path,
         pw == nullptr ? " has no tensor '" : " holds another shape for '", proj, "weight' [dim, patch_dim] (the "
         "frame projection); give \"prefix\" if the names start with another module path (Torch-KWT's training "
         "checkpoints: \"model_state_dict.\"), or write the model's \"layers\" (docs/workflow.md)");
  }
  const size_t D = pw->shape[0], in = pw->shape[1];
  const std::string stack = P + "transformer.layers.";
  const int depth = depth_of(f, w, stack, weights_path);
  const Array* pos = find(w, P + "pos_embedding");
  if (pos == nullptr || pos->shape.size() < 2 || pos->shape[pos->shape.size() - 2] < 2) {
    fail(f.where, ": preset torch_kwt needs '", P, "pos_embedding' [1, frames + 1, ", D, "], which ", weights_path,
         pos == nullptr ? " does not have" : " holds with another shape");
  }
  int frames = static_cast<int>(pos->shape[pos->shape.size() - 2]) - 1;
  if (f.has("max_q_len")) {
    const int q = f.integer("max_q_len");
    if (q > frames) {
      fail(f.where, ": field 'max_q_len' is ", q, ", but '", P, "pos_embedding' has positions for ", frames,
           " frames after the class token");
    }
    frames = q;
  }
  const std::string pool = f.string("pool", "cls");
  if (pool != "cls" && pool != "mean") {
    fail(f.where, ": field 'pool' must be \"cls\" (the class row) or \"mean\" (every row's mean), got '", pool, "'");
  }
  const double eps = f.number("eps").value_or(1e-5);
  const int rows = frames + 1;
  // The attention's tensors: to_qkv [3 inner, dim] without bias, to_out.0
  // unless it is nn.Identity (one head of dim_head == dim).
  const std::string attn0 = stack + "0.0.fn.";
  const Array* qkv = find(w, attn0 + "to_qkv.weight");
  if (qkv == nullptr || qkv->shape.size() != 2 || qkv->shape[1] != D || qkv->shape[0] % 3 != 0) {
    fail(f.where, ": ", weights_path, " has no tensor '", attn0, "to_qkv.weight' [3 * heads * dim_head, ", D, "]");
  }
  const size_t inner = qkv->shape[0] / 3;
  if (inner != D) {
    fail(f.where, ": '", attn0, "to_qkv.weight' gives heads * dim_head = ", inner, ", not dim ", D,
         ": an attention of another inner width than the model's is not converted");
  }
  const bool out_proj = find(w, attn0 + "to_out.0.weight") != nullptr;
  if (!out_proj && heads != 1) {
    fail(f.where, ": ", weights_path, " has no '", attn0, "to_out.0.weight', which Torch-KWT leaves out only for ",
         "one head (dim_head == dim); num_heads is ", heads);
  }

  json layers = json::array();
  std::string last;
  auto add = [&](json layer) {
    if (!last.empty() && !layer.contains("input")) layer["input"] = last;
    last = layer.at("name").get<std::string>();
    layers.push_back(std::move(layer));
  };
  if (f.boolean("quantize_input", false)) {
    add({{"name", "in"}, {"kind", "quantize"}, {"dim", in}, {"max_q_len", frames}});
  }
  add({{"name", "embed"}, {"kind", "linear"}, {"prefix", proj}, {"max_q_len", frames}});
  add({{"name", "tok"},
       {"kind", "positions"},
       {"tensors", {{"pos_embed", P + "pos_embedding"}, {"cls_token", P + "cls_token"}}},
       {"max_q_len", frames}});
  const std::string act = f.string("activation", "gelu");
  const std::string b = stack + "{i}.";
  json t = {{"qkv_w", b + "0.fn.to_qkv.weight"},  {"norm1_w", b + "0.norm.weight"},
            {"norm1_b", b + "0.norm.bias"},        {"norm2_w", b + "1.norm.weight"},
            {"norm2_b", b + "1.norm.bias"},        {"fc1_w", b + "1.fn.net.0.weight"},
            {"fc1_b", b + "1.fn.net.0.bias"},      {"fc2_w", b + "1.fn.net.3.weight"},
            {"fc2_b", b + "1.fn.net.3.bias"}};
  if (out_proj) {
    t["o_w"] = b + "0.fn.to_out.0.weight";
    t["o_b"] = b + "0.fn.to_out.0.bias";
  }
  layers.push_back({{"repeat", depth},         {"name", "block{i}"},
                    {"kind", "encoder_block"}, {"tensors", t},
                    {"embed_dim", D},          {"num_heads", heads},
                    {pre_norm ? "norm_first" : "branch_norm", true},
                    {"eps", eps},              {"activation", act},
                    {"out_proj", out_proj},    {"max_q_len", rows},
                    {"input", last}});
  last = "block" + std::to_string(depth - 1);
  add({{"name", "pool"}, {"kind", "row_pool"}, {"mode", pool == "cls" ? "first" : "mean"}, {"dim", D},
       {"max_kv_len", rows}});
  add({{"name", "head_norm"}, {"kind", "layernorm"}, {"prefix", P + "mlp_head.0."}, {"dim", D}, {"eps", eps},
       {"max_q_len", 1}});
  const Array* head = find(w, P + "mlp_head.1.weight");
  if (head == nullptr || head->shape.size() != 2) {
    fail(f.where, ": ", weights_path, " has no tensor '", P, "mlp_head.1.weight' [classes, ", D, "] (the head)");
  }
  add({{"name", "head"}, {"kind", "linear"}, {"prefix", P + "mlp_head.1."}, {"max_q_len", 1}});
  if (f.boolean("dequantize_output", false)) {
    add({{"name", "logits"}, {"kind", "dequantize"}, {"dim", head->shape[0]}, {"max_q_len", 1}});
  }
  *summary = "torch_kwt: " + std::to_string(frames) + " frames of " + std::to_string(in) + " -> " + module(proj) +
             " (" + std::to_string(D) + ") -> cls_token + pos_embedding -> " + std::to_string(depth) + " blocks " +
             stack + "{i}. (" + std::to_string(heads) + " head" + (heads == 1 ? "" : "s") +
             (out_proj ? "" : ", no to_out") + ", " +
             (pre_norm ? "pre-norm" : "post-norm x + LayerNorm(f(x))") +
             ") -> " + (pool == "cls" ? "the class row" : "the mean of every row") + " -> " + module(P + "mlp_head") +
             " (" + std::to_string(head->shape[0]) + ")";
  return layers;
}

// The presets: each one's top-level fields, expansion, and the first layer
// of its decoder part (a generating graph's "decoder_start"; null: none).
struct Preset {
  const char* name;
  const std::vector<std::string>* fields;
  json (*layers)(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary);
  const char* decoder_start;
};
const Preset kPresets[] = {{"vit", &kVitFields, vit, nullptr},
                           {"hf_vit", &kVitFields, hf_vit, nullptr},
                           {"torch_encoder", &kTorchEncoderFields, torch_encoder, nullptr},
                           {"torch_transformer", &kTorchTransformerFields, torch_transformer, "tgt_emb"},
                           {"torch_kwt", &kTorchKwtFields, torch_kwt, nullptr}};

}  // namespace

std::vector<std::string> model_preset_fields(const std::string& preset) {
  for (const Preset& p : kPresets) {
    if (preset == p.name) return *p.fields;
  }
  return {};
}

std::string model_preset_names() {
  std::string names;
  for (const Preset& p : kPresets) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

json expand_model_preset(const json& spec, const ArrayMap& weights, const std::string& spec_path,
                         const std::string& weights_path, std::string* summary) {
  const SpecFields f{spec, spec_path + ": preset"};
  const std::string preset = f.string("preset");
  for (const Preset& p : kPresets) {
    if (preset != p.name) continue;
    json out = json::object();
    if (spec.contains("model")) out["model"] = spec.at("model");
    if (p.decoder_start != nullptr) out["decoder_start"] = p.decoder_start;
    out["layers"] = p.layers(f, weights, weights_path, summary);
    return out;
  }
  fail(spec_path, ": unknown preset '", preset, "' (expected ", model_preset_names(), ")");
}

}  // namespace convert
}  // namespace edgeattn
