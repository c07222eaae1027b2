#include "converter/write/model_file.h"

#include "converter/base/error.h"
#include "converter/calibrate/calibrate_model.h"
#include "converter/kinds/kind.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"
#include "edgeattn/plan.h"

namespace edgeattn {
namespace convert {

std::vector<uint8_t> write_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerCalibration>& calibration, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress) {
  const bool s8 = type == OutputType::kInt8;
  if (s8 && calibration.size() != spec.layers.size()) fail("int8 conversion needs calibrated ranges of every layer");
  ModelWriter w;
  std::vector<LayerPlan> plans;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    flatbuffers::Offset<void> layer_options;
    if (s8) {
      const Calibrated c{calibration[i].ranges, calib_path + ": layer '" + L.name + "'", ""};
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
  // The runtime's own layout (Model::Load checks the file against it).
  const ArenaLayout layout = lay_out_arena(plans.data(), static_cast<int>(plans.size()), nullptr);
  return w.Finish(source, layout.total_bytes, layout.worker_bytes);
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
