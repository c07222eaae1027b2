// int8 linear with AMX-INT8 tiles: the AVX512-VNNI kernel's epilogues
// (linear_avx512vnni.h) on sums from TDPBSSD. Compiled with the AVX-512
// flags plus -mamx-tile -mamx-int8; reached only after cpu_supports(kAmx),
// which has asked Linux for the tile data state (arch_prctl).
//
// The packed K4N16 weights are already AMX's B operand: one 64-byte group
// (16 channels x 4 inputs, channel-major words) is one B row, so 16 groups
// of a channel block (1 KiB, contiguous) are one B tile of K = 64 inputs.
// The A tile is 16 activation rows x 64 inputs, loaded in place with the
// row stride. TDPBSSD multiplies signed by signed bytes into int32, so
// unlike VPDPBUSD there is no +128 offset and no correction: each sum is
// the reference's sum_k w_k x_k, wrapping exactly as it does (Model::Load
// keeps it in int32), and the results are the reference's integers.
//
// A pass: 32 rows (two A tiles) x 32 channels (two B tiles), four C tiles
// of 16 x 16 sums; passes of 16 rows or one block where fewer remain. The
// sums go through a 4 KiB stack buffer into the epilogue. Inputs past the
// last whole 64 (K % 64) are copied into zeroed stack tiles, so no tile
// load reads past a row or past the weights. Rows past the last whole 16
// (at most 15 per call, such as a decoder step's single row) take the
// AVX512-VNNI tiles.

#ifndef EDGEATTN_KERNELS_ISA_X86_LINEAR_AMX_H_
#define EDGEATTN_KERNELS_ISA_X86_LINEAR_AMX_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/linear_avx512vnni.h"

namespace edgeattn {
namespace kernels {
namespace {

constexpr int kTileRows = 16;   // rows of an A or C tile
constexpr int kTileK = 64;      // inputs per A tile row (bytes)
constexpr int kTileBytes = 1024;

// LDTILECFG's 64-byte operand, palette 1: tiles 0-3 C, 4-5 A, 6-7 B, all
// 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

inline void configure_tiles() {
  TileConfig c;
  std::memset(&c, 0, sizeof(c));
  c.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = kTileK;
    c.rows[t] = kTileRows;
  }
  _tile_loadconfig(&c);
}

// C tiles 0 (rows 0-15, block 0), 1 (rows 0-15, block 1), 2 (rows 16-31,
// block 0), 3 (rows 16-31, block 1) += A(x0, x1) x B(w0, w1), the tiles of
// this pass only (RT row tiles, NB blocks).
template <int RT, int NB>
inline void tile_step(const int8_t* x0, const int8_t* x1, int x_stride, const int8_t* w0, const int8_t* w1) {
  _tile_loadd(4, x0, x_stride);
  _tile_loadd(6, w0, 64);
  _tile_dpbssd(0, 4, 6);
  if constexpr (NB == 2) {
    _tile_loadd(7, w1, 64);
    _tile_dpbssd(1, 4, 7);
  }
  if constexpr (RT == 2) {
    _tile_loadd(5, x1, x_stride);
    _tile_dpbssd(2, 5, 6);
    if constexpr (NB == 2) _tile_dpbssd(3, 5, 7);
  }
}

// The int32 sums of rows m.. m + 16 RT - 1 against blocks b.. b + NB - 1
// into sums[r * 16 NB + 16 c + lane].
template <int RT, int NB>
void amx_sums(const Job& j, int m, int b, const int8_t* w, int32_t* sums) {
  const size_t block_bytes = packed_block_bytes(j.in_features);
  const int8_t* x0 = j.x + static_cast<ptrdiff_t>(m) * j.x_stride;
  const int8_t* x1 = x0 + static_cast<ptrdiff_t>(kTileRows) * j.x_stride;
  const int8_t* w0 = w + static_cast<ptrdiff_t>(b) * static_cast<ptrdiff_t>(block_bytes);
  const int8_t* w1 = w0 + block_bytes;
  _tile_zero(0);
  if constexpr (NB == 2) _tile_zero(1);
  if constexpr (RT == 2) _tile_zero(2);
  if constexpr (RT == 2 && NB == 2) _tile_zero(3);
  const int steps = j.in_features / kTileK;
  for (int s = 0; s < steps; ++s) {
    tile_step<RT, NB>(x0 + kTileK * s, x1 + kTileK * s, j.x_stride, w0 + static_cast<ptrdiff_t>(kTileBytes) * s,
                      w1 + static_cast<ptrdiff_t>(kTileBytes) * s);
  }
  const int tail = j.in_features - kTileK * steps;  // inputs after the whole steps
  if (tail > 0) {
    alignas(64) int8_t a[2][kTileRows][kTileK];
    alignas(64) int8_t bt[2][kTileBytes];
    std::memset(a, 0, sizeof(a));
    std::memset(bt, 0, sizeof(bt));
    for (int r = 0; r < RT * kTileRows; ++r) {
      std::memcpy(a[r / kTileRows][r % kTileRows], x0 + static_cast<ptrdiff_t>(r) * j.x_stride + kTileK * steps,
                  static_cast<size_t>(tail));
    }
    const size_t tail_bytes = block_bytes - static_cast<size_t>(kTileBytes) * steps;  // its groups, zero-padded
    std::memcpy(bt[0], w0 + static_cast<ptrdiff_t>(kTileBytes) * steps, tail_bytes);
    if constexpr (NB == 2) std::memcpy(bt[1], w1 + static_cast<ptrdiff_t>(kTileBytes) * steps, tail_bytes);
    tile_step<RT, NB>(a[0][0], a[1][0], kTileK, bt[0], bt[1]);
  }
  constexpr int stride = 64 * NB;  // bytes per row of sums
  _tile_stored(0, sums, stride);
  if constexpr (NB == 2) _tile_stored(1, sums + 16, stride);
  if constexpr (RT == 2) _tile_stored(2, sums + 16 * 16 * NB, stride);
  if constexpr (RT == 2 && NB == 2) _tile_stored(3, sums + 16 * 16 * NB + 16, stride);
}

template <int RT, int NB, class Epilogue>
void amx_pass(const Job& j, const Epilogue& epilogue, int m, int b, const int8_t* w) {
  alignas(64) int32_t sums[2 * kTileRows * 32];
  amx_sums<RT, NB>(j, m, b, w, sums);
  for (int c = 0; c < NB; ++c) {
    const BlockParams p = block_params(j, b + c);
    for (int r = 0; r < RT * kTileRows; ++r) {
      const __m512i s = _mm512_add_epi32(_mm512_load_si512(sums + r * 16 * NB + 16 * c), p.bias);
      store_out(j, epilogue, p, m + r, s);
    }
  }
}

template <int RT, class Epilogue>
void amx_rows(const Job& j, const Epilogue& epilogue, int m, const int8_t* w) {
  const int blocks = packed_n(j.out_features) / kPackN;
  int b = 0;
  for (; b + 2 <= blocks; b += 2) amx_pass<RT, 2>(j, epilogue, m, b, w);
  if (b < blocks) amx_pass<RT, 1>(j, epilogue, m, b, w);
}

template <class Epilogue>
void linear_amx(const Job& j, const Epilogue& epilogue, int rows, const int8_t* w) {
  const int tiled = rows / kTileRows * kTileRows;
  if (tiled > 0) {
    configure_tiles();
    int m = 0;
    for (; m + 2 * kTileRows <= tiled; m += 2 * kTileRows) amx_rows<2>(j, epilogue, m, w);
    if (m < tiled) amx_rows<1>(j, epilogue, m, w);
    _tile_release();
  }
  if (tiled < rows) linear(j, epilogue, rows, w, tiled);
}

}  // namespace
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_X86_LINEAR_AMX_H_
