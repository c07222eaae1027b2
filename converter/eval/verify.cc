#include "converter/eval/verify.h"

namespace edgeattn {
namespace convert {

std::vector<LayerAccuracy> verify_model(const LoadedModel& model, const ModelSpec& spec,
                                        const std::vector<LayerData>& calib,
                                        std::vector<FloatOutputs> float_outputs, const ProgressFn& progress) {
  std::vector<LayerAccuracy> result(spec.layers.size());
  std::vector<std::vector<double>> chain_output(spec.layers.size());  // each layer's runtime output along its chain
  for (size_t i = 0; i < spec.layers.size() && i < calib.size(); ++i) {
    const FloatLayer& L = spec.layers[i];
    if (progress) {
      progress(i, "runtime vs float64 reference on " + std::to_string(calib[i].n) + " sample" +
                      (calib[i].n == 1 ? "" : "s"));
    }
    const RunResult run = run_layer(model, static_cast<int>(i), calib[i], 1);
    FloatOutputs ref;
    if (i < float_outputs.size()) {
      ref = std::move(float_outputs[i]);
    } else {
      reference_forward(L, calib[i], &ref.output, &ref.weights);
    }
    result[i].metrics = compare(L, calib[i], run.output, ref.output, run.weights, ref.weights);
    result[i].has_metrics = true;
    result[i].samples = calib[i].n;
    if (L.input_layer < 0 && L.memory_layer < 0) {
      chain_output[i] = run.output;
    } else {
      LayerData fed = calib[i];
      if (L.input_layer >= 0) {
        (L.learned_query() ? fed.key : fed.query) = chain_output[static_cast<size_t>(L.input_layer)];
      }
      if (L.memory_layer >= 0) fed.key = chain_output[static_cast<size_t>(L.memory_layer)];
      const RunResult chained = run_layer(model, static_cast<int>(i), fed, 1);
      result[i].chained = compare(L, fed, chained.output, ref.output, chained.weights, ref.weights);
      result[i].has_chained = true;
      chain_output[i] = chained.output;
    }
  }
  return result;
}

}  // namespace convert
}  // namespace edgeattn
