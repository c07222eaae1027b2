#include "converter/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

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
  L->num_kv_heads = f.integer("num_kv_heads", H);
  if (L->num_kv_heads < 1 || H % L->num_kv_heads != 0) {
    fail(f.where, ": num_kv_heads ", L->num_kv_heads, " must divide num_heads ", H);
  }
  const int KV = L->num_kv_heads * L->head_dim;  // width of the K and V projections
  L->cross = f.boolean("cross", false);
  L->kv_cache = f.boolean("kv_cache", false);
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
    L->k_proj = w.linear(name("k_w", true), name("k_b", false), KV, kdim,
                         "k_proj [num_kv_heads * head_dim, kdim]", false);
    L->v_proj = w.linear(name("v_w", true), name("v_b", false), KV, vdim,
                         "v_proj [num_kv_heads * head_dim, vdim]", false);
    L->out_proj = w.linear(name("o_w", true), name("o_b", false), E, E, "out_proj [embed_dim, embed_dim]", false);
    return;
  }
  const std::string preset = f.string("preset");
  const std::string p = f.string("prefix", "");
  if (preset == "torch_mha") {
    if (KV != E) {
      fail(f.where, ": nn.MultiheadAttention has no grouped-query heads (num_kv_heads ", L->num_kv_heads,
           "); use preset \"linear\" or \"tensors\"");
    }
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
    L->k_proj = w.linear(p + "k_proj.weight", p + "k_proj.bias", KV, kdim, "[num_kv_heads * head_dim, kdim]", false);
    L->v_proj = w.linear(p + "v_proj.weight", p + "v_proj.bias", KV, vdim, "[num_kv_heads * head_dim, vdim]", false);
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
  L->coverage = f.boolean("coverage", false);
  if (L->coverage) {  // PyTorch nn.Linear(1, attn_dim, bias=False): weight [attn_dim, 1]
    L->w_c_name = tensor_or(f, "w_c", p, "W_c.weight");
    const auto it = w.map.find(L->w_c_name);
    const bool column = it != w.map.end() && it->second.shape.size() == 2 && it->second.shape[1] == 1 &&
                        A != 1;
    L->w_c = column ? w.get(L->w_c_name, static_cast<size_t>(A), 1, "w_c [attn_dim, 1] or [attn_dim]").data
                    : w.get(L->w_c_name, 0, static_cast<size_t>(A), "w_c [attn_dim, 1] or [attn_dim]").data;
  } else if (!f.tensor_name("w_c").empty()) {
    fail(f.where, ": tensors.w_c needs \"coverage\": true");
  }
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

// ---- strict field checking ------------------------------------------------

using FieldList = std::vector<std::string>;

const FieldList kTopLevelFields = {"model", "layers"};
const FieldList kCommonFields = {"name", "kind", "mask", "max_q_len", "max_kv_len", "prefix", "tensors"};
const char* const kKinds[] = {"mha", "additive", "luong", "pooling"};

// Fields of a layer of `kind` beyond the common ones.
FieldList kind_fields(const std::string& kind) {
  if (kind == "mha") return {"embed_dim", "num_heads", "cross", "kdim", "vdim", "scale", "bias", "preset", "kv_cache", "num_kv_heads"};
  if (kind == "additive") return {"query_dim", "key_dim", "attn_dim", "value_dim", "coverage"};
  if (kind == "luong") return {"score", "query_dim", "key_dim", "value_dim", "scale"};
  if (kind == "pooling") return {"dim"};
  return {};
}

FieldList layer_fields(const std::string& kind) {
  FieldList f;
  for (const std::string& c : kCommonFields) {
    if (kind == "pooling" && c == "max_q_len") continue;  // the query length of pooling is 1
    f.push_back(c);
  }
  for (std::string& k : kind_fields(kind)) f.push_back(std::move(k));
  return f;
}

FieldList tensor_fields(const std::string& kind) {
  if (kind == "mha") return {"q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b"};
  if (kind == "additive") return {"w_q", "w_k", "b", "v", "w_c"};
  if (kind == "luong") return {"w"};
  if (kind == "pooling") return {"query"};
  return {};
}

bool is_kind(const std::string& k) {
  for (const char* known : kKinds) {
    if (k == known) return true;
  }
  return false;
}

// Levenshtein distance with adjacent transpositions (optimal string alignment).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t k = 0; k <= b.size(); ++k) d[0][k] = k;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t k = 1; k <= b.size(); ++k) {
      const size_t cost = a[i - 1] == b[k - 1] ? 0 : 1;
      d[i][k] = std::min({d[i - 1][k] + 1, d[i][k - 1] + 1, d[i - 1][k - 1] + cost});
      if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1]) {
        d[i][k] = std::min(d[i][k], d[i - 2][k - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The known field nearest to `field`, or "" when none is plausibly meant:
// within an edit distance of about a third of the name (at least 1, at most 3),
// or the one containing it / contained in it ("masking" -> "mask").
std::string nearest(const std::string& field, const FieldList& known) {
  const std::string f = lower(field);
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& k : known) {
    size_t d = edit_distance(f, k);
    const size_t limit = std::clamp<size_t>(std::max(f.size(), k.size()) / 3, 1, 3);
    const bool contains = std::min(f.size(), k.size()) >= 3 &&
                          (f.find(k) != std::string::npos || k.find(f) != std::string::npos);
    if (d > limit && !contains) continue;
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

std::string join(const FieldList& l) {
  std::string s;
  for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i];
  return s;
}

// Fails on the first member of object `j` not in `known`: names it, suggests
// the nearest known field, and says when it belongs to other layer kinds.
// `what` names the object in the list of known fields ("mha layers");
// `path` prefixes member names ("tensors.").
void check_fields(const json& j, const FieldList& known, const std::string& where,
                  const std::string& what, const std::string& path,
                  const std::string& kind = "", bool tensors = false) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = where + ": unknown field '" + path + key + "'";
    if (!kind.empty()) {
      FieldList owners;
      for (const char* other : kKinds) {
        if (other == kind) continue;
        const FieldList of = tensors ? tensor_fields(other) : layer_fields(other);
        if (std::find(of.begin(), of.end(), key) != of.end()) owners.push_back(other);
      }
      if (kind == "pooling" && key == "max_q_len") {
        throw ConvertError(where + ": field 'max_q_len' is not used by pooling layers (their query length is 1)");
      }
      if (!owners.empty()) {
        msg = where + ": field '" + path + key + "' is not used by " + kind + " layers (only by " +
              join(owners) + ")";
      }
    }
    const std::string hint = nearest(key, known);
    if (!hint.empty()) {
      msg += ", did you mean '" + path + hint + "'?";
    } else {
      msg += " (" + what + " " + (known.size() == 1 ? "has" : "have") + ": " + join(known) + ")";
    }
    throw ConvertError(msg);
  }
}

// Every member of layer object `lj` (and of its "tensors") must be a field of
// its kind. With no valid kind, members are checked against every kind's
// fields (so "kin": "mha" is reported as a misspelling of "kind").
void check_layer_fields(const json& lj, const std::string& spec_path, const std::string& index_where) {
  const std::string where = lj.contains("name") && lj.at("name").is_string()
                                ? spec_path + ": layer '" + lj.at("name").get<std::string>() + "'"
                                : index_where;
  const std::string kind =
      lj.contains("kind") && lj.at("kind").is_string() ? lj.at("kind").get<std::string>() : "";
  if (!is_kind(kind)) {
    FieldList all = kCommonFields;
    for (const char* k : kKinds) {
      for (const std::string& f : kind_fields(k)) {
        if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
      }
    }
    check_fields(lj, all, where, "layers", "");
    return;
  }
  check_fields(lj, layer_fields(kind), where, kind + " layers", "", kind);
  if (lj.contains("tensors") && lj.at("tensors").is_object()) {
    check_fields(lj.at("tensors"), tensor_fields(kind), where, kind + " tensors", "tensors.", kind, true);
  }
}

// ---- JSON parse errors ----------------------------------------------------

struct LineColumn {
  size_t line = 1, column = 1;
};

// nlohmann's parse_error::byte is the 1-based index of the last byte read.
LineColumn line_column(const std::string& text, size_t byte) {
  LineColumn lc;
  const size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++lc.line;
      lc.column = 1;
    } else {
      ++lc.column;
    }
  }
  return lc;
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax
// error ..." -> "syntax error ..." (the position is reported by the caller).
std::string parse_reason(const std::string& what) {
  const size_t p = what.find("parse error");
  if (p == std::string::npos) return what;
  const size_t colon = what.find(": ", p);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

ModelSpec load_spec(const std::string& spec_path, const std::string& spec_text,
                    const ArrayMap& weights, const std::string& weights_path,
                    const LengthOverrides& overrides) {
  json j;
  try {
    // JSON keeps only the last of repeated keys; a spec that repeats one
    // ("mask": "causal", ..., "mask": "none") would convert silently into
    // the last value, so a repeat is an error (one key set per open object).
    std::vector<std::set<std::string>> keys;
    const json::parser_callback_t no_repeats = [&](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      if (event == json::parse_event_t::key && !keys.empty() &&
          !keys.back().insert(parsed.get<std::string>()).second) {
        fail(spec_path, ": field '", parsed.get<std::string>(),
             "' appears twice in one object (JSON would keep only the last value); remove one");
      }
      return true;
    };
    j = json::parse(spec_text, no_repeats);
  } catch (const json::parse_error& e) {
    const LineColumn lc = line_column(spec_text, e.byte);
    fail(spec_path, ": malformed JSON at line ", lc.line, ", column ", lc.column, ": ",
         parse_reason(e.what()));
  } catch (const json::exception& e) {
    fail(spec_path, ": malformed JSON: ", e.what());
  }
  if (j.is_object()) check_fields(j, kTopLevelFields, spec_path, "the top level", "");
  if (!j.is_object() || !j.contains("layers") || !j.at("layers").is_array()) {
    fail(spec_path, ": expected an object with a \"layers\" array");
  }
  if (j.at("layers").empty()) fail(spec_path, ": \"layers\" is empty");
  ModelSpec spec;
  if (j.contains("model") && !j.at("model").is_null()) {
    if (!j.at("model").is_string()) fail(spec_path, ": field 'model' must be a string");
    spec.model = j.at("model").get<std::string>();
  }
  size_t index = 0;
  for (const json& lj : j.at("layers")) {
    std::string where = spec_path + ": layer " + std::to_string(index);
    if (!lj.is_object()) fail(where, ": expected an object");
    check_layer_fields(lj, spec_path, where);
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
    if (L.kind == LayerKind::kMha && L.kv_cache && (L.cross || L.mask != MaskKind::kCausal)) {
      fail(f.where, ": kv_cache needs causal self-attention (\"mask\": \"causal\", no \"cross\")");
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
