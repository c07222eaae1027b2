#include "converter/convert.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "converter/calibrate.h"
#include "converter/error.h"
#include "converter/kinds/kind.h"
#include "converter/quantize.h"
#include "converter/writer.h"
#include "edgeattn/plan.h"

namespace edgeattn {
namespace convert {
std::vector<uint8_t> build_model(const ModelSpec& spec, OutputType type,
                                 const std::vector<LayerData>& calib, const std::string& calib_path,
                                 const std::string& source, const ProgressFn& progress,
                                 std::vector<FloatOutputs>* reference, const CalibOptions& options,
                                 std::vector<LayerCalibration>* calibration) {
  const bool s8 = type == OutputType::kInt8;
  if (reference != nullptr) reference->assign(s8 ? spec.layers.size() : 0, FloatOutputs());
  if (calibration != nullptr) calibration->assign(s8 ? spec.layers.size() : 0, LayerCalibration());
  if (s8 && calib.size() != spec.layers.size()) fail("int8 conversion needs calibration data (--calib)");
  // Calibration (float64 passes over every sample) is most of a conversion
  // and each layer's is independent of the others: layers are calibrated on
  // up to as many threads as the machine has, then written in order (the
  // same bytes whatever the thread count).
  std::vector<LayerCalibration> found(s8 ? spec.layers.size() : 0);
  if (s8) {
    for (size_t i = 0; i < spec.layers.size(); ++i) {
      if (calib[i].n == 0) fail(calib_path, ": layer '", spec.layers[i].name, "': empty calibration set");
    }
    std::mutex progress_lock;
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    auto worker = [&] {
      for (size_t i = next++; i < spec.layers.size(); i = next++) {
        if (progress) {
          const std::lock_guard<std::mutex> hold(progress_lock);
          progress(i, "calibrating on " + std::to_string(calib[i].n) + " sample" + (calib[i].n == 1 ? "" : "s") +
                          ", quantizing");
        }
        try {
          found[i] = calibrate(spec.layers[i], calib[i], options, reference != nullptr ? &(*reference)[i] : nullptr);
        } catch (...) {
          const std::lock_guard<std::mutex> hold(progress_lock);
          if (!error) error = std::current_exception();
        }
      }
    };
    const size_t threads = std::min<size_t>(spec.layers.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }
  ModelWriter w;
  std::vector<LayerPlan> plans;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    flatbuffers::Offset<void> layer_options;
    if (s8) {
      const Calibrated c{found[i].ranges, calib_path + ": layer '" + L.name + "'", ""};
      layer_options = L.kind->write_s8(w, L, c);
      if (calibration != nullptr) (*calibration)[i] = std::move(found[i]);
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

}  // namespace convert
}  // namespace edgeattn
