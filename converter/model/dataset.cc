#include "converter/model/dataset.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "converter/kinds/kind.h"
#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {
namespace {

// Map: ArrayMap, or const ArrayMap (then the result is const).
template <class Map>
auto find(Map& npz, const std::string& key) -> decltype(&npz.begin()->second) {
  auto it = npz.find(key);
  return it == npz.end() ? nullptr : &it->second;
}

template <class Map>
auto require(Map& npz, const std::string& path, const std::string& key, const std::string& why)
    -> decltype(*find(npz, key)) {
  auto* a = find(npz, key);
  if (a == nullptr) fail(path, ": missing key '", key, "' (", why, ")");
  return *a;
}

// Dimension i of `a` as an int; an untrusted file may declare any size_t.
int dim_int(const Array& a, size_t i, const std::string& path, const std::string& key) {
  if (a.shape[i] > static_cast<size_t>(INT_MAX)) {
    fail(path, ": key '", key, "' has shape ", shape_string(a.shape), ": dimension ", i,
         " is too large (above ", INT_MAX, ")");
  }
  return static_cast<int>(a.shape[i]);
}

// A float [N, L, D] array; D must equal dim. N and L must fit in an int and
// the data must hold N * L * D values.
void check_3d(const Array& a, const std::string& path, const std::string& key, int dim) {
  if (!a.is_float) fail(path, ": key '", key, "' has dtype ", a.dtype, ", expected float16/32/64");
  if (a.shape.size() != 3) {
    fail(path, ": key '", key, "' has shape ", shape_string(a.shape), ", expected [N, L, ", dim, "]");
  }
  if (a.shape[0] == 0 || a.shape[1] == 0) {
    fail(path, ": key '", key, "' is empty (shape ", shape_string(a.shape), ")");
  }
  if (a.shape[2] != static_cast<size_t>(dim)) {
    fail(path, ": key '", key, "' has shape ", shape_string(a.shape), ", expected last dimension ", dim);
  }
  dim_int(a, 0, path, key);
  dim_int(a, 1, path, key);
  if (a.data.size() != checked_numel(a.shape, path + ": key '" + key + "'")) {
    fail(path, ": key '", key, "' holds ", a.data.size(), " values for shape ", shape_string(a.shape));
  }
  size_t finite = 0;
  size_t first_bad = a.data.size();
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (std::isfinite(a.data[i])) {
      ++finite;
    } else if (first_bad == a.data.size()) {
      first_bad = i;
    }
  }
  if (finite == 0) fail(path, ": key '", key, "' has no finite values (all NaN/Inf)");
  if (first_bad != a.data.size()) {
    fail(path, ": key '", key, "' has a non-finite value (", a.data[first_bad], ") at index ", first_bad);
  }
}

// Token ids (a kind with KindModule::input_range): an integer [N, L] or
// [N, L, 1] array whose every value is in 0..range-1.
void check_ids(const Array& a, const std::string& path, const std::string& key, int range) {
  if (a.is_float) {
    fail(path, ": key '", key, "' has dtype ", a.dtype, ": token ids must be an integer array (int32 [N, L])");
  }
  const bool shape_ok = (a.shape.size() == 2 || (a.shape.size() == 3 && a.shape[2] == 1)) && a.shape[0] > 0 &&
                        a.shape[1] > 0;
  if (!shape_ok) fail(path, ": key '", key, "' has shape ", shape_string(a.shape), ", expected token ids [N, L]");
  dim_int(a, 0, path, key);
  dim_int(a, 1, path, key);
  if (a.data.size() != checked_numel(a.shape, path + ": key '" + key + "'")) {
    fail(path, ": key '", key, "' holds ", a.data.size(), " values for shape ", shape_string(a.shape));
  }
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (!(a.data[i] >= 0 && a.data[i] < range)) {
      fail(path, ": key '", key, "': token id ", a.data[i], " (sample ", i / a.shape[1], ", row ", i % a.shape[1],
           ") is outside 0..", range - 1);
    }
  }
}

}  // namespace

SampleInput LayerData::sample(const FloatLayer& layer, int i) const {
  SampleInput s;
  const size_t si = static_cast<size_t>(i);
  if (!query.empty()) s.query = query.data() + si * static_cast<size_t>(lq) * layer.query_dim;
  if (!key.empty()) s.key = key.data() + si * static_cast<size_t>(lk) * layer.key_dim;
  if (!value.empty()) s.value = value.data() + si * static_cast<size_t>(lk) * layer.value_dim;
  s.q_len = lq;
  s.kv_len = lk;
  s.valid = valid[si];
  return s;
}

namespace {

// The arrays of `npz` are moved into the LayerData when Map is a non-const
// ArrayMap (take_layer_data), copied when it is const (std::move of a const
// vector copies it): one body for both.
template <class Map>
LayerData read_layer_data(Map& npz, const std::string& path, const FloatLayer& L, bool with_reference) {
  const std::string p = L.name + ".";
  LayerData d;
  const LayerIo io = L.io();
  if (!L.learned_query()) {
    auto& q = require(npz, path, p + "query", "inputs of layer '" + L.name + "'");
    if (L.kind->input_range != nullptr) {
      check_ids(q, path, p + "query", L.kind->input_range(L));
    } else {
      check_3d(q, path, p + "query", L.query_dim);
    }
    d.n = dim_int(q, 0, path, p + "query");
    d.lq = dim_int(q, 1, path, p + "query");
    d.lk = d.lq;
    d.query = std::move(q.data);
  } else {
    d.lq = 1;
  }
  if (io.keys) {
    auto& k = require(npz, path, p + "key", "keys of layer '" + L.name + "'");
    check_3d(k, path, p + "key", L.key_dim);
    if (L.learned_query()) d.n = dim_int(k, 0, path, p + "key");
    if (dim_int(k, 0, path, p + "key") != d.n) {
      fail(path, ": key '", p, "key' has ", k.shape[0], " samples, '", p, "query' has ", d.n);
    }
    d.lk = dim_int(k, 1, path, p + "key");
    d.key = std::move(k.data);
    if (auto* v = find(npz, p + "value")) {
      check_3d(*v, path, p + "value", L.value_dim);
      if (v->shape[0] != k.shape[0] || v->shape[1] != k.shape[1]) {
        fail(path, ": key '", p, "value' has shape ", shape_string(v->shape), ", keys are ",
             shape_string(k.shape));
      }
      d.value = std::move(v->data);
    } else if (L.value_dim != L.key_dim) {
      fail(path, ": missing key '", p, "value' (value_dim ", L.value_dim, " != key_dim ", L.key_dim, ")");
    }
  }
  if (d.lq > L.max_q_len || d.lk > L.max_kv_len) {
    fail(path, ": layer '", L.name, "' inputs have q_len ", d.lq, " / kv_len ", d.lk,
         ", above max_q_len ", L.max_q_len, " / max_kv_len ", L.max_kv_len,
         " (raise them in the spec or with --max-q-len/--max-kv-len)");
  }
  d.valid.assign(static_cast<size_t>(d.n), -1);
  if (const auto* v = find(npz, p + "kv_valid_len"); v != nullptr && L.mask == MaskKind::kKeyPadding) {
    if (v->is_float || v->shape.size() != 1 || v->shape[0] != static_cast<size_t>(d.n)) {
      fail(path, ": key '", p, "kv_valid_len' must be an integer array [", d.n, "], got ", v->dtype,
           " ", shape_string(v->shape));
    }
    for (int i = 0; i < d.n; ++i) {
      const double x = v->data[static_cast<size_t>(i)];
      if (x < 0 || x > d.lk) fail(path, ": key '", p, "kv_valid_len'[", i, "] = ", x, " is outside 0..", d.lk);
      d.valid[static_cast<size_t>(i)] = static_cast<int>(x);
    }
  }
  if (with_reference) {
    auto& o = require(npz, path, p + "output", "reference output");
    const std::vector<size_t> oshape = {static_cast<size_t>(d.n), static_cast<size_t>(L.output_rows(d.lq)),
                                        static_cast<size_t>(L.output_dim)};
    if (o.shape != oshape) {
      fail(path, ": key '", p, "output' has shape ", shape_string(o.shape), ", expected ", shape_string(oshape));
    }
    d.ref_output = std::move(o.data);
  }
  // Attention weights are optional: many PyTorch models do not return them
  // (need_weights=False, fused attention), and the outputs alone are what a
  // user ships. Kinds without attention weights have none to compare.
  if (with_reference && io.heads > 0 && npz.count(p + "attn_weights") != 0) {
    auto& w = npz.at(p + "attn_weights");
    const std::vector<size_t> wshape = {static_cast<size_t>(d.n), static_cast<size_t>(L.heads()),
                                        static_cast<size_t>(d.lq), static_cast<size_t>(d.lk)};
    if (w.shape != wshape) {
      // [N, Lq, Lk] for a multi-head layer: weights averaged over the heads.
      const bool averaged = L.heads() > 1 && w.shape.size() == 3 && w.shape[0] == wshape[0] &&
                            w.shape[1] == wshape[2] && w.shape[2] == wshape[3];
      fail(path, ": key '", p, "attn_weights' has shape ", shape_string(w.shape), ", expected ",
           shape_string(wshape),
           averaged ? " (weights averaged over the heads? eval needs them per head: "
                      "nn.MultiheadAttention(...)(q, k, v, need_weights=True, average_attn_weights=False))"
                    : "");
    }
    d.ref_weights = std::move(w.data);
  }
  return d;
}

}  // namespace

LayerData load_layer_data(const ArrayMap& npz, const std::string& path, const FloatLayer& L,
                          bool with_reference) {
  return read_layer_data(npz, path, L, with_reference);
}

LayerData take_layer_data(ArrayMap* npz, const std::string& path, const FloatLayer& L, bool with_reference) {
  return read_layer_data(*npz, path, L, with_reference);
}

LayerData slice_samples(const LayerData& d, int first, int count) {
  LayerData s;
  s.n = count;
  s.lq = d.lq;
  s.lk = d.lk;
  // Every per-sample array is [n][...]: cut it at sample boundaries.
  auto cut = [&](const auto& v, auto* out) {
    if (v.empty()) return;
    const size_t per = v.size() / static_cast<size_t>(d.n);
    out->assign(v.begin() + static_cast<long>(per * first), v.begin() + static_cast<long>(per * (first + count)));
  };
  cut(d.query, &s.query);
  cut(d.key, &s.key);
  cut(d.value, &s.value);
  cut(d.valid, &s.valid);
  cut(d.ref_output, &s.ref_output);
  cut(d.ref_weights, &s.ref_weights);
  return s;
}

void split_heldout(const LayerData& d, double fraction, const std::string& what, LayerData* calib,
                   LayerData* heldout) {
  if (!(fraction > 0.0 && fraction < 1.0)) fail("--heldout-split must be in (0, 1), got ", fraction);
  if (d.n < 2) fail(what, ": ", d.n, " sample cannot be split into calibration and held-out data");
  const int held = std::clamp(static_cast<int>(std::lround(fraction * d.n)), 1, d.n - 1);
  *calib = slice_samples(d, 0, d.n - held);
  *heldout = slice_samples(d, d.n - held, held);
}

LayerData chained_layer_data(const FloatLayer& source, const LayerData& in, const FloatLayer& consumer) {
  LayerData d;
  d.n = in.n;
  d.lq = source.output_rows(in.lq);
  d.lk = d.lq;  // a chained layer's keys, if any, are its query rows
  // Valid rows carry over (a padded sequence stays padded, rows the source
  // prepends are valid); one pooled row is all valid.
  d.valid.assign(static_cast<size_t>(d.n), -1);
  if (!source.learned_query()) {
    for (int i = 0; i < d.n; ++i) {
      const int v = in.valid[static_cast<size_t>(i)];
      d.valid[static_cast<size_t>(i)] = v >= 0 ? v + source.added_rows : -1;
    }
  }
  d.query.resize(static_cast<size_t>(d.n) * d.lq * source.output_dim);
  const size_t per = static_cast<size_t>(d.lq) * source.output_dim;
  for (int i = 0; i < in.n; ++i) {
    forward(source, in.sample(source, i), d.query.data() + static_cast<size_t>(i) * per, nullptr, nullptr);
  }
  if (consumer.learned_query()) {  // the rows are the keys it pools (row_pool, pooling)
    d.key = std::move(d.query);
    d.query.clear();
    d.lq = 1;
  }
  return d;
}

void chain_memory_data(const FloatLayer& source, const LayerData& in, const FloatLayer& consumer, LayerData* d) {
  if (in.n != d->n) {
    fail("layer '", consumer.name, "' has ", d->n, " samples, its memory '", source.name, "' ", in.n,
         ": one sample of each per sequence");
  }
  d->lk = source.output_rows(in.lq);
  const size_t per = static_cast<size_t>(d->lk) * source.output_dim;
  d->key.resize(static_cast<size_t>(d->n) * per);
  d->value.clear();  // value = key
  d->valid.assign(static_cast<size_t>(d->n), -1);
  for (int i = 0; i < in.n; ++i) {
    forward(source, in.sample(source, i), d->key.data() + static_cast<size_t>(i) * per, nullptr, nullptr);
    const int v = in.valid[static_cast<size_t>(i)];
    d->valid[static_cast<size_t>(i)] = v >= 0 ? v + source.added_rows : -1;
  }
}

std::vector<DataKey> parse_data_keys(const std::vector<std::string>& args) {
  std::vector<DataKey> keys;
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    const size_t dot = eq == std::string::npos ? eq : a.find('.', eq + 1);
    if (eq == 0 || dot == std::string::npos || dot == eq + 1 || dot + 1 == a.size()) {
      fail("--data-key '", a, "': expected FILE_KEY=LAYER.WHAT, e.g. x=embed.query (the file's 'x' is layer ",
           "'embed''s query rows) or logits=head.output");
    }
    keys.push_back({a.substr(0, eq), a.substr(eq + 1)});
  }
  return keys;
}

void rename_data_keys(ArrayMap* npz, const std::string& path, const std::vector<DataKey>& keys,
                      const std::vector<std::string>& layer_names) {
  for (const DataKey& k : keys) {
    const std::string layer = k.key.substr(0, k.key.find('.'));
    if (std::find(layer_names.begin(), layer_names.end(), layer) == layer_names.end()) {
      fail("--data-key ", k.file_key, "=", k.key, ": the model has no layer '", layer, "'");
    }
    auto it = npz->find(k.file_key);
    if (it == npz->end()) {
      std::string have;
      for (const auto& e : *npz) have += (have.empty() ? "" : ", ") + e.first;
      fail(path, ": --data-key ", k.file_key, "=", k.key, ": the file has no key '", k.file_key, "' (it has: ", have,
           ")");
    }
    if (npz->count(k.key) != 0) {
      fail(path, ": --data-key ", k.file_key, "=", k.key, ": the file has both '", k.file_key, "' and '", k.key,
           "'; one of them would be ignored");
    }
    Array a = std::move(it->second);
    npz->erase(it);
    npz->emplace(k.key, std::move(a));
  }
}

std::vector<LayerData> load_model_data(const std::string& path, const std::string& what,
                                       const std::vector<FloatLayer>& layers, const std::vector<DataKey>& keys) {
  ArrayMap npz = load_data_npz(path, what);
  std::vector<std::string> names;
  for (const FloatLayer& L : layers) names.push_back(L.name);
  rename_data_keys(&npz, path, keys, names);
  std::vector<LayerData> data;
  for (const FloatLayer& L : layers) {
    if (L.input_layer >= 0) {  // made from the earlier layer's float64 outputs
      const size_t src = static_cast<size_t>(L.input_layer);
      // Inputs the file gives for it would be ignored: an error. Its
      // reference outputs (L.output, L.labels, ...) are ignored as every
      // layer's are, so one reference file serves --heldout and eval.
      for (const char* input : {"query", "key", "value", "kv_valid_len"}) {
        const std::string key = L.name + "." + input;
        if (npz.count(key) != 0) {
          fail(path, ": '", key, "' is not read: layer '", L.name, "' is chained (\"input\": \"",
               layers[src].name, "\"), its inputs come from '", layers[src].name,
               "''s float64 outputs; remove it from the file");
        }
      }
      data.push_back(chained_layer_data(layers[src], data[src], L));
    } else {
      data.push_back(take_layer_data(&npz, path, L, false));
    }
    if (L.memory_layer >= 0) {  // keys and values: the earlier layer's float64 outputs
      const size_t m = static_cast<size_t>(L.memory_layer);
      chain_memory_data(layers[m], data[m], L, &data.back());
    }
  }
  return data;
}

}  // namespace convert
}  // namespace edgeattn
