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

// The index of the largest value in [p, p + n).
int top_index(const double* p, int n) { return static_cast<int>(std::max_element(p, p + n) - p); }

// A model with a graph whose reference holds the model's input rows (the
// input layer's L.query, or L.key when it pools its rows) and the last
// step's output: every sample through one Invoke, compared like a layer
// (row "model", kind "graph") and, for float outputs of several columns, the
// top-1 agreement of each output row with the reference's.
void eval_whole_model(const EvalOptions& o, const LoadedModel& lm, const ArrayMap& ref,
                      std::vector<LayerResult>* results, std::vector<std::pair<std::string, Array>>* dumped,
                      std::ostream& out) {
  const Model& model = lm.model();
  int input_layer = -1, memory_layer = -1;
  for (int s = 0; s < model.num_steps(); ++s) {
    if (model.step(s)->query() == -1 && input_layer < 0) input_layer = static_cast<int>(model.step(s)->layer());
    if (model.step(s)->memory() == -2 && memory_layer < 0) memory_layer = static_cast<int>(model.step(s)->layer());
  }
  GraphInfo g;
  model.GetGraphInfo(&g);
  const FloatLayer in_shell = layer_shell(model, input_layer);
  const FloatLayer out_shell = layer_shell(model, g.output_layer);
  const std::string in_key = in_shell.name + (in_shell.learned_query() ? ".key" : ".query");
  const std::string out_key = out_shell.name + ".output";
  if (ref.count(in_key) == 0 || ref.count(out_key) == 0) {
    out << "  whole model: " << o.reference << " has no '" << (ref.count(in_key) ? out_key : in_key)
        << "' (the model's " << (ref.count(in_key) ? "output" : "input rows") << "), not compared\n";
    return;
  }
  const LayerData input = load_layer_data(ref, o.reference, in_shell, false);
  LayerData memory;
  if (memory_layer >= 0) {
    memory = memory_layer == input_layer ? input
                                         : load_layer_data(ref, o.reference, layer_shell(model, memory_layer), false);
  }
  const RunResult run = run_model(lm, input, memory_layer >= 0 ? &memory : nullptr, o.repeat);
  const size_t per = run.output.size() / static_cast<size_t>(std::max(input.n, 1));
  const int out_rows = static_cast<int>(per / static_cast<size_t>(g.output_dim));
  const Array& expected = ref.at(out_key);
  if (expected.numel() != run.output.size()) {
    fail(o.reference, ": '", out_key, "' has ", expected.numel(), " values, the model gives ", input.n, " x ", out_rows,
         " x ", g.output_dim, " (samples x rows x columns) for its inputs");
  }
  // Output rows that stand for padded input rows (a sequence model's output,
  // its rows those of the input plus any class rows) are meaningless: they
  // are left out, as zeros on both sides.
  if (!o.dump_outputs.empty()) {  // the model's output, under its output layer's key, as float32
    Array a;
    a.dtype = "<f4";
    a.shape = {static_cast<size_t>(input.n), static_cast<size_t>(out_rows), static_cast<size_t>(g.output_dim)};
    a.data = run.output;
    dumped->emplace_back(out_key, std::move(a));
  }
  std::vector<double> got = run.output, want = expected.data;
  const int in_rows = input.query.empty() ? input.lk : input.lq;
  const int added = out_rows - in_rows;
  size_t padded = 0;
  std::vector<char> is_padded(static_cast<size_t>(input.n) * out_rows, 0);
  for (int i = 0; i < input.n && added >= 0; ++i) {
    const int v = input.valid[static_cast<size_t>(i)];
    if (v < 0 || v >= in_rows) continue;
    for (int r = v + added; r < out_rows; ++r, ++padded) {
      is_padded[static_cast<size_t>(i) * out_rows + r] = 1;
      const size_t base = (static_cast<size_t>(i) * out_rows + r) * g.output_dim;
      std::fill_n(got.begin() + base, g.output_dim, 0.0);
      std::fill_n(want.begin() + base, g.output_dim, 0.0);
    }
  }
  LayerData cmp;  // the output rows as the last layer's
  cmp.n = input.n;
  cmp.lq = out_shell.learned_query() ? 1 : out_rows - out_shell.added_rows;
  cmp.valid.assign(static_cast<size_t>(input.n), -1);
  LayerResult lr;
  lr.name = "model";
  lr.kind = "graph";
  lr.dtype = g.dtype == EA_S8 ? "int8" : "f32";
  lr.has_weights = false;
  lr.arena_bytes = model.arena_bytes();
  lr.metrics = compare(out_shell, cmp, got, want, {}, {});
  lr.metrics.rows -= padded;
  lr.has_metrics = true;
  lr.samples = input.n;
  lr.has_latency = true;
  lr.repeat = static_cast<int>(run.set_us.size());
  lr.set_median_us = median(run.set_us);
  lr.set_min_us = *std::min_element(run.set_us.begin(), run.set_us.end());
  lr.sample_median_us = lr.set_median_us / std::max(input.n, 1);
  lr.sample_min_us = lr.set_min_us / std::max(input.n, 1);
  // Top-1 of float outputs of several columns against the reference's and,
  // when the reference has '<output layer>.labels' (a class per output row),
  // against the labels: the task accuracy of the model and of the reference.
  const std::string labels_key = out_shell.name + ".labels";
  const Array* labels = ref.count(labels_key) != 0 ? &ref.at(labels_key) : nullptr;
  if (labels != nullptr && (labels->is_float || labels->numel() != is_padded.size())) {
    fail(o.reference, ": '", labels_key, "' must be an integer array with a class per output row (", input.n, " x ",
         out_rows, " values), got ", labels->dtype, " ", shape_string(labels->shape));
  }
  if (g.output_dtype != EA_S32 && g.output_dim > 1) {
    lr.has_top1 = true;
    if (labels != nullptr) lr.labels = labels_key;
    for (size_t r = 0; r < is_padded.size(); ++r) {
      if (is_padded[r]) continue;
      const size_t base = r * static_cast<size_t>(g.output_dim);
      const int mine = top_index(got.data() + base, g.output_dim), theirs = top_index(want.data() + base, g.output_dim);
      ++lr.top1_rows;
      lr.top1_agreeing += mine == theirs ? 1 : 0;
      if (labels == nullptr) continue;
      ++lr.labelled_rows;
      lr.correct += mine == labels->data[r] ? 1 : 0;
      lr.reference_correct += theirs == labels->data[r] ? 1 : 0;
    }
  }
  results->push_back(lr);
  out << "  whole model: " << model.num_steps() << " steps, one Invoke per sample, '" << in_key << "' in, '" << out_key
      << "' compared";
  const auto pct = [](size_t k, size_t n) { return n ? 100.0 * static_cast<double>(k) / static_cast<double>(n) : 100.0; };
  if (lr.has_top1) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; top-1 agreement %zu of %zu rows (%.1f %%)", lr.top1_agreeing, lr.top1_rows,
                  pct(lr.top1_agreeing, lr.top1_rows));
    out << buf;
  }
  if (!lr.labels.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "; accuracy on '%s' %.2f %% (%zu of %zu), the reference's %.2f %% (%zu)",
                  lr.labels.c_str(), pct(lr.correct, lr.labelled_rows), lr.correct, lr.labelled_rows,
                  pct(lr.reference_correct, lr.labelled_rows), lr.reference_correct);
    out << buf;
  }
  out << "\n";
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
  std::string graph_only;  // steps with no reference data of their own
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
    // A graph model's steps without their own inputs and outputs in the
    // reference are listed once (the whole model is compared below).
    const std::string own_input = shell.name + (shell.learned_query() ? ".key" : ".query");
    if (model.has_graph() && (ref.count(shell.name + ".output") == 0 || ref.count(own_input) == 0)) {
      graph_only += (graph_only.empty() ? "" : ", ") + shell.name;
      continue;
    }
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
  if (!graph_only.empty()) out << "  steps without their own inputs and outputs in the reference: " << graph_only << "\n";
  if (model.has_graph()) eval_whole_model(o, lm, ref, &results, &dumped, out);
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
