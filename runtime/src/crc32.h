#ifndef EDGEATTN_RUNTIME_CRC32_H_
#define EDGEATTN_RUNTIME_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace edgeattn {

// CRC-32 as zlib computes it (IEEE 802.3, reflected, init and final xor ~0).
uint32_t crc32(const uint8_t* data, size_t size);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_CRC32_H_
