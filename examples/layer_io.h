// A layer's inputs and outputs between float64 host code and the runtime:
// int8 with the layer's quantization, or float32.
#ifndef EDGEATTN_CONVERTER_DEMO_LAYER_IO_H_
#define EDGEATTN_CONVERTER_DEMO_LAYER_IO_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.h"

namespace edgeattn {
namespace demo {

// n values of x in the layer's dtype (int8 with q, or float) in *buf.
inline const void* to_layer_input(const double* x, size_t n, ea_dtype dtype, const ea_quant& q,
                                  std::vector<uint8_t>* buf) {
  if (dtype == EA_S8) {
    buf->resize(n);
    for (size_t i = 0; i < n; ++i) {
      const double v = std::round(x[i] / q.scale) + q.zero_point;
      (*buf)[i] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(v, -128.0, 127.0)));
    }
  } else {
    buf->resize(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(x[i]);
      std::memcpy(buf->data() + i * sizeof f, &f, sizeof f);
    }
  }
  return buf->data();
}

// n outputs from element `offset` of buf, dequantized with q (int8).
inline void from_layer_output(const std::vector<uint8_t>& buf, size_t offset, size_t n, ea_dtype dtype,
                              const ea_quant& q, double* out) {
  for (size_t i = 0; i < n; ++i) {
    if (dtype == EA_S8) {
      out[i] = q.scale * (static_cast<int8_t>(buf[offset + i]) - q.zero_point);
    } else {
      float f;
      std::memcpy(&f, buf.data() + (offset + i) * sizeof f, sizeof f);
      out[i] = f;
    }
  }
}

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_LAYER_IO_H_
