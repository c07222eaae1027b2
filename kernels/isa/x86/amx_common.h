// What the amx path's tile kernels share: LDTILECFG's 64-byte operand
// (palette 1). Header-only, internal linkage, as every x86 helper header.
#ifndef EDGEATTN_KERNELS_ISA_X86_AMX_COMMON_H_
#define EDGEATTN_KERNELS_ISA_X86_AMX_COMMON_H_

#include <cstdint>
#include <cstring>

namespace edgeattn {
namespace kernels {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];  // bytes per row of tile i
  uint8_t rows[16];    // rows of tile i (0: unused)
};

// A palette-1 configuration with every tile unused; shape() sets one.
inline TileConfig tile_config() {
  TileConfig c;
  std::memset(&c, 0, sizeof(c));
  c.palette_id = 1;
  return c;
}
inline void shape(TileConfig* c, int tile, int rows, int colsb) {
  c->rows[tile] = static_cast<uint8_t>(rows);
  c->colsb[tile] = static_cast<uint16_t>(colsb);
}

}  // namespace
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_X86_AMX_COMMON_H_
