// Host-side helper (converter and tests): turn a real multiplier into the
// (multiplier, shift) pair that requantize() consumes. Uses floating point, so
// it is never called on the int8 inference path.
#ifndef EDGEATTN_KERNELS_QUANTIZE_MULTIPLIER_H_
#define EDGEATTN_KERNELS_QUANTIZE_MULTIPLIER_H_

#include <cmath>
#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

// Returns false if r is not finite, not positive, or outside the representable
// range [2^-32, 2^30) (with M in [2^30, 2^31) and shift in [-31, 30]).
inline bool quantize_multiplier(double r, int32_t* multiplier, int32_t* shift) {
  if (!std::isfinite(r) || r <= 0.0) return false;
  int exponent = 0;
  const double fraction = std::frexp(r, &exponent);  // r = fraction * 2^exponent, fraction in [0.5, 1)
  int64_t m = static_cast<int64_t>(std::llround(fraction * 2147483648.0));  // * 2^31
  if (m == (int64_t{1} << 31)) {  // rounding carried into the next power of two
    m /= 2;
    ++exponent;
  }
  if (exponent < kMinShift || exponent > kMaxShift) return false;
  *multiplier = static_cast<int32_t>(m);
  *shift = exponent;
  return true;
}

inline double dequantize_multiplier(int32_t multiplier, int32_t shift) {
  return std::ldexp(static_cast<double>(multiplier), shift - 31);
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_QUANTIZE_MULTIPLIER_H_
