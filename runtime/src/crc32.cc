#include "crc32.h"

namespace edgeattn {

// Four bits at a time with a 16-entry table: 64 bytes of flash instead of 1 KB,
// fast enough to check a model once at load.
uint32_t crc32(const uint8_t* data, size_t size) {
  static const uint32_t kTable[16] = {
      0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
      0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
      0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    crc = (crc >> 4) ^ kTable[crc & 15u];
    crc = (crc >> 4) ^ kTable[crc & 15u];
  }
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace edgeattn
