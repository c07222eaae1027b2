// A host tensor read from a weights or data file, converted to float64.
#ifndef EDGEATTN_CONVERTER_BASE_ARRAY_H_
#define EDGEATTN_CONVERTER_BASE_ARRAY_H_

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

// Asks the OS to back [p, p + bytes) with large pages where it can (Linux
// transparent huge pages in madvise mode: 2 MB pages); elsewhere, or for
// small ranges, nothing. Only speed changes, never contents.
void advise_huge_pages(const void* p, size_t bytes);

// v->reserve(n) / v->resize(n) for a large buffer about to be written: new memory
// is advised huge pages before its first touch. A large conversion writes
// about a gigabyte of fresh float64 buffers (calibration inputs, float
// outputs and attention weights, runtime results), and faulting them in 4 KB
// pages took more time than the float64 arithmetic.
template <class T>
void reserve_large(std::vector<T>* v, size_t n) {
  if (v->capacity() < n) {
    v->reserve(n);
    advise_huge_pages(v->data(), n * sizeof(T));
  }
}
template <class T>
void resize_large(std::vector<T>* v, size_t n) {
  reserve_large(v, n);
  v->resize(n);
}

// Element count of `shape`, overflow-checked: throws ConvertError
// "<where>: shape [..] is too large" when the product of the dimensions (any
// partial product, zero dimensions counted as 1) does not fit in size_t.
// `where` names the file and the tensor, e.g. "w.safetensors: tensor 'x'".
size_t checked_numel(const std::vector<size_t>& shape, const std::string& where);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_BASE_ARRAY_H_
