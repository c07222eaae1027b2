#include "converter/spec.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "converter/error.h"

namespace edgeattn {
namespace convert {
namespace {

using nlohmann::json;

// Reads fields of one layer object with messages naming the spec and layer.
struct Fields {
  const json& j;
  std::string where;  // "spec.json: layer 'enc_self'"

  bool has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }

  int integer(const char* key, std::optional<int> def = std::nullopt) const {
    if (!has(key)) {
      if (def) return *def;
      fail(where, ": missing field '", key, "'");
    }
    const json& v = j.at(key);
    if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 1000000) {
      fail(where, ": field '", key, "' must be a positive integer, got ", v.dump());
    }
    return v.get<int>();
  }
  std::string string(const char* key, std::optional<std::string> def = std::nullopt) const {
    if (!has(key)) {
      if (def) return *def;
      fail(where, ": missing field '", key, "'");
    }
    if (!j.at(key).is_string()) fail(where, ": field '", key, "' must be a string");
    return j.at(key).get<std::string>();
  }
  bool boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    if (!j.at(key).is_boolean()) fail(where, ": field '", key, "' must be true or false");
    return j.at(key).get<bool>();
  }
  std::optional<double> number(const char* key) const {
    if (!has(key)) return std::nullopt;
    if (!j.at(key).is_number() || !(j.at(key).get<double>() > 0) ||
        !std::isfinite(j.at(key).get<double>())) {
      fail(where, ": field '", key, "' must be a positive number or null");
    }
    return j.at(key).get<double>();
  }
  // tensors.<key>: explicit tensor name, or "" when absent.
  std::string tensor_name(const char* key) const {
    if (!has("tensors")) return "";
    const json& t = j.at("tensors");
    if (!t.is_object()) fail(where, ": field 'tensors' must be an object");
    if (!t.contains(key) || t.at(key).is_null()) return "";
    if (!t.at(key).is_string()) fail(where, ": tensors.", key, " must be a string");
    return t.at(key).get<std::string>();
  }
};

// Fetches weights with messages naming the weights file and the layer.
struct Weights {
  const ArrayMap& map;
  std::string file;
  std::string layer;
  std::string prefix;  // for the misnamed-prefix hint

  std::string where() const { return file + ": layer '" + layer + "'"; }

  bool has(const std::string& name) const { return map.count(name) != 0; }

  [[noreturn]] void missing(const std::string& name) const {
    std::string hint;
    if (!prefix.empty()) {
      bool any = false;
      for (const auto& kv : map) any = any || kv.first.compare(0, prefix.size(), prefix) == 0;
      if (!any) hint = " (no tensor starts with prefix '" + prefix + "': check \"prefix\")";
    }
    fail(where(), ": missing tensor '", name, "'", hint);
  }

  // The tensor, checked to be float, of `rows` x `cols` (rows == 0: 1-D [cols],
  // also accepting [1, cols]), and finite everywhere.
  const Array& get(const std::string& name, size_t rows, size_t cols, const std::string& what) const {
    auto it = map.find(name);
    if (it == map.end()) missing(name);
    const Array& a = it->second;
    if (!a.is_float) {
      fail(where(), ": tensor '", name, "' has dtype ", a.dtype,
           ", expected a float type (F32, F16, BF16, F64)");
    }
    bool ok;
    std::string expected;
    if (rows == 0) {
      ok = (a.shape.size() == 1 && a.shape[0] == cols) ||
           (a.shape.size() == 2 && a.shape[0] == 1 && a.shape[1] == cols);
      expected = "[" + std::to_string(cols) + "]";
    } else {
      ok = a.shape.size() == 2 && a.shape[0] == rows && a.shape[1] == cols;
      expected = shape_string({rows, cols});
    }
    if (!ok) {
      fail(where(), ": tensor '", name, "' has shape ", shape_string(a.shape), ", expected ",
           expected, " (", what, ")");
    }
    for (size_t i = 0; i < a.data.size(); ++i) {
      if (!std::isfinite(a.data[i])) {
        std::string idx;
        if (a.shape.size() == 2) {
          idx = " [" + std::to_string(i / a.shape[1]) + ", " + std::to_string(i % a.shape[1]) + "]";
        }
        fail(where(), ": tensor '", name, "' has a non-finite value (", a.data[i], ") at index ",
             i, idx);
      }
    }
    return a;
  }

  FloatLinear linear(const std::string& w_name, const std::string& b_name, int out, int in,
                     const std::string& what, bool bias_required) const {
    FloatLinear l;
    l.in = in;
    l.out = out;
    l.w_name = w_name;
    l.w = get(w_name, static_cast<size_t>(out), static_cast<size_t>(in), what).data;
    if (!b_name.empty() && (bias_required || has(b_name))) {
      l.b_name = b_name;
      l.b = get(b_name, 0, static_cast<size_t>(out), what + " bias").data;
    }
    return l;
  }

  // Rows [r0, r0 + out) of a packed [3E, in] weight (and [3E] bias).
  FloatLinear slice(const std::string& w_name, const std::string& b_name, int E, int part,
                    bool bias) const {
    const std::vector<double>& w =
        get(w_name, 3 * static_cast<size_t>(E), static_cast<size_t>(E), "[3*embed_dim, embed_dim]").data;
    FloatLinear l;
    l.in = E;
    l.out = E;
    const std::string range = "[" + std::to_string(part * E) + ":" + std::to_string((part + 1) * E) + "]";
    l.w_name = w_name + range;
    l.w.assign(w.begin() + static_cast<long>(part) * E * E, w.begin() + static_cast<long>(part + 1) * E * E);
    if (bias) {
      const std::vector<double>& b = get(b_name, 0, 3 * static_cast<size_t>(E), "[3*embed_dim]").data;
      l.b_name = b_name + range;
      l.b.assign(b.begin() + static_cast<long>(part) * E, b.begin() + static_cast<long>(part + 1) * E);
    }
    return l;
  }
};

MaskKind parse_mask(const Fields& f) {
  const std::string m = f.string("mask", "none");
  if (m == "none") return MaskKind::kNone;
  if (m == "key_padding") return MaskKind::kKeyPadding;
  if (m == "causal") return MaskKind::kCausal;
  fail(f.where, ": unknown mask '", m, "' (expected none, key_padding or causal)");
}

void resolve_mha(const Fields& f, const Weights& w, FloatLayer* L) {
  const int E = f.integer("embed_dim");
  const int H = f.integer("num_heads");
  if (E % H != 0) fail(f.where, ": embed_dim ", E, " is not divisible by num_heads ", H);
  L->num_heads = H;
  L->head_dim = E / H;
  L->cross = f.boolean("cross", false);
  const int kdim = f.integer("kdim", E), vdim = f.integer("vdim", E);
  if (!L->cross && (kdim != E || vdim != E)) {
    fail(f.where, ": self-attention needs kdim == vdim == embed_dim (", E, ")");
  }
  L->query_dim = E;
  L->key_dim = kdim;
  L->value_dim = vdim;
  L->output_dim = E;
  L->scale = f.number("scale").value_or(1.0 / std::sqrt(static_cast<double>(L->head_dim)));
  const bool bias = f.boolean("bias", true);
  if (f.has("tensors")) {
    auto name = [&](const char* k, bool required) {
      std::string n = f.tensor_name(k);
      if (n.empty() && required) fail(f.where, ": tensors.", k, " is required");
      return n;
    };
    L->q_proj = w.linear(name("q_w", true), name("q_b", false), E, E, "q_proj [embed_dim, embed_dim]", false);
    L->k_proj = w.linear(name("k_w", true), name("k_b", false), E, kdim, "k_proj [embed_dim, kdim]", false);
    L->v_proj = w.linear(name("v_w", true), name("v_b", false), E, vdim, "v_proj [embed_dim, vdim]", false);
    L->out_proj = w.linear(name("o_w", true), name("o_b", false), E, E, "out_proj [embed_dim, embed_dim]", false);
    return;
  }
  const std::string preset = f.string("preset");
  const std::string p = f.string("prefix", "");
  if (preset == "torch_mha") {
    if (w.has(p + "in_proj_weight") || (kdim == E && vdim == E && !w.has(p + "q_proj_weight"))) {
      if (kdim != E || vdim != E) {
        fail(f.where, ": packed in_proj_weight needs kdim == vdim == embed_dim");
      }
      for (int part = 0; part < 3; ++part) {
        FloatLinear l = w.slice(p + "in_proj_weight", p + "in_proj_bias", E, part, bias);
        (part == 0 ? L->q_proj : part == 1 ? L->k_proj : L->v_proj) = std::move(l);
      }
    } else {
      L->q_proj = w.linear(p + "q_proj_weight", "", E, E, "[embed_dim, embed_dim]", false);
      L->k_proj = w.linear(p + "k_proj_weight", "", E, kdim, "[embed_dim, kdim]", false);
      L->v_proj = w.linear(p + "v_proj_weight", "", E, vdim, "[embed_dim, vdim]", false);
      if (bias) {
        for (int part = 0; part < 3; ++part) {
          const std::vector<double>& all =
              w.get(p + "in_proj_bias", 0, 3 * static_cast<size_t>(E), "[3*embed_dim]").data;
          FloatLinear& l = part == 0 ? L->q_proj : part == 1 ? L->k_proj : L->v_proj;
          l.b.assign(all.begin() + static_cast<long>(part) * E, all.begin() + static_cast<long>(part + 1) * E);
          l.b_name = p + "in_proj_bias[" + std::to_string(part * E) + ":" + std::to_string((part + 1) * E) + "]";
        }
      }
    }
    L->out_proj = w.linear(p + "out_proj.weight", p + "out_proj.bias", E, E,
                           "out_proj [embed_dim, embed_dim]", bias);
  } else if (preset == "linear") {
    L->q_proj = w.linear(p + "q_proj.weight", p + "q_proj.bias", E, E, "[embed_dim, embed_dim]", false);
    L->k_proj = w.linear(p + "k_proj.weight", p + "k_proj.bias", E, kdim, "[embed_dim, kdim]", false);
    L->v_proj = w.linear(p + "v_proj.weight", p + "v_proj.bias", E, vdim, "[embed_dim, vdim]", false);
    L->out_proj = w.linear(p + "out_proj.weight", p + "out_proj.bias", E, E, "[embed_dim, embed_dim]", false);
  } else {
    fail(f.where, ": unknown preset '", preset, "' (expected torch_mha or linear, or give \"tensors\")");
  }
}

std::string tensor_or(const Fields& f, const char* key, const std::string& prefix, const char* def) {
  std::string n = f.tensor_name(key);
  return n.empty() ? prefix + def : n;
}

void resolve_additive(const Fields& f, const Weights& w, FloatLayer* L) {
  L->query_dim = f.integer("query_dim");
  L->key_dim = f.integer("key_dim");
  L->attn_dim = f.integer("attn_dim");
  L->value_dim = f.integer("value_dim", L->key_dim);
  L->output_dim = L->value_dim;
  const std::string p = f.string("prefix", "");
  const int A = L->attn_dim;
  L->w_q = w.linear(tensor_or(f, "w_q", p, "W_q.weight"), "", A, L->query_dim, "w_q [attn_dim, query_dim]", false);
  const std::string b = f.tensor_name("b").empty() && !f.has("tensors") ? p + "W_k.bias" : f.tensor_name("b");
  L->w_k = w.linear(tensor_or(f, "w_k", p, "W_k.weight"), b, A, L->key_dim, "w_k [attn_dim, key_dim]", false);
  L->v_name = tensor_or(f, "v", p, "v.weight");
  L->v = w.get(L->v_name, 0, static_cast<size_t>(A), "v [attn_dim] or [1, attn_dim]").data;
}

void resolve_luong(const Fields& f, const Weights& w, FloatLayer* L) {
  const std::string score = f.string("score", "dot");
  L->query_dim = f.integer("query_dim");
  L->key_dim = f.integer("key_dim", L->query_dim);
  L->value_dim = f.integer("value_dim", L->key_dim);
  L->output_dim = L->value_dim;
  if (score == "dot" || score == "scaled_dot") {
    L->luong = score == "dot" ? LuongKind::kDot : LuongKind::kScaledDot;
    if (L->query_dim != L->key_dim) {
      fail(f.where, ": ", score, " scores need query_dim == key_dim (", L->query_dim, " vs ", L->key_dim, ")");
    }
  } else if (score == "general") {
    L->luong = LuongKind::kGeneral;
    const std::string p = f.string("prefix", "");
    const std::string name = tensor_or(f, "w", p, "W.weight");
    // torch: nn.Linear(key_dim, query_dim).weight is [query_dim][key_dim]; store W^T.
    const Array& a = w.get(name, static_cast<size_t>(L->query_dim), static_cast<size_t>(L->key_dim),
                           "[query_dim, key_dim], nn.Linear(key_dim, query_dim).weight");
    L->w.in = L->query_dim;
    L->w.out = L->key_dim;
    L->w.w_name = name + ".T";
    L->w.w.resize(a.data.size());
    for (int r = 0; r < L->query_dim; ++r) {
      for (int c = 0; c < L->key_dim; ++c) {
        L->w.w[static_cast<size_t>(c) * L->query_dim + r] = a.data[static_cast<size_t>(r) * L->key_dim + c];
      }
    }
  } else {
    fail(f.where, ": unknown Luong score '", score, "' (expected dot, general or scaled_dot)");
  }
  const double def = L->luong == LuongKind::kScaledDot ? 1.0 / std::sqrt(static_cast<double>(L->key_dim)) : 1.0;
  L->scale = f.number("scale").value_or(def);
}

void resolve_pooling(const Fields& f, const Weights& w, FloatLayer* L) {
  const int D = f.integer("dim");
  L->key_dim = L->value_dim = L->output_dim = D;
  L->query_dim = 0;
  L->cross = true;
  L->v_name = tensor_or(f, "query", f.string("prefix", ""), "query.weight");
  L->v = w.get(L->v_name, 0, static_cast<size_t>(D), "[dim] or [1, dim]").data;
}

}  // namespace

ModelSpec load_spec(const std::string& spec_path, const std::string& spec_text,
                    const ArrayMap& weights, const std::string& weights_path,
                    const LengthOverrides& overrides) {
  json j;
  try {
    j = json::parse(spec_text);
  } catch (const json::exception& e) {
    fail(spec_path, ": malformed JSON: ", e.what());
  }
  if (!j.is_object() || !j.contains("layers") || !j.at("layers").is_array()) {
    fail(spec_path, ": expected an object with a \"layers\" array");
  }
  if (j.at("layers").empty()) fail(spec_path, ": \"layers\" is empty");
  ModelSpec spec;
  spec.model = j.contains("model") && j.at("model").is_string() ? j.at("model").get<std::string>() : "";
  size_t index = 0;
  for (const json& lj : j.at("layers")) {
    std::string where = spec_path + ": layer " + std::to_string(index);
    if (!lj.is_object()) fail(where, ": expected an object");
    if (!lj.contains("name") || !lj.at("name").is_string() || lj.at("name").get<std::string>().empty()) {
      fail(where, ": missing field 'name'");
    }
    FloatLayer L;
    L.name = lj.at("name").get<std::string>();
    for (const FloatLayer& other : spec.layers) {
      if (other.name == L.name) fail(where, ": duplicate layer name '", L.name, "'");
    }
    Fields f{lj, spec_path + ": layer '" + L.name + "'"};
    Weights w{weights, weights_path, L.name, f.string("prefix", "")};
    const std::string kind = f.string("kind");
    L.mask = parse_mask(f);
    if (kind == "mha") {
      L.kind = LayerKind::kMha;
      resolve_mha(f, w, &L);
    } else if (kind == "additive") {
      L.kind = LayerKind::kAdditive;
      resolve_additive(f, w, &L);
    } else if (kind == "luong") {
      L.kind = LayerKind::kLuong;
      resolve_luong(f, w, &L);
    } else if (kind == "pooling") {
      L.kind = LayerKind::kPooling;
      resolve_pooling(f, w, &L);
    } else {
      fail(f.where, ": unknown kind '", kind, "' (expected mha, additive, luong or pooling)");
    }
    if (L.mask == MaskKind::kCausal && L.kind != LayerKind::kMha) {
      fail(f.where, ": causal masks are supported for mha layers only");
    }
    if (L.kind == LayerKind::kMha && L.mask == MaskKind::kCausal && L.cross) {
      // Allowed by the format (offset kv_len - q_len); nothing to check.
    }
    if (L.kind == LayerKind::kPooling) {
      L.max_q_len = 1;
      L.max_kv_len = overrides.max_kv_len > 0 ? overrides.max_kv_len : f.integer("max_kv_len");
    } else {
      L.max_q_len = overrides.max_q_len > 0 ? overrides.max_q_len : f.integer("max_q_len");
      if (overrides.max_kv_len > 0) {
        L.max_kv_len = overrides.max_kv_len;
      } else if (L.self_attention() && !f.has("max_kv_len")) {
        L.max_kv_len = L.max_q_len;
      } else {
        L.max_kv_len = f.integer("max_kv_len");
      }
    }
    spec.layers.push_back(std::move(L));
    ++index;
  }
  return spec;
}

}  // namespace convert
}  // namespace edgeattn
