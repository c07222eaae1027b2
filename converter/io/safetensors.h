// .safetensors: 8-byte little-endian header length, JSON header
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {...}},
// raw little-endian data. F32, F16, BF16 and F64 are read (as float64);
// any other dtype is listed with is_float = false and rejected when used.
#ifndef EDGEATTN_CONVERTER_IO_SAFETENSORS_H_
#define EDGEATTN_CONVERTER_IO_SAFETENSORS_H_

#include <string>
#include <utility>
#include <vector>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

ArrayMap load_safetensors(const std::string& path);

// Writes tensors with a.dtype in {"F32", "F16", "BF16", "F64", "I64", "I32"}
// (the integer types exist so tests can write files the converter rejects).
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Array>>& tensors);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_SAFETENSORS_H_
