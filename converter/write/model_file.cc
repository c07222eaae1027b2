#include "converter/write/model_file.h"

#include "converter/base/error.h"
#include "converter/calibrate/calibrate_model.h"
#include "converter/kinds/kind.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"
#include "edgeattn/plan.h"

namespace edgeattn {
namespace convert {
namespace {

// The spec's chain ("input") as the file's Graph: every layer a step in
// spec order, reading its "input" layer's output or the model's input (a
// cross layer's keys and values: its "memory" layer's output, or the model's
// memory). With "decoder_start" the layers from it on are the decoder part
// (Graph.decoder_start), its first reading the last token (-3). Only the
// last layer's output leaves the model, so each other layer must feed a
// later one. Returns 0 when no layer is chained (the layers run one by one).
flatbuffers::Offset<fb::Graph> write_graph(const ModelSpec& spec, ModelWriter& w) {
  bool chained = false;
  std::vector<bool> read(spec.layers.size(), false);
  for (const FloatLayer& L : spec.layers) {
    for (const int src : {L.input_layer, L.memory_layer}) {
      if (src < 0) continue;
      chained = true;
      read[static_cast<size_t>(src)] = true;
    }
  }
  if (!chained) return 0;
  if (spec.layers.size() > static_cast<size_t>(kMaxGraphSteps)) {
    fail("a chained model has at most ", kMaxGraphSteps, " layers, the spec has ", spec.layers.size());
  }
  std::vector<flatbuffers::Offset<fb::GraphStep>> steps;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    if (i + 1 < spec.layers.size() && !read[i]) {
      fail("layer '", L.name, "': the layers are chained (\"input\"), and no later layer reads its output;",
           " only the last layer's output is the model's (remove it, or move it last)");
    }
    const int query = static_cast<int>(i) == spec.decoder_start ? -3 : L.input_layer >= 0 ? L.input_layer : -1;
    steps.push_back(fb::CreateGraphStep(w.fbb(), static_cast<uint32_t>(i), query,
                                        L.memory_layer >= 0 ? L.memory_layer : -2));
  }
  return fb::CreateGraphDirect(w.fbb(), &steps, spec.decoder_start);
}

}  // namespace

std::vector<uint8_t> write_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerCalibration>& calibration, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress,
                                 std::vector<PointUses>* used) {
  const bool s8 = type == OutputType::kInt8;
  if (used != nullptr) used->assign(spec.layers.size(), PointUses());
  if (s8 && calibration.size() != spec.layers.size()) fail("int8 conversion needs calibrated ranges of every layer");
  ModelWriter w;
  std::vector<LayerPlan> plans;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    flatbuffers::Offset<void> layer_options;
    if (s8) {
      const Calibrated c{calibration[i].ranges, calib_path + ": layer '" + L.name + "'", "",
                         used != nullptr ? &(*used)[i] : nullptr};
      layer_options = L.kind->write_s8(w, L, c);
    } else {
      if (progress) progress(i, "writing float weights");
      layer_options = L.kind->write_f32(w, L);
    }
    // The layer's arena, planned from the options just written, read by the
    // runtime's own module of the kind (plan.h shape_of_options).
    const LayerShape shape = shape_of_options(L.kind->runtime_kind, flatbuffers::GetTemporaryPointer(w.fbb(), layer_options),
                                              s8 ? EA_S8 : EA_F32, spec.tile_scratch);
    plans.push_back(plan_layer(shape, L.max_q_len, L.max_kv_len));
    const uint64_t layer_bytes = plans.back().cache_bytes + plans.back().scratch_bytes;
    if (shape.kind < 0 || layer_bytes > kMaxArenaBytes) {
      fail("layer '", L.name, "': its arena at max_q_len ", L.max_q_len, " / max_kv_len ", L.max_kv_len,
           " exceeds ", kMaxArenaBytes, " bytes");
    }
    w.AddLayer(fb::CreateLayerDirect(w.fbb(), L.name.c_str(), s8 ? fb::DType::S8 : fb::DType::F32,
                                     static_cast<uint32_t>(L.max_q_len), static_cast<uint32_t>(L.max_kv_len),
                                     layer_bytes, L.kind->options, layer_options, spec.tile_scratch));
  }
  // The runtime's own layout (Model::Load checks the file against it),
  // the graph's activations read from the tables just written.
  const flatbuffers::Offset<fb::Graph> graph = write_graph(spec, w);
  uint64_t activation_bytes = 0;
  if (!graph.IsNull()) {
    std::vector<const fb::Layer*> layers;
    for (const auto& l : w.layers()) layers.push_back(flatbuffers::GetTemporaryPointer(w.fbb(), l));
    std::vector<GraphTensor> tensors(spec.layers.size());
    std::vector<uint64_t> offsets(spec.layers.size());
    const int n = graph_tensors(layers.data(), static_cast<int>(layers.size()),
                                *flatbuffers::GetTemporaryPointer(w.fbb(), graph), 0, tensors.data());
    activation_bytes = lay_out_graph(tensors.data(), n, offsets.data());
  }
  const ArenaLayout layout =
      lay_out_arena(plans.data(), static_cast<int>(plans.size()), nullptr, activation_bytes);
  if (layout.total_bytes > kMaxArenaBytes) {
    fail("the model's arena (", layout.total_bytes, " bytes) exceeds ", kMaxArenaBytes, " bytes");
  }
  return w.Finish(source, layout.total_bytes, layout.worker_bytes, graph);
}

std::vector<uint8_t> build_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerData>& calib, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress,
                                 std::vector<FloatOutputs>* reference, const CalibOptions& options,
                                 std::vector<LayerCalibration>* calibration) {
  const bool s8 = type == OutputType::kInt8;
  ModelCalibration found;
  if (s8) found = calibrate_model(spec, calib, calib_path, options, progress, reference != nullptr);
  std::vector<uint8_t> bytes = write_model(spec, type, found.layers, calib_path, source, progress);
  if (reference != nullptr) *reference = std::move(found.float_outputs);
  if (calibration != nullptr) *calibration = std::move(found.layers);
  return bytes;
}

}  // namespace convert
}  // namespace edgeattn
