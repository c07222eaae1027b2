#include "converter/spec/model_presets.h"

#include <cmath>
#include <string>

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

const Array* find(const ArrayMap& w, const std::string& name) {
  const auto it = w.find(name);
  return it == w.end() ? nullptr : &it->second;
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

// timm's VisionTransformer (ViT, DeiT; a keyword-spotting transformer with
// timm's names, whose patch_embed.proj is a Linear over feature frames):
// patch_embed.proj -> cls_token + pos_embed -> blocks.{i}. -> the class row
// (or the mean of the rows without a class token) -> norm -> head.
json vit(const SpecFields& f, const ArrayMap& w, const std::string& weights_path, std::string* summary) {
  const std::string P = f.string("prefix", "");
  const int heads = f.integer("num_heads");
  const std::string proj_name = P + "patch_embed.proj.weight";
  const Array* proj = find(w, proj_name);
  if (proj == nullptr) {
    fail(f.where, ": preset vit reads timm's names, and ", weights_path, " has no tensor '", proj_name,
         "' (the patch or frame projection); give \"prefix\" if the names start with a module path, or write the "
         "model's \"layers\" (docs/workflow.md)");
  }
  if (proj->shape.size() < 2 || proj->shape[0] == 0) {
    fail(f.where, ": tensor '", proj_name, "' has shape ", shape_string(proj->shape), ", expected [embed_dim, ...]");
  }
  const size_t D = proj->shape[0];
  size_t in = 1;
  for (size_t i = 1; i < proj->shape.size(); ++i) in *= proj->shape[i];
  for (const char* extra : {"dist_token", "reg_token"}) {
    if (find(w, P + extra) != nullptr) {
      fail(f.where, ": ", weights_path, " has '", P, extra, "' (",
           std::string(extra) == "dist_token" ? "a distilled DeiT's second token and head" : "register tokens",
           "), which preset vit does not convert; write the model's \"layers\" (docs/workflow.md)");
    }
  }
  const int depth = depth_of(f, w, P + "blocks.", weights_path);
  // The class tokens' and table's shapes ([1, n, D] as timm keeps them); the
  // positions layer checks them again and names what is wrong.
  const Array* cls = find(w, P + "cls_token");
  const size_t num_cls = cls != nullptr && !cls->shape.empty() && D > 0 ? cls->numel() / D : 0;
  const Array* pos = find(w, P + "pos_embed");
  if (pos == nullptr || pos->shape.size() < 2) {
    fail(f.where, ": preset vit needs a learned positional table '", P, "pos_embed' [1, rows, ", D, "], which ",
         weights_path, pos == nullptr ? " does not have" : " holds with another shape",
         "; write the model's \"layers\" (a sinusoidal table is a positions layer's \"table\")");
  }
  const size_t table_rows = pos->shape[pos->shape.size() - 2];
  if (table_rows <= num_cls) {
    fail(f.where, ": '", P, "pos_embed' has ", table_rows, " rows, no more than the ", num_cls, " class token(s)");
  }
  // timm's no_embed_class (DeiT III) adds the table to the patch rows only
  // and the class token after it: its table has one row per patch, a square
  // grid for images, where the usual table has the class rows too. The
  // positions layer adds a table from the class rows on, so such a model is
  // refused rather than converted wrongly.
  auto square = [](size_t n) {
    size_t r = static_cast<size_t>(std::sqrt(static_cast<double>(n)) + 0.5);
    return r * r == n;
  };
  if (num_cls > 0 && square(table_rows) && !square(table_rows - num_cls)) {
    fail(f.where, ": '", P, "pos_embed' has ", table_rows, " rows, a square grid of patches without the ", num_cls,
         " class token(s): timm's no_embed_class (DeiT III), whose class token takes no position, which preset vit "
         "does not convert; write the model's \"layers\" (docs/workflow.md)");
  }
  if (table_rows - num_cls > 65535) {
    fail(f.where, ": '", P, "pos_embed' has ", table_rows, " rows, above the 65535 a layer takes");
  }
  int patches = static_cast<int>(table_rows - num_cls);
  if (f.has("max_q_len")) {
    const int q = f.integer("max_q_len");
    if (q > patches) {
      fail(f.where, ": field 'max_q_len' is ", q, ", but '", P, "pos_embed' has positions for ", patches,
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
    fail(f.where, ": \"pool\": \"token\" takes the class row, and ", weights_path, " has no '", P, "cls_token'");
  }
  if (pool == "avg" && num_cls > 0) {
    fail(f.where, ": \"pool\": \"avg\" with a class token: timm's mean leaves the class row out, a row_pool's "
         "\"mean\" does not; write the model's \"layers\"");
  }
  const double eps = f.number("eps").value_or(1e-6);  // timm's LayerNorms
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
  add({{"name", "embed"}, {"kind", "linear"}, {"prefix", P + "patch_embed.proj."}, {"max_q_len", patches}});
  add({{"name", "tok"}, {"kind", "positions"}, {"prefix", P}, {"max_q_len", patches}});
  json blocks = {{"repeat", depth},        {"name", "block{i}"}, {"kind", "encoder_block"},
                 {"preset", "vit"},        {"prefix", P + "blocks.{i}."}, {"embed_dim", D},
                 {"num_heads", heads},     {"eps", eps},         {"max_q_len", rows},
                 {"input", last}};
  pass_block_fields(f, {"activation"}, &blocks);
  layers.push_back(std::move(blocks));
  last = "block" + std::to_string(depth - 1);
  const bool norm = find(w, P + "norm.weight") != nullptr;
  auto layernorm = [&](const char* name, int norm_rows) {
    add({{"name", name}, {"kind", "layernorm"}, {"prefix", P + name + "."}, {"dim", D}, {"eps", eps},
         {"max_q_len", norm_rows}});
  };
  // LayerNorm works row by row, so the class row is pooled before the final
  // norm (one row normalized instead of all); a mean is taken after it.
  if (pool == "token") {
    add({{"name", "pool"}, {"kind", "row_pool"}, {"mode", "first"}, {"dim", D}, {"max_kv_len", rows}});
    if (norm) layernorm("norm", 1);
  } else {
    if (norm) layernorm("norm", rows);
    add({{"name", "pool"}, {"kind", "row_pool"}, {"mode", "mean"}, {"dim", D}, {"max_kv_len", rows}});
  }
  const bool fc_norm = find(w, P + "fc_norm.weight") != nullptr;
  if (fc_norm) layernorm("fc_norm", 1);
  const Array* head = find(w, P + "head.weight");
  size_t out = D;
  if (head != nullptr) {
    if (!head->shape.empty()) out = head->shape[0];
    add({{"name", "head"}, {"kind", "linear"}, {"prefix", P + "head."}, {"max_q_len", 1}});
  }
  if (f.boolean("dequantize_output", false)) {
    add({{"name", "logits"}, {"kind", "dequantize"}, {"dim", out}, {"max_q_len", 1}});
  }
  *summary = "vit: " + std::to_string(patches) + " rows of " + std::to_string(in) + " -> " + P +
             "patch_embed.proj (" + std::to_string(D) + ") -> " + std::to_string(num_cls) + " class token" +
             (num_cls == 1 ? "" : "s") + " + " + P + "pos_embed -> " + std::to_string(depth) + " blocks " + P +
             "blocks.{i}. (" + std::to_string(heads) + " head" + (heads == 1 ? "" : "s") + ") -> " +
             (pool == "token" ? "the class row" : "the mean of the rows") + (norm ? ", " + P + "norm" : "") +
             (fc_norm ? ", " + P + "fc_norm" : "") + (head != nullptr ? " -> " + P + "head (" + std::to_string(out) + ")" : "");
  return layers;
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

}  // namespace

std::vector<std::string> model_preset_fields(const std::string& preset) {
  if (preset == "vit") return kVitFields;
  if (preset == "torch_encoder") return kTorchEncoderFields;
  return {};
}

std::string model_preset_names() { return "vit, torch_encoder"; }

json expand_model_preset(const json& spec, const ArrayMap& weights, const std::string& spec_path,
                         const std::string& weights_path, std::string* summary) {
  const SpecFields f{spec, spec_path + ": preset"};
  const std::string preset = f.string("preset");
  json out = json::object();
  if (spec.contains("model")) out["model"] = spec.at("model");
  if (preset == "vit") {
    out["layers"] = vit(f, weights, weights_path, summary);
  } else if (preset == "torch_encoder") {
    out["layers"] = torch_encoder(f, weights, weights_path, summary);
  } else {
    fail(spec_path, ": unknown preset '", preset, "' (expected ", model_preset_names(), ")");
  }
  return out;
}

}  // namespace convert
}  // namespace edgeattn
