// The tiled int8 attention of the amx path: Q.K^T on AMX-INT8 tiles, the
// other three stages (packing, softmax, P.V) the avx512vnni ones. Same
// integers as qs8_attention__ref; reached only after cpu_supports(kAmx).
//
// The avx512vnni packing already lays the keys out as AMX's B operand: one
// head's keys as K4N16 blocks of k + 128 over the head dim (a 64-byte group
// is 16 keys x 4 bytes, one B row). TDPBSUD multiplies signed bytes (A: the
// tile's query rows, read in place) by unsigned ones (B: k + 128), so a C
// tile of n rows x 16 keys that starts at the keys' terms -zq T_j holds
// s'_j = sum_i q_i (k_ji + 128) - zq T_j, exactly the avx512vnni stage's
// scores (qs8-attention-tile-stages-avx512vnni.cc says why the row term is
// left out). The C tiles start from key_terms loaded with row stride 0 (the
// same 16 terms in every row) and are stored straight into the tile's score
// rows: no epilogue. Head-dim bytes past the last whole 64 are copied into
// a zeroed stack tile (no load reads past a query row); the keys' last
// groups load as a B tile of as many rows, which ends where the block ends.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/amx_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"

namespace edgeattn {
namespace kernels {
namespace {

// Tiles: 0, 1 C (rows x 16 scores); 2 A (rows x 64 query bytes); 3 B (16
// groups of a key block); 4 A of the head dim's tail; 5 B of its tail
// groups.
void qk_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys) {
  const int n = rows.n;
  const int steps = a.head_dim / 64;                         // whole 64-byte steps of the head dim
  const int tail_groups = packed_k(a.head_dim) / 4 - 16 * steps;  // its last 0..15 groups
  TileConfig c = tile_config();
  for (int i = 0; i < 3; ++i) shape(&c, i, n, 64);
  shape(&c, 3, 16, 64);
  if (tail_groups > 0) {
    shape(&c, 4, n, 4 * tail_groups);
    shape(&c, 5, tail_groups, 64);
  }
  _tile_loadconfig(&c);

  const int8_t* q = a.q + static_cast<ptrdiff_t>(rows.m) * a.q_stride;
  if (tail_groups > 0) {
    alignas(64) int8_t q_tail[kQs8AttnTileRows][64];
    std::memset(q_tail, 0, sizeof(q_tail));
    for (int r = 0; r < n; ++r) {
      std::memcpy(q_tail[r], q + static_cast<ptrdiff_t>(r) * a.q_stride + 64 * steps,
                  static_cast<size_t>(a.head_dim - 64 * steps));
    }
    _tile_loadd(4, q_tail, 64);
  }
  if (steps == 1) _tile_loadd(2, q, a.q_stride);  // a head dim of 64..127: one A tile for every block
  const size_t block = packed_block_bytes(a.head_dim);
  const long score_stride = 4L * t.stride;
  const int blocks = (keys + kPackN - 1) / kPackN;
  for (int b = 0; b < blocks; b += 2) {
    const bool two = b + 1 < blocks;
    const int8_t* k0 = t.keys + static_cast<size_t>(b) * block;
    const int8_t* k1 = k0 + block;
    _tile_loadd(0, t.key_terms + kPackN * b, 0);
    if (two) _tile_loadd(1, t.key_terms + kPackN * (b + 1), 0);
    for (int s = 0; s < steps; ++s) {
      if (steps > 1) _tile_loadd(2, q + 64 * s, a.q_stride);
      _tile_loadd(3, k0 + 1024 * static_cast<ptrdiff_t>(s), 64);
      _tile_dpbsud(0, 2, 3);
      if (two) {
        _tile_loadd(3, k1 + 1024 * static_cast<ptrdiff_t>(s), 64);
        _tile_dpbsud(1, 2, 3);
      }
    }
    if (tail_groups > 0) {
      _tile_loadd(5, k0 + 1024 * static_cast<ptrdiff_t>(steps), 64);
      _tile_dpbsud(0, 4, 5);
      if (two) {
        _tile_loadd(5, k1 + 1024 * static_cast<ptrdiff_t>(steps), 64);
        _tile_dpbsud(1, 4, 5);
      }
    }
    _tile_stored(0, t.scores + kPackN * b, score_stride);
    if (two) _tile_stored(1, t.scores + kPackN * (b + 1), score_stride);
  }
  _tile_release();
}

// The avx512vnni stages (one indirect call per head or tile).
void pack_stage(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t) {
  qs8_attention_tile_stages__avx512vnni().pack(a, keys, t);
}
void softmax_stage(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t,
                   Qs8AttnTileRows* rows, int keys) {
  qs8_attention_tile_stages__avx512vnni().softmax(a, x, t, rows, keys);
}
void pv_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys) {
  qs8_attention_tile_stages__avx512vnni().pv(a, t, rows, keys);
}

constexpr Qs8AttnTileStages kStages = {pack_stage, qk_stage, softmax_stage, pv_stage};

}  // namespace

const Qs8AttnTileStages& qs8_attention_tile_stages__amx() { return kStages; }

}  // namespace kernels
}  // namespace edgeattn
