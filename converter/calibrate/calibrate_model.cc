#include "converter/calibrate/calibrate_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "converter/base/error.h"

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
        found.layers[i] = calibrate(spec.layers[i], calib[i], options, keep_outputs ? &found.float_outputs[i] : nullptr);
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
  return found;
}

}  // namespace convert
}  // namespace edgeattn
