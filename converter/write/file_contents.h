// What a written .eatn holds, for inspect, the convert report and the kind
// modules' inspect hooks: its constant tensors and its quantization tables
// as text.
#ifndef EDGEATTN_CONVERTER_WRITE_FILE_CONTENTS_H_
#define EDGEATTN_CONVERTER_WRITE_FILE_CONTENTS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

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
std::string mask_name(bool causal);

// For the kind modules' tensor lists and quantization sections (kinds/kind.h).
void add_tensor(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                const fb::Tensor* t);
void add_linear(std::vector<TensorEntry>* out, const std::string& layer, const std::string& role,
                const fb::Linear* l);
// int16: a tensor of the 16-bit residual stream (zero point 0).
void print_act(std::ostream& os, const char* what, const fb::ActQuant* q, bool int16 = false);
void print_requant(std::ostream& os, const char* what, const fb::Requant* r);
void print_linear(std::ostream& os, const char* role, const fb::Linear* l, bool output16 = false);
void print_softmax(std::ostream& os, const fb::SoftmaxQuant* s);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_WRITE_FILE_CONTENTS_H_
