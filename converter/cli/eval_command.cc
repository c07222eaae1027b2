// `edgeattn-convert eval`: every layer of a model through the runtime on a
// reference file's inputs, against its outputs (and attention weights, when
// the file has them); timing, heatmap, JSON, dumped outputs, accuracy gates.
#include <algorithm>
#include <cstdio>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/eval/metrics.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/io/npy.h"
#include "converter/kinds/kind.h"
#include "converter/model/dataset.h"
#include "converter/report/report.h"
#include "converter/report/eval_heatmap.h"
#include "converter/report/tokens.h"

namespace edgeattn {
namespace convert {
namespace {

void write_text(const std::string& path, const std::string& text) {
  write_file_atomic(path, text.data(), text.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char* layer_dtype(const Model& m, int i) {
  LayerInfo info;
  m.GetLayerInfo(i, &info);
  return info.dtype == EA_S8 ? "int8" : "f32";
}

// --dump-outputs: the runtime's outputs of layer L as float32 arrays named
// like the reference's keys, "L.output" [N, Lq, Dout] and (layers with
// attention maps) "L.attn_weights" [N, H, Lq, Lk], so a user's own metrics can
// read both files the same way.
void add_dumped_outputs(const FloatLayer& L, const LayerData& d, const RunResult& run,
                        std::vector<std::pair<std::string, Array>>* dumped) {
  auto add = [&](const std::string& key, std::vector<size_t> shape, const std::vector<double>& values) {
    Array a;
    a.dtype = "<f4";
    a.shape = std::move(shape);
    if (a.numel() != values.size()) {
      fail("layer '", L.name, "': the runtime returned ", values.size(), " values for '", key, "', expected ",
           a.numel());
    }
    a.data = values;
    dumped->emplace_back(key, std::move(a));
  };
  const size_t n = static_cast<size_t>(d.n), lq = static_cast<size_t>(d.lq), lk = static_cast<size_t>(d.lk);
  add(L.name + ".output", {n, static_cast<size_t>(L.output_rows(d.lq)), static_cast<size_t>(L.output_dim)},
      run.output);
  if (L.heads() > 0) add(L.name + ".attn_weights", {n, static_cast<size_t>(L.heads()), lq, lk}, run.weights);
}

}  // namespace

void run_eval(const EvalOptions& o, std::ostream& out) {
  const std::vector<uint8_t> bytes = read_file(o.model);
  const LoadedModel lm(bytes, o.model);
  const Model& model = lm.model();
  ArrayMap ref = load_data_npz(o.reference, "reference data (--reference)");
  std::vector<std::string> layer_names;
  for (int i = 0; i < model.num_layers(); ++i) layer_names.push_back(layer_shell(model, i).name);
  rename_data_keys(&ref, o.reference, parse_data_keys(o.data_keys), layer_names);
  const ea_range_policy range_policy = parse_range_mode(o.range_mode);
  std::vector<LayerResult> results;
  std::vector<std::pair<std::string, Array>> dumped;  // --dump-outputs
  if (!o.dump_outputs.empty()) check_writable(o.dump_outputs);
  bool svg_done = false;
  if (!o.svg_layer.empty() && model.FindLayer(o.svg_layer.c_str()) < 0) {
    fail(o.model, ": no layer named '", o.svg_layer, "' (--svg-layer)");
  }
  // --tokens: the vocabulary, and the ids from --token-ids or the reference.
  if (!o.token_ids.empty() && o.tokens.empty()) fail("--token-ids needs --tokens VOCAB.txt (the labels of the ids)");
  if (!o.tokens.empty() && o.svg.empty()) fail("--tokens labels the heatmap's axes: it needs --svg FILE");
  const std::vector<std::string> vocab = o.tokens.empty() ? std::vector<std::string>() : read_vocabulary(o.tokens);
  const std::string ids_path = o.token_ids.empty() ? o.reference : o.token_ids;
  const ArrayMap token_ids = o.token_ids.empty() ? ArrayMap() : load_data_npz(o.token_ids, "token ids (--token-ids)");
  const ArrayMap& ids = o.token_ids.empty() ? ref : token_ids;
  out << "edgeattn-convert eval: " << o.model << " on " << o.reference << " (" << o.repeat << " repeats)\n";
  for (int i = 0; i < model.num_layers(); ++i) {
    const FloatLayer shell = layer_shell(model, i);
    LayerResult lr;
    lr.name = shell.name;
    lr.kind = shell.kind->name;
    lr.has_weights = shell.heads() > 0;
    lr.dtype = layer_dtype(model, i);
    LayerInfo info;
    model.GetLayerInfo(i, &info);
    lr.arena_bytes = info.arena_bytes;
    lr.coverage_bytes = info.coverage_bytes;
    if (ref.count(shell.name + ".output") == 0) {
      out << "  " << shell.name << ": no reference data in " << o.reference << ", skipped\n";
      continue;
    }
    const LayerData d = load_layer_data(ref, o.reference, shell, true);
    const RunResult run = run_layer(lm, i, d, o.repeat, range_policy);
    // Attention weights are compared only when the reference file has them.
    lr.has_weights = shell.heads() > 0 && !d.ref_weights.empty();
    lr.weights_skipped = shell.heads() > 0 && d.ref_weights.empty();
    if (!o.dump_outputs.empty()) add_dumped_outputs(shell, d, run, &dumped);
    lr.metrics = compare(shell, d, run.output, d.ref_output, run.weights, d.ref_weights);
    lr.has_metrics = true;
    lr.samples = d.n;
    lr.has_latency = true;
    lr.repeat = static_cast<int>(run.set_us.size());
    lr.set_median_us = median(run.set_us);
    lr.set_min_us = *std::min_element(run.set_us.begin(), run.set_us.end());
    lr.sample_median_us = lr.set_median_us / std::max(d.n, 1);
    lr.sample_min_us = lr.set_min_us / std::max(d.n, 1);
    results.push_back(lr);

    // The heatmap: the named layer, or the first with attention weights.
    const bool want_svg = !o.svg.empty() && !svg_done &&
                          (o.svg_layer.empty() ? shell.heads() > 0 : o.svg_layer == shell.name);
    if (want_svg) {
      HeatmapSource src;
      src.model_path = o.model;
      src.reference_path = o.reference;
      src.tokens_path = o.tokens;
      src.ids_path = ids_path;
      const auto* prod = model.flatbuffer()->producer();
      src.producer = prod && prod->source() ? prod->source()->str() : "";
      src.vocab = &vocab;
      src.ids = &ids;
      const Heatmap hm = eval_heatmap(src, shell, lr.dtype, d, run, o.svg_sample, o.svg_head);
      write_text(o.svg, heatmap_svg(hm));
      svg_done = true;
    }
  }
  // Nothing compared is a failure, not an empty success: the reference file
  // holds no '<layer>.output' for any layer of the model.
  if (results.empty()) {
    std::string layers, keys;
    for (int i = 0; i < model.num_layers(); ++i) layers += (i ? ", " : "") + layer_shell(model, i).name;
    for (const auto& kv : ref) {
      if (kv.first.size() > 7 && kv.first.compare(kv.first.size() - 7, 7, ".output") == 0) {
        keys += (keys.empty() ? "" : ", ") + kv.first;
      }
    }
    fail(o.reference, ": no layer of ", o.model, " was compared: no '<layer>.output' for its layers (", layers,
         "); the file has ", keys.empty() ? std::string("no '*.output' key") : keys,
         " (is it the reference file of another model?)");
  }
  print_layer_table(results, out);
  // Quality gates (--max-rel-l2, --min-cosine): every failing layer in one line.
  const bool gated = o.max_rel_l2 >= 0.0 || o.min_cosine > -2.0;
  std::string worse;
  if (gated) {
    for (const LayerResult& l : results) {
      char buf[256];
      if (l.metrics.indices) continue;  // class indices (argmax): agreement, no error figure to gate
      if (o.max_rel_l2 >= 0.0 && !(l.metrics.rel_l2 <= o.max_rel_l2)) {
        std::snprintf(buf, sizeof buf, "%slayer '%s': relative L2 %.4g > --max-rel-l2 %.10g",
                      worse.empty() ? "" : "; ", l.name.c_str(), l.metrics.rel_l2, o.max_rel_l2);
        worse += buf;
      }
      if (o.min_cosine > -2.0 && !(l.metrics.cosine >= o.min_cosine)) {
        std::snprintf(buf, sizeof buf, "%slayer '%s': cosine %.6f < --min-cosine %.10g",
                      worse.empty() ? "" : "; ", l.name.c_str(), l.metrics.cosine, o.min_cosine);
        worse += buf;
      }
    }
  }
  if (!o.svg.empty()) {
    if (!svg_done) fail(o.reference, ": no data for the --svg layer");
    out << "wrote " << o.svg << "\n";
  }
  if (!o.dump_outputs.empty()) {
    const std::vector<uint8_t> npz = make_npz(dumped, o.dump_outputs);
    write_file_atomic(o.dump_outputs, npz.data(), npz.size());
    out << "wrote " << o.dump_outputs << " (" << dumped.size() << " arrays)\n";
  }
  if (!o.json.empty()) {
    nlohmann::json j = {{"model", o.model}, {"reference", o.reference}, {"layers", nlohmann::json::array()}};
    for (const LayerResult& l : results) j["layers"].push_back(layer_json(l));
    write_text(o.json, j.dump(2) + "\n");
  }
  if (!worse.empty()) fail(o.model, ": below the accuracy gate: ", worse);
  if (gated) {
    out << "accuracy gate passed (" << results.size() << (results.size() == 1 ? " layer" : " layers");
    if (o.max_rel_l2 >= 0.0) out << ", relative L2 <= " << o.max_rel_l2;
    if (o.min_cosine > -2.0) out << ", cosine >= " << o.min_cosine;
    out << ")\n";
  }
}

}  // namespace convert
}  // namespace edgeattn
