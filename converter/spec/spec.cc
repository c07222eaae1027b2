#include "converter/spec/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/kinds/kind.h"
#include "converter/spec/model_presets.h"
#include "converter/spec/spec_fields.h"

namespace edgeattn {
namespace convert {
namespace {

using nlohmann::json;

MaskKind parse_mask(const SpecFields& f) {
  const std::string m = f.string("mask", "none");
  if (m == "none") return MaskKind::kNone;
  if (m == "key_padding") return MaskKind::kKeyPadding;
  if (m == "causal") return MaskKind::kCausal;
  fail(f.where, ": unknown mask '", m, "' (expected none, key_padding or causal)");
}

// ---- strict field checking ------------------------------------------------

using FieldList = std::vector<std::string>;

const FieldList kTopLevelFields = {"model", "layers", "decoder_start", "preset"};
// "repeat" is taken out of an entry when it is expanded (expand_repeats);
// it is listed so that a misspelling of it is suggested.
const FieldList kCommonFields = {"name", "kind", "mask", "max_q_len", "max_kv_len", "prefix", "tensors", "input",
                                 "memory", "calib_method", "calib_headroom", "repeat"};
// The common fields and the kind's own (kinds/<kind>.cc).
FieldList layer_fields(const KindModule& kind) {
  FieldList f;
  for (const std::string& c : kCommonFields) {
    if (kind.learned_query && c == "max_q_len") continue;  // its query length is 1
    f.push_back(c);
  }
  for (const std::string& k : kind.fields) f.push_back(k);
  return f;
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
                  const KindModule* kind = nullptr, bool tensors = false) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = where + ": unknown field '" + path + key + "'";
    if (kind != nullptr) {
      FieldList owners;
      for (const KindModule* other : all_kinds()) {
        if (other == kind) continue;
        const FieldList of = tensors ? other->tensor_fields : layer_fields(*other);
        if (std::find(of.begin(), of.end(), key) != of.end()) owners.push_back(other->name);
      }
      if (kind->learned_query && key == "max_q_len") {
        throw ConvertError(where + ": field 'max_q_len' is not used by " + kind->name +
                           " layers (their query length is 1)");
      }
      if (!owners.empty()) {
        msg = where + ": field '" + path + key + "' is not used by " + kind->name + " layers (only by " +
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
// `origin` follows the layer's name in messages (" (block 7 of \"repeat\" ...)").
void check_layer_fields(const json& lj, const std::string& spec_path, const std::string& index_where,
                        const std::string& origin) {
  const std::string where = lj.contains("name") && lj.at("name").is_string()
                                ? spec_path + ": layer '" + lj.at("name").get<std::string>() + "'" + origin
                                : index_where;
  const KindModule* kind =
      lj.contains("kind") && lj.at("kind").is_string() ? find_kind(lj.at("kind").get<std::string>()) : nullptr;
  if (kind == nullptr) {
    FieldList all = kCommonFields;
    for (const KindModule* k : all_kinds()) {
      for (const std::string& f : k->fields) {
        if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
      }
    }
    check_fields(lj, all, where, "layers", "");
    return;
  }
  const std::string what = std::string(kind->name) + " layers";
  check_fields(lj, layer_fields(*kind), where, what, "", kind);
  if (lj.contains("tensors") && lj.at("tensors").is_object()) {
    check_fields(lj.at("tensors"), kind->tensor_fields, where, std::string(kind->name) + " tensors", "tensors.",
                 kind, true);
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

// ---- accounting for the weights file's tensors ------------------------------

// "attn.Wa.weight" -> "attn.Wa"; "" for a name without a '.'.
std::string parent_module(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

// The longest module path holding all of `names` ("" when none is common).
std::string common_module(const std::set<std::string>& names) {
  if (names.empty()) return "";
  std::string m = parent_module(*names.begin());
  for (const std::string& n : names) {
    const std::string p = parent_module(n);
    while (!m.empty() && p != m && p.compare(0, m.size() + 1, m + ".") != 0) m = parent_module(m);
  }
  return m;
}

// ---- "repeat": N chained blocks from one entry --------------------------------

const std::string kIndex = "{i}";

bool has_index(const std::string& s) { return s.find(kIndex) != std::string::npos; }

std::string with_index(std::string s, int i) {
  const std::string n = std::to_string(i);
  for (size_t p = s.find(kIndex); p != std::string::npos; p = s.find(kIndex, p + n.size())) s.replace(p, kIndex.size(), n);
  return s;
}

// The i for which with_index(pattern, i) is `name` (as_prefix: is a prefix
// of `name`), or -1. Every {i} of the pattern must read the same index,
// written as std::to_string writes it (no sign, no leading zeros).
long index_in(const std::string& pattern, const std::string& name, bool as_prefix) {
  size_t p = 0, n = 0;
  long index = -1;
  while (true) {
    const size_t at = pattern.find(kIndex, p);
    const std::string text = pattern.substr(p, at == std::string::npos ? std::string::npos : at - p);
    if (name.compare(n, text.size(), text) != 0) return -1;
    n += text.size();
    if (at == std::string::npos) break;
    size_t digits = 0;
    while (n + digits < name.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(name[n + digits]))) ++digits;
    if (digits == 0 || (digits > 1 && name[n] == '0')) return -1;
    const long i = std::stol(name.substr(n, digits));
    if (index >= 0 && i != index) return -1;
    index = i;
    n += digits;
    p = at + kIndex.size();
  }
  return (as_prefix || n == name.size()) ? index : -1;
}

// What one "repeat" entry made, for the account of the weights' tensors.
struct Repeat {
  std::string name;                     // the name pattern ("block{i}")
  int count = 0;
  std::string prefix;                   // the prefix pattern, "" when it has none
  std::vector<std::string> tensors;     // the patterns of its "tensors" names
};

// One layer object after the "repeat" entries are expanded.
struct LayerEntry {
  json j;
  std::string origin;    // " (block 7 of \"repeat\" 'block{i}')", "" for a layer written out
  bool chained = false;  // block i > 0 of a repeat: "input" is block i - 1
  std::string block_prefix;  // that block's prefix (everything under it is the block's)
};

// Every layer of the spec in order, each "repeat" entry replaced by its
// blocks: {i} in "name", "prefix" and the "tensors" names becomes 0 .. N-1,
// block 0 keeps the entry's "input" (if any), block i > 0 reads block i - 1.
std::vector<LayerEntry> expand_repeats(const json& layers, const std::string& spec_path,
                                       std::vector<Repeat>* repeats) {
  std::vector<LayerEntry> out;
  size_t index = 0;
  for (const json& lj : layers) {
    const std::string at = spec_path + ": layer " + std::to_string(index++);
    if (!lj.is_object() || !lj.contains("repeat")) {
      out.push_back(LayerEntry{lj, "", false, ""});
      continue;
    }
    const bool named = lj.contains("name") && lj.at("name").is_string();
    const std::string where = named ? spec_path + ": layer '" + lj.at("name").get<std::string>() + "'" : at;
    const json& r = lj.at("repeat");
    if (!r.is_number_integer() || r.get<long long>() < 1 || r.get<long long>() > 4096) {
      fail(where, ": field 'repeat' must be the number of blocks, an integer in 1..4096, got ", r.dump());
    }
    if (!named) fail(where, ": missing field 'name' (with {i} for the block's index: \"block{i}\")");
    Repeat rep;
    rep.name = lj.at("name").get<std::string>();
    rep.count = r.get<int>();
    if (!has_index(rep.name)) {
      fail(where, ": field 'name' of a \"repeat\" entry must contain {i}, the block's index (\"", rep.name,
           "{i}\" names the blocks ", rep.name, "0, ", rep.name, "1, ...)");
    }
    const std::string no_index = " of a \"repeat\" entry has no {i}: every block would read the same tensors "
                                 "(write blocks that share weights out one by one)";
    if (lj.contains("prefix") && !lj.at("prefix").is_null()) {
      if (!lj.at("prefix").is_string()) fail(where, ": field 'prefix' must be a string");
      rep.prefix = lj.at("prefix").get<std::string>();
      if (!has_index(rep.prefix)) fail(where, ": field 'prefix' '", rep.prefix, "'", no_index);
    }
    if (lj.contains("tensors") && lj.at("tensors").is_object()) {
      for (auto it = lj.at("tensors").begin(); it != lj.at("tensors").end(); ++it) {
        if (!it.value().is_string()) continue;  // the kind's own check names it
        const std::string t = it.value().get<std::string>();
        if (!has_index(t)) fail(where, ": tensors.", it.key(), " '", t, "'", no_index);
        rep.tensors.push_back(t);
      }
    }
    if (rep.prefix.empty() && rep.tensors.empty()) {
      fail(where, ": a \"repeat\" entry needs a 'prefix' with {i} (\"blocks.{i}.\") or \"tensors\" names with {i}, "
           "to say where block i's tensors are");
    }
    if (lj.contains("input") && lj.at("input").is_string() && has_index(lj.at("input").get<std::string>())) {
      fail(where, ": field 'input' of a \"repeat\" entry is the first block's input (block i reads block i - 1); "
           "it has no {i}");
    }
    for (int i = 0; i < rep.count; ++i) {
      LayerEntry e;
      e.j = lj;
      e.j.erase("repeat");
      e.j["name"] = with_index(rep.name, i);
      if (!rep.prefix.empty()) e.j["prefix"] = with_index(rep.prefix, i);
      if (e.j.contains("tensors") && e.j.at("tensors").is_object()) {
        for (auto& t : e.j.at("tensors")) {
          if (t.is_string()) t = with_index(t.get<std::string>(), i);
        }
      }
      if (i > 0) {
        e.j["input"] = with_index(rep.name, i - 1);
        e.chained = true;
      }
      e.origin = " (block " + std::to_string(i) + " of \"repeat\" '" + rep.name + "')";
      if (!rep.prefix.empty() && rep.prefix.back() == '.') e.block_prefix = with_index(rep.prefix, i);
      out.push_back(std::move(e));
    }
    repeats->push_back(std::move(rep));
  }
  return out;
}

// "block 12 under prefix 'blocks.{i}.' of \"repeat\" 'block{i}', which converts blocks 0..11"
// when `name` is where one of the repeats would put a block it does not make.
std::string beyond_repeats(const std::string& name, const std::vector<Repeat>& repeats) {
  for (const Repeat& r : repeats) {
    long i = -1;
    std::string pattern;
    if (!r.prefix.empty() && (i = index_in(r.prefix, name, true)) >= r.count) {
      pattern = "prefix '" + r.prefix + "'";
    } else {
      for (const std::string& t : r.tensors) {
        if ((i = index_in(t, name, false)) >= r.count) {
          pattern = "tensor name '" + t + "'";
          break;
        }
      }
    }
    if (!pattern.empty()) {
      return "block " + std::to_string(i) + " under " + pattern + " of \"repeat\" '" + r.name + "', which converts blocks 0.." +
             std::to_string(r.count - 1);
    }
  }
  return "";
}

// Every tensor no layer fetched, with the used tensor it sits next to (see
// UnusedTensor in spec.h). block_prefix[i]: layer i's prefix when a repeat
// made it (every tensor under it is the block's), else "".
std::vector<UnusedTensor> account(const ArrayMap& weights, const std::vector<FloatLayer>& layers,
                                  const std::vector<std::set<std::string>>& fetched,
                                  const std::vector<std::string>& block_prefix, const std::vector<Repeat>& repeats) {
  std::set<std::string> used;
  std::map<std::string, std::pair<std::string, std::string>> near;  // module -> (used tensor, layer)
  for (size_t i = 0; i < layers.size(); ++i) {
    for (const std::string& u : fetched[i]) {
      used.insert(u);
      near.emplace(parent_module(u), std::make_pair(u, layers[i].name));
    }
    const std::string m = common_module(fetched[i]);
    if (!m.empty()) near.emplace(m, std::make_pair(*fetched[i].begin(), layers[i].name));
  }
  std::vector<UnusedTensor> unused;
  for (const auto& kv : weights) {
    if (used.count(kv.first) != 0) continue;
    UnusedTensor t;
    t.name = kv.first;
    t.shape = kv.second.shape;
    const auto it = near.find(parent_module(kv.first));
    if (it != near.end()) {
      t.beside = it->second.first;
      t.layer = it->second.second;
    }
    for (size_t i = 0; i < layers.size() && t.beside.empty(); ++i) {
      const std::string& p = block_prefix[i];
      if (!p.empty() && !fetched[i].empty() && kv.first.compare(0, p.size(), p) == 0) {
        t.beside = *fetched[i].begin();
        t.layer = layers[i].name;
      }
    }
    if (t.beside.empty()) t.beyond = beyond_repeats(kv.first, repeats);
    unused.push_back(std::move(t));
  }
  return unused;
}

}  // namespace

std::vector<std::string> check_unused(const ModelSpec& spec, const std::string& weights_path, bool allow_unused) {
  std::vector<const UnusedTensor*> near;
  for (const UnusedTensor& t : spec.unused) {
    if (!t.beside.empty() || !t.beyond.empty()) near.push_back(&t);
  }
  // "tensor 'attn.Wa.bias' (in module 'attn.Wa' with 'attn.Wa.weight' of layer 'attn')"
  auto describe = [](const UnusedTensor& t) {
    if (!t.beyond.empty()) return "tensor '" + t.name + "' (" + t.beyond + ")";
    const std::string module = parent_module(t.name);
    return "tensor '" + t.name + "' (in " + (module.empty() ? std::string("the top level") : "module '" + module + "'") +
           " with '" + t.beside + "' of layer '" + t.layer + "')";
  };
  std::vector<std::string> warnings;
  if (allow_unused) {
    for (const UnusedTensor* t : near) {
      warnings.push_back(describe(*t) + " is used by no layer: converted without it (--allow-unused)");
    }
    return warnings;
  }
  if (near.empty()) return warnings;
  const UnusedTensor& t = *near[0];
  if (!t.beyond.empty()) {
    fail(weights_path, ": ", describe(t), " is used by no layer: the model has more blocks than the spec converts; "
         "set \"repeat\" to the model's number of blocks or pass --allow-unused to convert without them");
  }
  std::string fields;
  for (const FloatLayer& L : spec.layers) {
    if (L.name != t.layer) continue;
    for (const std::string& f : L.kind->tensor_fields) fields += (fields.empty() ? "" : ", ") + f;
    fields = "; " + std::string(L.kind->name) + " layers take " + fields;
  }
  std::string also;
  const size_t listed = std::min<size_t>(near.size(), 9);
  for (size_t i = 1; i < listed; ++i) {
    also += (i == 1 ? "; also unused next to used tensors: '" : ", '") + near[i]->name + "'";
  }
  if (near.size() > listed) also += " and " + std::to_string(near.size() - listed) + " more";
  fail(weights_path, ": ", describe(t), " is used by no layer: map it in the spec (\"tensors\" of layer '", t.layer,
       "'", fields, ") or pass --allow-unused to convert without it", also);
}

namespace {

// "input": "<layer>": this layer's query is the output rows of an earlier
// layer (a chain of blocks, a head after a final norm). Only a layer that
// reads nothing else can be chained: no key sequence of its own, no learned
// query.
// Every tensor the layer's "tensors" names is one its kind read: a named
// bias that is not in the file (a misspelling) or a name the kind passed
// over (tensors.qkv_w beside tensors.q_w) is an error, never a layer
// converted without it.
void check_named_tensors(const SpecFields& f, const SpecWeights& w, const FloatLayer& L) {
  if (!f.has("tensors") || !f.j.at("tensors").is_object()) return;
  for (auto it = f.j.at("tensors").begin(); it != f.j.at("tensors").end(); ++it) {
    if (!it.value().is_string()) continue;
    const std::string name = it.value().get<std::string>();
    if (w.fetched == nullptr || w.fetched->count(name) != 0) continue;
    if (!w.has(name)) fail(w.where(), ": missing tensor '", name, "' (tensors.", it.key(), ")");
    fail(f.where, ": tensors.", it.key(), " names '", name, "', which this ", L.kind->name,
         " layer does not read with these fields (another tensors key takes its place?)");
  }
}

// `repeated`: block i > 0 of a "repeat", whose input the repeat set.
void chain_input(const SpecFields& f, const std::vector<FloatLayer>& earlier, FloatLayer* L, bool repeated) {
  const std::string from = f.string("input");
  const std::string field = repeated ? "\"repeat\" (each block reads the one before)" : "field 'input'";
  int index = -1;
  for (size_t i = 0; i < earlier.size(); ++i) {
    if (earlier[i].name == from) index = static_cast<int>(i);
  }
  if (index < 0) {
    fail(f.where, ": field 'input': '", from, "' is not an earlier layer (a layer reads the output of one above it)");
  }
  // A learned-query layer (pooling, row_pool) reads the rows as its keys.
  const bool learned = L->learned_query();
  if (L->io().keys && !learned && L->memory_layer < 0) {
    fail(f.where, ": ", field, ": a ", L->kind->name, " layer reads a key sequence of its own",
         "; only layers whose one input is their query rows (or the rows they pool) can take an earlier layer's output");
  }
  const FloatLayer& src = earlier[static_cast<size_t>(index)];
  const int reads = learned ? L->key_dim : L->query_dim;
  if (src.output_dim != reads) {
    fail(f.where, ": ", field, ": layer '", from, "' gives rows of ", src.output_dim, " values, this layer reads ",
         reads);
  }
  const int src_rows = src.output_rows(src.max_q_len);
  const int max_rows = learned ? L->max_kv_len : L->max_q_len;
  if (src_rows > max_rows) {
    fail(f.where, ": ", field, ": layer '", from, "' gives up to ", src_rows, " rows",
         src.added_rows > 0 ? " (max_q_len " + std::to_string(src.max_q_len) + " + " +
                                  std::to_string(src.added_rows) + " it adds)"
                            : std::string(),
         ", more than ", learned ? "max_kv_len " : "max_q_len ", max_rows);
  }
  L->input_layer = index;
}

// "memory": "<layer>": a cross layer's keys and values are the output rows
// of an earlier layer (a decoder block's memory from its encoder), so the
// encoder and the decoder convert as one model.
void chain_memory(const SpecFields& f, const std::vector<FloatLayer>& earlier, FloatLayer* L) {
  const std::string from = f.string("memory");
  int index = -1;
  for (size_t i = 0; i < earlier.size(); ++i) {
    if (earlier[i].name == from) index = static_cast<int>(i);
  }
  if (index < 0) fail(f.where, ": field 'memory': '", from, "' is not an earlier layer");
  if (!L->io().keys || L->learned_query()) {
    fail(f.where, ": field 'memory': a ", L->kind->name, " layer reads no memory (only cross-attention does)");
  }
  const FloatLayer& src = earlier[static_cast<size_t>(index)];
  if (src.output_dim != L->key_dim || L->value_dim != L->key_dim) {
    fail(f.where, ": field 'memory': layer '", from, "' gives rows of ", src.output_dim,
         " values, this layer's keys and values are ", L->key_dim, " and ", L->value_dim, " wide");
  }
  const int src_rows = src.output_rows(src.max_q_len);
  if (src_rows > L->max_kv_len) {
    fail(f.where, ": field 'memory': layer '", from, "' gives up to ", src_rows, " rows, more than max_kv_len ",
         L->max_kv_len);
  }
  L->memory_layer = index;
}

// "decoder_start": "<layer>": the layers from it on run once per generated
// token (Interpreter::Generate). It reads the last token (no "input"), the
// layers after it read the decoder's layers' rows, and those before it (the
// encoder) only reach the decoder as its memory.
int decoder_start_of(const json& j, const std::string& spec_path, const std::vector<FloatLayer>& layers) {
  if (!j.contains("decoder_start")) return -1;
  const std::string where = spec_path + ": field 'decoder_start'";
  if (!j.at("decoder_start").is_string()) fail(where, " must be a layer name");
  const std::string name = j.at("decoder_start").get<std::string>();
  int start = -1;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].name == name) start = static_cast<int>(i);
  }
  if (start < 0) fail(where, ": '", name, "' is not a layer");
  if (start == 0) fail(where, ": '", name, "' is the first layer; the encoder part before it must not be empty");
  if (layers[static_cast<size_t>(start)].input_layer >= 0) {
    fail(where, ": layer '", name, "' reads the last generated token, so it has no \"input\"");
  }
  for (size_t i = static_cast<size_t>(start) + 1; i < layers.size(); ++i) {
    const FloatLayer& L = layers[i];
    if (L.input_layer < start) {
      fail(spec_path, ": layer '", L.name, "' is in the decoder part (after decoder_start '", name,
           "'): its \"input\" must be a decoder layer");
    }
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const int m = layers[i].memory_layer;
    if (m >= 0 && (static_cast<int>(i) < start || m >= start)) {
      fail(spec_path, ": layer '", layers[i].name, "': \"memory\" is for a decoder layer reading an encoder ",
           "layer's rows (decoder_start '", name, "')");
    }
  }
  return start;
}

}  // namespace

namespace {

// The spec's JSON; a key repeated in one object is an error.
json parse_spec(const std::string& spec_path, const std::string& spec_text) {
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
  return j;
}

// A whole-model preset's spec replaced by the layers it stands for (*preset:
// its account of them); any other spec as it is.
json without_preset(json j, const ArrayMap& weights, const std::string& spec_path, const std::string& weights_path,
                    std::string* preset) {
  if (!j.is_object() || !j.contains("preset")) return j;
  if (j.contains("layers")) fail(spec_path, ": a spec has \"preset\" or \"layers\", not both");
  if (!j.at("preset").is_string()) fail(spec_path, ": field 'preset' must be a string");
  const std::string name = j.at("preset").get<std::string>();
  const FieldList known = model_preset_fields(name);
  if (known.empty()) fail(spec_path, ": unknown preset '", name, "' (expected ", model_preset_names(), ")");
  check_fields(j, known, spec_path, "\"" + name + "\" presets", "");
  return expand_model_preset(j, weights, spec_path, weights_path, preset);
}

}  // namespace

ModelSpec load_spec(const std::string& spec_path, const std::string& spec_text,
                    const ArrayMap& weights, const std::string& weights_path,
                    const LengthOverrides& overrides) {
  std::string preset;  // a whole-model preset's account of what it made (model_presets.h)
  json j = without_preset(parse_spec(spec_path, spec_text), weights, spec_path, weights_path, &preset);
  if (j.is_object()) check_fields(j, kTopLevelFields, spec_path, "the top level", "");
  if (!j.is_object() || !j.contains("layers") || !j.at("layers").is_array()) {
    fail(spec_path, ": expected an object with a \"layers\" array");
  }
  if (j.at("layers").empty()) fail(spec_path, ": \"layers\" is empty");
  ModelSpec spec;
  spec.preset = preset;
  if (j.contains("model") && !j.at("model").is_null()) {
    if (!j.at("model").is_string()) fail(spec_path, ": field 'model' must be a string");
    spec.model = j.at("model").get<std::string>();
  }
  size_t index = 0;
  std::vector<std::set<std::string>> fetched;  // of each layer (SpecWeights)
  std::vector<std::string> block_prefix;       // of each layer a repeat made
  std::vector<Repeat> repeats;
  for (const LayerEntry& e : expand_repeats(j.at("layers"), spec_path, &repeats)) {
    const json& lj = e.j;
    std::string where = spec_path + ": layer " + std::to_string(index);
    if (!lj.is_object()) fail(where, ": expected an object");
    check_layer_fields(lj, spec_path, where, e.origin);
    if (!lj.contains("name") || !lj.at("name").is_string() || lj.at("name").get<std::string>().empty()) {
      fail(where, ": missing field 'name'");
    }
    FloatLayer L;
    L.name = lj.at("name").get<std::string>();
    for (const FloatLayer& other : spec.layers) {
      if (other.name == L.name) {
        fail(spec_path, ": layer '", L.name, "'", e.origin, ": duplicate layer name '", L.name,
             "' (an earlier layer has it)");
      }
    }
    SpecFields f{lj, spec_path + ": layer '" + L.name + "'" + e.origin};
    fetched.emplace_back();
    block_prefix.push_back(e.block_prefix);
    SpecWeights w{weights, weights_path, L.name, f.string("prefix", ""), &fetched.back(), e.origin};
    const std::string kind = f.string("kind");
    L.mask = parse_mask(f);
    L.kind = find_kind(kind);
    if (L.kind == nullptr) fail(f.where, ": unknown kind '", kind, "' (expected ", kind_names(), ")");
    L.kind->resolve(f, w, &L);
    check_named_tensors(f, w, L);
    if (L.mask == MaskKind::kCausal && !L.kind->causal_mask) {
      std::string causal;
      for (const KindModule* k : all_kinds()) {
        if (k->causal_mask) causal += (causal.empty() ? "" : ", ") + std::string(k->name);
      }
      fail(f.where, ": causal masks are supported for ", causal, " layers only");
    }
    if (L.learned_query()) {
      L.max_q_len = 1;
      L.max_kv_len = overrides.max_kv_len > 0 ? overrides.max_kv_len : f.integer("max_kv_len");
    } else {
      L.max_q_len = overrides.max_q_len > 0 ? overrides.max_q_len : f.integer("max_q_len");
      if (overrides.max_kv_len > 0) {
        L.max_kv_len = overrides.max_kv_len;
      } else if ((!L.io().keys || L.kind->keys_pair_rows) && !f.has("max_kv_len")) {
        L.max_kv_len = L.max_q_len;  // keys (if any) are the query rows, or as many (add)
      } else {
        L.max_kv_len = f.integer("max_kv_len");
      }
      if (L.kind->keys_pair_rows && L.max_kv_len != L.max_q_len) {
        fail(f.where, ": max_kv_len ", L.max_kv_len, " (the ", L.kind->name, "'s residual rows) must equal max_q_len ",
             L.max_q_len, ": it pairs them one to one");
      }
    }
    if (f.has("calib_method")) {  // this layer's, over --calib-method (e.g. a decoder's mse)
      L.calib_method = f.string("calib_method");
      if (L.calib_method != "minmax" && L.calib_method != "percentile" && L.calib_method != "mse") {
        fail(f.where, ": field 'calib_method': '", L.calib_method, "' (expected minmax, percentile or mse)");
      }
    }
    if (f.has("calib_headroom")) {  // this layer's, over --calib-headroom (e.g. a block with outlier channels)
      // "auto" or a percentage in [0, 1000], as --calib-headroom (calibrate/ parses it).
      const nlohmann::json& v = f.j.at("calib_headroom");
      const bool is_auto = v.is_string() && v.get<std::string>() == "auto";
      if (!is_auto && !(v.is_number() && v.get<double>() >= 0.0 && v.get<double>() <= 1000.0)) {
        fail(f.where, ": field 'calib_headroom': ", v.dump(), " (expected \"auto\" or a percentage in [0, 1000])");
      }
      L.calib_headroom = is_auto ? "auto" : v.dump();
    }
    if (f.has("memory")) chain_memory(f, spec.layers, &L);
    if (f.has("input")) chain_input(f, spec.layers, &L, e.chained);
    spec.layers.push_back(std::move(L));
    ++index;
  }
  for (const FloatLayer& L : spec.layers) {  // an int16 mha output is the model's, never another layer's input
    for (const int from : {L.input_layer, L.memory_layer}) {
      const FloatLayer* src = from >= 0 ? &spec.layers[static_cast<size_t>(from)] : nullptr;
      if (src != nullptr && src->output16 && src->kind->runtime_kind == EA_LAYER_MULTI_HEAD_ATTENTION) {
        fail(spec_path, ": layer '", L.name, "' reads '", src->name, "', whose \"output\" is \"int16\"; only a model's "
             "output can be an int16 mha output");
      }
    }
  }
  spec.decoder_start = decoder_start_of(j, spec_path, spec.layers);
  spec.weights_tensors = weights.size();
  spec.unused = account(weights, spec.layers, fetched, block_prefix, repeats);
  return spec;
}

std::string expand_spec(const std::string& spec_path, const std::string& weights_path) {
  const ArrayMap weights = load_weights(weights_path);
  const std::vector<uint8_t> bytes = read_file(spec_path);
  const std::string text(bytes.begin(), bytes.end());
  load_spec(spec_path, text, weights, weights_path, {});  // every check of a conversion
  std::string preset;
  const json j = without_preset(parse_spec(spec_path, text), weights, spec_path, weights_path, &preset);
  // The layers one per line, as the docs write specs.
  std::string out = "{";
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "layers") continue;
    out += json(it.key()).dump() + ": " + it.value().dump() + ", ";
  }
  out += "\"layers\": [";
  const json& layers = j.at("layers");
  // In each layer "repeat", "name" and "kind" first and "input" last, as the
  // docs write them (a json object keeps its keys sorted).
  auto layer_text = [](const json& L) {
    std::string t;
    auto field = [&](const std::string& k) { t += (t.empty() ? "{" : ", ") + json(k).dump() + ": " + L.at(k).dump(); };
    for (const char* k : {"repeat", "name", "kind"}) {
      if (L.contains(k)) field(k);
    }
    for (auto it = L.begin(); it != L.end(); ++it) {
      if (it.key() != "repeat" && it.key() != "name" && it.key() != "kind" && it.key() != "input") field(it.key());
    }
    if (L.contains("input")) field("input");
    return t + "}";
  };
  for (size_t i = 0; i < layers.size(); ++i) out += std::string(i ? ",\n  " : "\n  ") + layer_text(layers[i]);
  return out + "]}\n";
}

ModelSpec read_model_spec(const std::string& spec_path, const std::string& weights_path,
                          const LengthOverrides& overrides) {
  const ArrayMap weights = load_weights(weights_path);
  const std::vector<uint8_t> spec_bytes = read_file(spec_path);
  return load_spec(spec_path, std::string(spec_bytes.begin(), spec_bytes.end()), weights, weights_path, overrides);
}

namespace {

// Layers no other layer reads (as its input or memory): the model's outputs.
std::vector<bool> read_layers(const ModelSpec& spec) {
  std::vector<bool> read(spec.layers.size(), false);
  for (const FloatLayer& L : spec.layers) {
    if (L.input_layer >= 0) read[static_cast<size_t>(L.input_layer)] = true;
    if (L.memory_layer >= 0) read[static_cast<size_t>(L.memory_layer)] = true;
  }
  return read;
}

}  // namespace

void use_residual16(ModelSpec* spec, bool mha_outputs) {
  // The stream's ends from the graph (issue 37): every int8 block reads and
  // writes it; a positions or embedding layer feeding a block writes it; a
  // layernorm or row_pool after a block reads it; a row_pool whose output a
  // layernorm reads writes int16 to it (the pooled row stays on the stream's
  // grid until the norm); a linear whose only reader is such a positions
  // layer writes int16 rows into it (the stream's 16-bit entry: no int8
  // rounding of the patch or frame embedding).
  const auto kind = [](const FloatLayer& L) { return L.kind->runtime_kind; };
  const auto block = [&](const FloatLayer& L) {
    return kind(L) == EA_LAYER_ENCODER_BLOCK || kind(L) == EA_LAYER_DECODER_BLOCK;
  };
  for (FloatLayer& L : spec->layers) {
    if (block(L)) L.input16 = L.output16 = true;
  }
  if (mha_outputs) {  // an mha layer giving the model's output writes int16 (contract 5c-out)
    const std::vector<bool> read = read_layers(*spec);
    for (size_t i = 0; i < spec->layers.size(); ++i) {
      if (kind(spec->layers[i]) == EA_LAYER_MULTI_HEAD_ATTENTION && !read[i]) spec->layers[i].output16 = true;
    }
  }
  for (FloatLayer& L : spec->layers) {
    if (L.input_layer < 0) continue;
    FloatLayer& src = spec->layers[static_cast<size_t>(L.input_layer)];
    if (block(L) && (kind(src) == EA_LAYER_POSITIONS || kind(src) == EA_LAYER_EMBEDDING)) src.output16 = true;
    if (src.output16 && (kind(L) == EA_LAYER_LAYERNORM || kind(L) == EA_LAYER_ROW_POOL)) L.input16 = true;
    if (kind(L) == EA_LAYER_LAYERNORM && kind(src) == EA_LAYER_ROW_POOL && src.input16) {
      src.output16 = true;
      L.input16 = true;
    }
  }
  std::vector<int> readers(spec->layers.size(), 0);
  for (const FloatLayer& L : spec->layers) {
    for (const int src : {L.input_layer, L.memory_layer}) {
      if (src >= 0) ++readers[static_cast<size_t>(src)];
    }
  }
  for (FloatLayer& L : spec->layers) {
    if (kind(L) != EA_LAYER_POSITIONS || !L.output16 || L.input_layer < 0) continue;
    FloatLayer& src = spec->layers[static_cast<size_t>(L.input_layer)];
    if (kind(src) == EA_LAYER_LINEAR && readers[static_cast<size_t>(L.input_layer)] == 1) {
      src.output16 = true;
      L.input16 = true;
    }
  }
  for (const FloatLayer& L : spec->layers) {
    if (L.memory_layer >= 0) {
      const FloatLayer& mem = spec->layers[static_cast<size_t>(L.memory_layer)];
      if (mem.output16) {
        fail("layer '", L.name, "' (", L.kind->name, ") reads the int16 residual stream of '", mem.name,
             "' as its memory (--residual int16); a memory is int8: put a layernorm between them or convert "
             "with --residual int8");
      }
    }
    if (L.input_layer < 0) continue;
    const FloatLayer& src = spec->layers[static_cast<size_t>(L.input_layer)];
    if (src.output16 && !L.input16) {
      fail("layer '", L.name, "' (", L.kind->name, ") reads the int16 residual stream of '", src.name,
           "' (--residual int16); only block, layernorm and row_pool layers read it: put a layernorm between "
           "them or convert with --residual int8");
    }
    if (L.input16 && !src.output16) {
      fail("layer '", L.name, "' (", L.kind->name, " with --residual int16) reads '", src.name, "' (",
           src.kind->name, "), whose output is int8, not the int16 residual stream (only block, positions, "
           "embedding and row_pool layers write it); convert with --residual int8");
    }
  }
}

bool use_residual16_inside(ModelSpec* spec, std::string* why) {
  bool blocks = false;
  for (const FloatLayer& L : spec->layers) {
    blocks = blocks || L.kind->runtime_kind == EA_LAYER_ENCODER_BLOCK || L.kind->runtime_kind == EA_LAYER_DECODER_BLOCK;
  }
  if (!blocks) {
    *why = "no encoder or decoder blocks";
    return false;
  }
  std::vector<std::pair<bool, bool>> before;
  for (const FloatLayer& L : spec->layers) before.emplace_back(L.input16, L.output16);
  const auto undo = [&](const std::string& reason) {
    for (size_t i = 0; i < spec->layers.size(); ++i) {
      spec->layers[i].input16 = before[i].first;
      spec->layers[i].output16 = before[i].second;
    }
    *why = reason;
    return false;
  };
  try {
    use_residual16(spec, false);
  } catch (const ConvertError& e) {
    return undo(e.what());
  }
  const std::vector<bool> read = read_layers(*spec);
  for (size_t i = 0; i < spec->layers.size(); ++i) {
    const FloatLayer& L = spec->layers[i];
    if (L.input16 && L.input_layer < 0) {
      return undo("layer '" + L.name + "' (" + L.kind->name + ") reads the model's input, which would become int16");
    }
    if (L.output16 && !read[i] && !before[i].second) {  // (an int16 output the spec asks for stays)
      return undo("layer '" + L.name + "' (" + L.kind->name + ") gives the model's output, which would become int16");
    }
  }
  return true;
}

}  // namespace convert
}  // namespace edgeattn
