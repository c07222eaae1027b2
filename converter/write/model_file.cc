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

LayerShape shape_of(const FloatLayer& L, OutputType type, bool tile_scratch) {
  LayerShape s = {};
  s.dtype = type == OutputType::kInt8 ? EA_S8 : EA_F32;
  s.tile_scratch = tile_scratch;
  L.kind->shape(L, &s);
  return s;
}

}  // namespace

ArenaPlan plan_arena(const ModelSpec& spec, OutputType type) {
  ArenaPlan a;
  std::vector<LayerPlan> plans;
  for (const FloatLayer& L : spec.layers) {
    plans.push_back(plan_layer(shape_of(L, type, spec.tile_scratch), L.max_q_len, L.max_kv_len));
    a.layer_bytes.push_back(plans.back().cache_bytes + plans.back().scratch_bytes);
  }
  // The runtime's own layout (Model::Load checks the file against it).
  const ArenaLayout layout = lay_out_arena(plans.data(), static_cast<int>(plans.size()), nullptr);
  a.model_bytes = layout.total_bytes;
  a.worker_bytes = layout.worker_bytes;
  return a;
}

std::vector<uint8_t> write_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerCalibration>& calibration, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress) {
  const bool s8 = type == OutputType::kInt8;
  if (s8 && calibration.size() != spec.layers.size()) fail("int8 conversion needs calibrated ranges of every layer");
  const ArenaPlan arena = plan_arena(spec, type);
  ModelWriter w;
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
    w.AddLayer(fb::CreateLayerDirect(w.fbb(), L.name.c_str(), s8 ? fb::DType::S8 : fb::DType::F32,
                                     static_cast<uint32_t>(L.max_q_len), static_cast<uint32_t>(L.max_kv_len),
                                     arena.layer_bytes[i], L.kind->options, layer_options,
                                     spec.tile_scratch));
  }
  return w.Finish(source, arena.model_bytes, arena.worker_bytes);
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
