// A host tensor read from a weights or data file, converted to float64.
#ifndef EDGEATTN_CONVERTER_ARRAY_H_
#define EDGEATTN_CONVERTER_ARRAY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

struct Array {
  std::string dtype;              // source dtype as named by the file ("F32", "<f4", ...)
  bool is_float = true;           // false for integer sources
  std::vector<size_t> shape;
  std::vector<double> data;       // row-major, float64

  // Unchecked product of the dimensions: readers validate every shape with
  // checked_numel() when they load it, so this cannot wrap for loaded arrays.
  size_t numel() const {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
  }
};

// Name -> tensor, in file order irrelevant (sorted by name).
using ArrayMap = std::map<std::string, Array>;

std::string shape_string(const std::vector<size_t>& shape);

// Element count of `shape`, overflow-checked: throws ConvertError
// "<where>: shape [..] is too large" when the product of the dimensions (any
// partial product, zero dimensions counted as 1) does not fit in size_t.
// `where` names the file and the tensor, e.g. "w.safetensors: tensor 'x'".
size_t checked_numel(const std::vector<size_t>& shape, const std::string& where);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_ARRAY_H_
