// Runs layers of a .eatn model through the edgeattn runtime on float inputs:
// quantizes inputs with the layer's input quantization (int8 models),
// dequantizes outputs and Q15 attention weights, and times the calls.
#ifndef EDGEATTN_CONVERTER_EVAL_RUNNER_H_
#define EDGEATTN_CONVERTER_EVAL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/model/dataset.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace convert {

// Model bytes in 64-byte aligned storage plus the verified runtime view.
class LoadedModel {
 public:
  // Throws ConvertError("<what>: <runtime error>") if the runtime rejects the bytes.
  LoadedModel(const std::vector<uint8_t>& bytes, const std::string& what);
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const Model& model() const { return model_; }
  const uint8_t* data() const { return storage_.get(); }
  size_t size() const { return size_; }
  Status status() const { return status_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> storage_;
  size_t size_ = 0;
  Model model_;
  Status status_ = Status::kOk;
};

// The runtime description of a layer as a FloatLayer without weights (dims,
// kind, masks), to read datasets for it.
FloatLayer layer_shell(const Model& model, int layer);

struct RunResult {
  std::vector<double> output;   // [n][q_len][output_dim], dequantized
  std::vector<double> weights;  // [n][heads][q_len][kv_len], probabilities
  std::vector<double> set_us;   // wall time of each repeat over the whole set
  std::vector<uint32_t> ranges; // range mode: R (Q16) of each sample (last repeat)
};

// Runs every sample of `data` through layer `layer`; throws on a runtime error.
// With a range policy other than EA_RANGE_STATIC, int8 layers run in range
// mode through Interpreter::RunFloat (float inputs quantized per call at the
// range the policy picks, runtime/include/edgeattn/edgeattn.h).
RunResult run_layer(const LoadedModel& model, int layer, const LayerData& data, int repeat,
                    ea_range_policy policy = EA_RANGE_STATIC);

// Runs every sample through the whole model (a file with a graph) with one
// Interpreter::Invoke each: `input` holds the model's input rows (the query
// rows of the layer that reads them, or its keys when it pools them) and
// their valid lengths, `memory` (null when no step reads it) the memory rows
// of the cross layer that reads them. The output is the last step's,
// dequantized; throws on a runtime error, naming the sample.
RunResult run_model(const LoadedModel& model, const LayerData& input, const LayerData* memory, int repeat);

// "static", "dynamic", "dynamic-pow2" (--range-mode); throws on anything else.
ea_range_policy parse_range_mode(const std::string& name);
const char* range_mode_name(ea_range_policy policy);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_RUNNER_H_
