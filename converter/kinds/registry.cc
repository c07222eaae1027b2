// The converter's table of layer kinds, made from the one list
// (edgeattn/layer_kinds.def): kind <name>'s module is kinds::kind_<name>
// (converter/kinds/<name>.cc).
#include <algorithm>

#include "converter/base/error.h"
#include "converter/kinds/kind.h"
#include "converter/quantize/block_quant.h"

namespace edgeattn {
namespace convert {

const std::vector<const KindModule*>& all_kinds() {
  static const std::vector<const KindModule*> table = {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) &kinds::kind_##name,
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
  };
  return table;
}

const KindModule* find_kind(const std::string& name) {
  for (const KindModule* k : all_kinds()) {
    if (name == k->name) return k;
  }
  return nullptr;
}

const KindModule* find_kind(ea_layer_kind kind) {
  for (const KindModule* k : all_kinds()) {
    if (k->runtime_kind == kind) return k;
  }
  return nullptr;
}

const KindModule* find_kind(fb::LayerOptions options) {
  for (const KindModule* k : all_kinds()) {
    if (k->options == options) return k;
  }
  return nullptr;
}

std::string kind_names() {
  std::string s;
  const auto& t = all_kinds();
  for (size_t i = 0; i < t.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == t.size() ? " or " : ", ") + std::string(t[i]->name);
  }
  return s;
}

RangeMap sub_ranges(const RangeMap& ranges, const std::string& prefix) {
  RangeMap sub;
  for (const auto& [key, r] : ranges) {
    if ((r.keep_values || r.keep_columns) && key.compare(0, prefix.size(), prefix) == 0) {
      Range& s = sub[key.substr(prefix.size())];
      s.keep_values = r.keep_values;
      s.keep_columns = r.keep_columns;
    }
  }
  return sub;
}

void merge_ranges(const RangeMap& from, const std::string& prefix, RangeMap* into) {
  for (const auto& [key, r] : from) {
    Range& t = (*into)[prefix + key];
    if (r.count == 0) continue;
    t.lo = std::min(t.lo, r.lo);
    t.hi = std::max(t.hi, r.hi);
    t.count += r.count;
    if (t.keep_values) t.values.insert(t.values.end(), r.values.begin(), r.values.end());
    if (t.keep_columns) {
      if (t.column_absmax.size() < r.column_absmax.size()) t.column_absmax.resize(r.column_absmax.size(), 0.0);
      for (size_t c = 0; c < r.column_absmax.size(); ++c) t.column_absmax[c] = std::max(t.column_absmax[c], r.column_absmax[c]);
    }
  }
}

const Range& Calibrated::range(const std::string& key) const {
  auto it = r.find(prefix + key);
  if (it == r.end()) fail(where, ": no calibration data for ", prefix + key);
  return it->second;
}

ActQuantParams Calibrated::operator()(const std::string& key) const {
  const ActQuantParams q = act_quant(range(key), where + ": " + prefix + key);
  if (used != nullptr) {
    PointQuant& u = (*used)[prefix + key];
    u.int8 = true;
    u.q8 = q;
  }
  return q;
}

ActQuantParams Calibrated::s16(const std::string& key) const {
  const ActQuantParams q = stream16_quant(range(key), where + ": " + prefix + key);
  if (used != nullptr) {
    PointQuant& u = (*used)[prefix + key];
    u.int16 = true;
    u.q16 = q;
  }
  return q;
}

ActQuantParams Calibrated::activation_input(const std::string& key, Activation act,
                                            const ActQuantParams& act_out) const {
  const ActQuantParams q = activation_input_quant(act, (*this)(key), act_out);
  if (used != nullptr) (*used)[prefix + key].q8 = q;
  return q;
}

LayerIo FloatLayer::io() const {
  if (kind == nullptr) throw std::logic_error("layer '" + name + "' has no kind");
  return kind->io(*this);
}

bool FloatLayer::learned_query() const {
  if (kind == nullptr) throw std::logic_error("layer '" + name + "' has no kind");
  return kind->learned_query;
}

}  // namespace convert
}  // namespace edgeattn
