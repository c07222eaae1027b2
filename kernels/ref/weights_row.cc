#include <cstring>

#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

void write_weights_row(int limit, int kv_len, const float* p, float* w) {
  if (limit > 0) std::memcpy(w, p, sizeof(float) * static_cast<size_t>(limit));
  for (int j = limit < 0 ? 0 : limit; j < kv_len; ++j) w[j] = 0.0f;
}

void write_weights_row(int limit, int kv_len, const uint16_t* p, uint16_t* w) {
  if (limit > 0) std::memcpy(w, p, sizeof(uint16_t) * static_cast<size_t>(limit));
  if (kv_len > limit) std::memset(w + limit, 0, sizeof(uint16_t) * static_cast<size_t>(kv_len - limit));
}

}  // namespace kernels
}  // namespace edgeattn
