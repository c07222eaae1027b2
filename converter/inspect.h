// What a .eatn file holds: layers, tensors, quantization parameters.
#ifndef EDGEATTN_CONVERTER_INSPECT_H_
#define EDGEATTN_CONVERTER_INSPECT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "converter/runner.h"
#include "edgeattn/edgeattn_generated.h"

namespace edgeattn {
namespace convert {

struct TensorEntry {
  std::string layer, role, name, dtype;
  std::vector<uint32_t> shape;
  uint32_t row_stride = 0;
  bool packed = false;  // int8 linear weight in the K4N16 layout (schema/edgeattn.fbs)
  uint64_t offset = 0, size = 0;
  std::vector<float> scales;
};

// Every constant tensor of the model in file order of layers.
std::vector<TensorEntry> list_tensors(const fb::Model& model);

const char* dtype_name(fb::DType t);
std::string mask_name(const fb::Layer& layer);

// The full human-readable dump printed by `edgeattn-convert inspect`.
void print_inspect(const LoadedModel& model, const std::string& path, std::ostream& os);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_INSPECT_H_
