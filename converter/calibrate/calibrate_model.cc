#include "converter/calibrate/calibrate_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "converter/base/error.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

ModelCalibration calibrate_model(const ModelSpec& spec, const std::vector<LayerData>& calib,
                                 const std::string& calib_path, const CalibOptions& options,
                                 const ProgressFn& progress, bool keep_outputs) {
  if (calib.size() != spec.layers.size()) fail("int8 conversion needs calibration data (--calib)");
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    if (calib[i].n == 0) fail(calib_path, ": layer '", spec.layers[i].name, "': empty calibration set");
  }
  ModelCalibration found;
  found.layers.resize(spec.layers.size());
  if (keep_outputs) found.float_outputs.resize(spec.layers.size());
  // Calibration (float64 passes over every sample) is most of a conversion
  // and each layer's is independent of the others: layers are calibrated on
  // up to as many threads as the machine has.
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
        CalibOptions layer_options = options;
        if (!spec.layers[i].calib_method.empty()) layer_options.method = parse_calib_method(spec.layers[i].calib_method);
        if (!spec.layers[i].calib_headroom.empty()) parse_calib_headroom(spec.layers[i].calib_headroom, &layer_options);
        found.layers[i] =
            calibrate(spec.layers[i], calib[i], layer_options, keep_outputs ? &found.float_outputs[i] : nullptr);
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
  link_chained_inputs(spec, &found);
  return found;
}

void link_chained_inputs(const ModelSpec& spec, ModelCalibration* found) {
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    if (L.memory_layer >= 0) {  // the memory is passed on as bytes too: keys and values at its output's range
      const FloatLayer& mem = spec.layers[static_cast<size_t>(L.memory_layer)];
      const RangeMap& from = found->layers[static_cast<size_t>(L.memory_layer)].ranges;
      const std::string out = mem.kind->output_point != nullptr ? mem.kind->output_point(mem) : "output";
      if (from.count(out) == 0) fail("layer '", mem.name, "': no calibrated output range to chain '", L.name, "' from");
      LayerCalibration& c = found->layers[i];
      const std::vector<std::string> points =
          L.kind->memory_points != nullptr ? L.kind->memory_points(L) : std::vector<std::string>{"key", "value"};
      for (const std::string& p : points) {
        if (c.ranges.count(p) != 0) c.ranges[p] = from.at(out);
      }
      for (const auto& [to, source] : c.copies) c.ranges[to] = c.ranges[source];
    }
    if (L.input_layer < 0) continue;
    const FloatLayer& src = spec.layers[static_cast<size_t>(L.input_layer)];
    const RangeMap& from = found->layers[static_cast<size_t>(L.input_layer)].ranges;
    // (src is earlier: its own chained input, which its output point may be, is linked already)
    const std::string out = src.kind->output_point != nullptr ? src.kind->output_point(src) : "output";
    if (from.count(out) == 0) fail("layer '", src.name, "': no calibrated output range to chain '", L.name, "' from");
    LayerCalibration& c = found->layers[i];
    const std::vector<std::string> points =
        L.kind->input_points != nullptr ? L.kind->input_points(L) : std::vector<std::string>{"query"};
    for (const std::string& p : points) c.ranges[p] = from.at(out);
    for (const auto& [to, source] : c.copies) c.ranges[to] = c.ranges[source];
  }
}

}  // namespace convert
}  // namespace edgeattn
