// The amx path's three GEMM variants (kernels/qs8-linear*/qs8-linear*-amx.cc,
// isa/x86/linear_amx.h) compiled with the tile instructions replaced by a
// scalar model of the AMX tile unit, under renamed symbols (*__amx_emu), for
// amx_emu_check.cc. Built with the AVX-512 flags of the real files (the
// epilogues are the avx512vnni ones) and no AMX flag, so it contains no
// tile instruction.
//
// The model follows the ISA: LDTILECFG (palette 1) sets each tile's rows and
// bytes per row and zeroes every tile; TILELOADD reads rows * colsb bytes
// at the stride; TDPBSSD adds, for each C row m and int32 column n,
// sum_k sum_t A[m][4k + t] * B[k][4n + t] over signed bytes (wrapping);
// TILESTORED writes rows * colsb bytes. It also checks what the hardware
// would fault on or silently get wrong: a tile used before a configuration,
// C, A and B shapes that do not fit together, rows or bytes past 16 x 64.
#include <immintrin.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace amx_emu {

struct Tile {
  int rows = 0, colsb = 0;
  uint8_t d[16][64];
};
Tile g_tiles[8];
bool g_configured = false;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "amx_emu: %s\n", what);
  std::abort();
}

void loadconfig(const void* config) {
  const uint8_t* c = static_cast<const uint8_t*>(config);
  if (c[0] != 1) fail("palette is not 1");
  for (int t = 0; t < 8; ++t) {
    uint16_t colsb;
    std::memcpy(&colsb, c + 16 + 2 * t, 2);
    const int rows = c[48 + t];
    if (colsb > 64 || rows > 16 || colsb % 4 != 0) fail("tile shape past 16 x 64 bytes");
    g_tiles[t].rows = rows;
    g_tiles[t].colsb = colsb;
    std::memset(g_tiles[t].d, 0, sizeof(g_tiles[t].d));
  }
  g_configured = true;
}

Tile& tile(int t) {
  if (!g_configured || g_tiles[t].rows == 0) fail("tile used without a configuration");
  return g_tiles[t];
}

void loadd(int t, const void* base, long stride) {
  Tile& x = tile(t);
  for (int r = 0; r < x.rows; ++r) std::memcpy(x.d[r], static_cast<const uint8_t*>(base) + r * stride, x.colsb);
}

void stored(int t, void* base, long stride) {
  Tile& x = tile(t);
  for (int r = 0; r < x.rows; ++r) std::memcpy(static_cast<uint8_t*>(base) + r * stride, x.d[r], x.colsb);
}

void zero(int t) { std::memset(tile(t).d, 0, sizeof(g_tiles[t].d)); }

void dpbssd(int ct, int at, int bt) {
  Tile &c = tile(ct), &a = tile(at), &b = tile(bt);
  if (a.rows != c.rows || b.colsb != c.colsb || a.colsb != 4 * b.rows) fail("TDPBSSD shapes do not fit");
  for (int m = 0; m < c.rows; ++m) {
    for (int n = 0; n < c.colsb / 4; ++n) {
      uint32_t s;
      std::memcpy(&s, &c.d[m][4 * n], 4);
      for (int k = 0; k < b.rows; ++k) {
        for (int t = 0; t < 4; ++t) {
          const int32_t p = static_cast<int8_t>(a.d[m][4 * k + t]) * static_cast<int8_t>(b.d[k][4 * n + t]);
          s += static_cast<uint32_t>(p);
        }
      }
      std::memcpy(&c.d[m][4 * n], &s, 4);
    }
  }
}

void release() { g_configured = false; }

}  // namespace amx_emu

#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbssd
#define _tile_loadconfig(config) amx_emu::loadconfig(config)
#define _tile_loadd(t, base, stride) amx_emu::loadd(t, base, stride)
#define _tile_stored(t, base, stride) amx_emu::stored(t, base, stride)
#define _tile_zero(t) amx_emu::zero(t)
#define _tile_dpbssd(c, a, b) amx_emu::dpbssd(c, a, b)
#define _tile_release() amx_emu::release()
#define qs8_linear__amx qs8_linear__amx_emu
#define qs8_linear_res__amx qs8_linear_res__amx_emu
#define qs8_linear_res16__amx qs8_linear_res16__amx_emu
// NOLINTBEGIN(build/include): the real variants, the tile unit emulated
#include "qs8-linear/qs8-linear-amx.cc"
#include "qs8-linear-res/qs8-linear-res-amx.cc"
#include "qs8-linear-res16/qs8-linear-res16-amx.cc"
// NOLINTEND(build/include)
