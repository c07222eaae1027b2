#include "converter/eval/classify.h"

#include <cstdint>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/eval/runner.h"

namespace edgeattn {
namespace convert {
namespace {

const Array& get(const ArrayMap& m, const std::string& key, const std::string& path) {
  const auto it = m.find(key);
  if (it == m.end()) fail(path, ": missing tensor '", key, "'");
  return it->second;
}

}  // namespace

double run_classify(const ClassifyOptions& o, std::ostream& out) {
  const std::vector<uint8_t> bytes = read_file(o.model);
  const LoadedModel lm(bytes, o.model);
  const Model& model = lm.model();
  int layer = -1;
  for (int i = 0; i < model.num_layers() && layer < 0; ++i) {
    LayerInfo info;
    model.GetLayerInfo(i, &info);
    const bool named = !o.layer.empty() && o.layer == info.name;
    if (named || (o.layer.empty() && info.kind == EA_LAYER_POOLING)) layer = i;
  }
  if (layer < 0) fail(o.model, ": no pooling layer", o.layer.empty() ? "" : " named '" + o.layer + "'");
  LayerInfo info;
  model.GetLayerInfo(layer, &info);
  if (info.kind != EA_LAYER_POOLING) fail(o.model, ": layer '", info.name, "' is not attention pooling");

  const ArrayMap data = load_data_npz(o.data, "task data (--data)");
  const Array& key = get(data, "key", o.data);
  const Array& valid = get(data, "kv_valid_len", o.data);
  const Array& labels = get(data, "labels", o.data);
  if (key.shape.size() != 3 || static_cast<int>(key.shape[2]) != info.key_dim ||
      valid.numel() != key.shape[0] || labels.numel() != key.shape[0]) {
    fail(o.data, ": 'key' must be [N, L, ", info.key_dim, "] with N kv_valid_len and labels, got ",
         shape_string(key.shape));
  }
  const ArrayMap weights = load_weights(o.weights);
  const Array& w = get(weights, o.head + ".weight", o.weights);
  const Array& b = get(weights, o.head + ".bias", o.weights);
  const size_t dim = static_cast<size_t>(info.key_dim);
  if (w.shape.size() != 2 || w.shape[1] != dim || b.numel() != w.shape[0]) {
    fail(o.weights, ": '", o.head, ".weight' must be [C, ", dim, "], got ", shape_string(w.shape));
  }
  const size_t classes = w.shape[0];

  LayerData d;
  d.n = static_cast<int>(key.shape[0]);
  d.lq = 1;
  d.lk = static_cast<int>(key.shape[1]);
  d.key = key.data;
  for (double v : valid.data) d.valid.push_back(static_cast<int>(v));
  const RunResult run = run_layer(lm, layer, d, 1);

  int correct = 0;
  for (int i = 0; i < d.n; ++i) {
    const double* pooled = run.output.data() + static_cast<size_t>(i) * dim;
    size_t best = 0;
    double best_logit = 0.0;
    for (size_t c = 0; c < classes; ++c) {
      double logit = b.data[c];
      for (size_t k = 0; k < dim; ++k) logit += w.data[c * dim + k] * pooled[k];
      if (c == 0 || logit > best_logit) {
        best = c;
        best_logit = logit;
      }
    }
    if (static_cast<double>(best) == labels.data[static_cast<size_t>(i)]) ++correct;
  }
  const double accuracy = static_cast<double>(correct) / d.n;
  out << o.model << ": layer '" << info.name << "' (" << (info.dtype == EA_S8 ? "int8" : "f32")
      << ") + float head '" << o.head << "': accuracy " << accuracy << " (" << correct << " of "
      << d.n << " held-out sequences)\n";
  return accuracy;
}

}  // namespace convert
}  // namespace edgeattn
