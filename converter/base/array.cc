#include "converter/base/array.h"

#include <cstdint>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "converter/base/error.h"

namespace edgeattn {
namespace convert {

void advise_huge_pages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  // Whole 2 MB pages inside the range only; a refusal (THP off) changes nothing.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

std::string shape_string(const std::vector<size_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

size_t checked_numel(const std::vector<size_t>& shape, const std::string& where) {
  // Every partial product must fit (a zero dimension does not excuse huge
  // others: code indexing the array multiplies prefixes of the shape).
  size_t bound = 1;
  bool empty = false;
  for (size_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (bound > SIZE_MAX / d) {
      fail(where, ": shape ", shape_string(shape), " is too large (element count overflows)");
    }
    bound *= d;
  }
  return empty ? 0 : bound;
}

}  // namespace convert
}  // namespace edgeattn
