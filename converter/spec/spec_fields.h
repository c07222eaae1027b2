// Reading one layer object of the JSON spec (fields with messages naming the
// spec and layer) and fetching its weights (tensors checked for presence,
// dtype, shape and finite values, with messages naming the weights file and
// layer): what spec.cc and the kind modules (converter/kinds/) resolve layers with.
#ifndef EDGEATTN_CONVERTER_SPEC_SPEC_FIELDS_H_
#define EDGEATTN_CONVERTER_SPEC_SPEC_FIELDS_H_

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/base/error.h"
#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

// Reads fields of one layer object with messages naming the spec and layer.
struct SpecFields {
  const nlohmann::json& j;
  std::string where;  // "spec.json: layer 'enc_self'"

  bool has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }

  int integer(const char* key, std::optional<int> def = std::nullopt) const {
    if (!has(key)) {
      if (def) return *def;
      fail(where, ": missing field '", key, "'");
    }
    const nlohmann::json& v = j.at(key);
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
    const nlohmann::json& t = j.at("tensors");
    if (!t.is_object()) fail(where, ": field 'tensors' must be an object");
    if (!t.contains(key) || t.at(key).is_null()) return "";
    if (!t.at(key).is_string()) fail(where, ": tensors.", key, " must be a string");
    return t.at(key).get<std::string>();
  }
};

// Fetches weights with messages naming the weights file and the layer, and
// records every tensor it returns in `fetched` (when set): what the layer
// uses, for the account of the file's tensors (spec.h, unused tensors).
// has() and map lookups only probe: a tensor counts as used once fetched.
struct SpecWeights {
  const ArrayMap& map;
  std::string file;
  std::string layer;
  std::string prefix;  // for the misnamed-prefix hint
  std::set<std::string>* fetched = nullptr;
  std::string origin;  // " (block 7 of \"repeat\" 'block{i}')" for a layer a repeat made, else ""

  std::string where() const { return file + ": layer '" + layer + "'" + origin; }

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
  // also accepting [1, cols]), and finite everywhere. `conv_patch` also
  // accepts a Conv1d/Conv2d weight [rows, C, k] / [rows, C, kh, kw] whose
  // trailing dimensions multiply to `cols`: row-major, it is that matrix.
  const Array& get(const std::string& name, size_t rows, size_t cols, const std::string& what,
                   bool conv_patch = false) const {
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
      if (conv_patch && (a.shape.size() == 3 || a.shape.size() == 4) && a.shape[0] == rows) {
        size_t inner = 1;
        for (size_t d = 1; d < a.shape.size(); ++d) inner *= a.shape[d];
        ok = inner == cols;
        expected += " or a convolution's [" + std::to_string(rows) + ", C, kh, kw] with C*kh*kw = " +
                    std::to_string(cols);
      }
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
    if (fetched != nullptr) fetched->insert(name);
    return a;
  }

  FloatLinear linear(const std::string& w_name, const std::string& b_name, int out, int in,
                     const std::string& what, bool bias_required, bool conv_patch = false) const {
    FloatLinear l;
    l.in = in;
    l.out = out;
    l.w_name = w_name;
    l.w = get(w_name, static_cast<size_t>(out), static_cast<size_t>(in), what, conv_patch).data;
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

// The identity [E, E] without bias: an attention with no output projection
// (Torch-KWT's one head of dim_head == dim, whose to_out is nn.Identity),
// written as a projection whose int8 weights are exact (1.0 is 127 steps of
// 1/127, per channel), so the runtime's attention stays one kind.
inline FloatLinear identity_linear(int E) {
  FloatLinear l;
  l.in = l.out = E;
  l.w.assign(static_cast<size_t>(E) * E, 0.0);
  for (int i = 0; i < E; ++i) l.w[static_cast<size_t>(i) * E + i] = 1.0;
  l.w_name = "identity (\"out_proj\": false)";
  return l;
}

// tensors.<key>, or prefix + def when the spec does not name it.
inline std::string tensor_or(const SpecFields& f, const char* key, const std::string& prefix, const char* def) {
  std::string n = f.tensor_name(key);
  return n.empty() ? prefix + def : n;
}

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_SPEC_SPEC_FIELDS_H_
