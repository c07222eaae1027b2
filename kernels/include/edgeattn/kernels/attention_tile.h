// Scratch of the tiled int8 attention kernels (QS8AttentionArgs::tile_scratch).
//
// A tiled kernel repacks one head's keys and values once, into the K4N16
// layout of packed_weights.h, and then treats Q.K^T and P.V as two small
// GEMMs over tiles of kQs8AttnTileRows query rows:
//   - keys:   N = keys, K = head dim: key j, byte i at packed_offset(j, i, packed_k(head_dim)),
//             stored as k + 128 (the unsigned operand of a u8 x s8 dot product),
//             with key_terms[j] = -q_zp * sum_i (k[j][i] + 128);
//   - values: N = value channels, K = keys: channel c, key j at
//             packed_offset(c, j, packed_k(keys)), as they are (signed);
//   - per tile: the rows' int32 scores, their Q15 probabilities, and the
//             probabilities split into low and high bytes (u8 planes).
// The runtime's plan declares these bytes (runtime/src/plan.cc) whenever a
// layer may run kQs8AttnTileMinRows query rows or more; below that the kernels
// take the row-at-a-time path and need no tile scratch (a decoder step with
// one query would spend more on repacking than it saves).
// The sizes and the carve are the contract; what each region holds is
// private to a kernel (the x86 kernels store the keys as described above
// but the values as byte pairs of two keys for VPDPWSSD on the 16-bit
// probabilities, and leave the byte planes unused:
// kernels/qs8-attention-tile/qs8-attention-tile-stages-avx512vnni.cc; the Arm kernels store keys as
// signed k for SDOT and, with dot products, values as v + 128 for UDOT:
// kernels/isa/neon/attention_tile_neon.h). Kernels that do not tile ignore the
// scratch. Contents on entry do not matter.
#ifndef EDGEATTN_KERNELS_ATTENTION_TILE_H_
#define EDGEATTN_KERNELS_ATTENTION_TILE_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "edgeattn/kernels/packed_weights.h"

namespace edgeattn {
namespace kernels {

constexpr int kQs8AttnTileRows = 8;
constexpr int kQs8AttnTileMinRows = 4;

// Row stride (elements) of the per-tile buffers: whole 16-key blocks (one
// zmm of int32 scores), so a row's vector loops need no tail and small
// models (Cortex-M, where no kernel tiles yet) carry little of this scratch.
constexpr int qs8_attn_tile_stride(int kv_len) { return (kv_len + 15) / 16 * 16; }

struct Qs8AttnTile {
  int8_t* keys;         // packed_weight_bytes(kv_len, head_dim)
  int32_t* key_terms;   // packed_n(kv_len)
  int8_t* values;       // packed_weight_bytes(v_dim, kv_len)
  int32_t* scores;      // [kQs8AttnTileRows][stride]
  uint16_t* probs;      // [kQs8AttnTileRows][stride]
  uint8_t* p_lo;        // [kQs8AttnTileRows][stride]
  uint8_t* p_hi;        // [kQs8AttnTileRows][stride]
  int stride;
  int value_keys;       // packed_k of the keys the values were packed for
  int key_flags;        // set by pack, the path's own (neon: a key has the -128 pair)
};

namespace tile_detail {
constexpr size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }
}  // namespace tile_detail

// Bytes of the tile scratch for one head of kv_len keys (64 bytes of slack let
// the kernel align the start to 64 whatever the arena's alignment).
constexpr size_t qs8_attention_tile_bytes(int kv_len, int head_dim, int v_dim) {
  using tile_detail::align64;
  const size_t rows = static_cast<size_t>(kQs8AttnTileRows) * qs8_attn_tile_stride(kv_len);
  return 64 + align64(packed_weight_bytes(kv_len, head_dim)) +
         align64(sizeof(int32_t) * packed_n(kv_len)) + align64(packed_weight_bytes(v_dim, kv_len)) +
         align64(rows * sizeof(int32_t)) + align64(rows * sizeof(uint16_t)) + 2 * align64(rows);
}

// The query rows m .. m + n - 1 of one tile (n <= kQs8AttnTileRows): the
// keys each row sees and, filled by the softmax stage, the sum of its
// probabilities.
struct Qs8AttnTileRows {
  int m, n;
  int limit[kQs8AttnTileRows];
  int32_t p_sum[kQs8AttnTileRows];
};
struct QS8AttentionArgs;
// Out of line and built without ISA flags (kernels/ref/attention_tiled.cc),
// so every kernel path can call the one copy.
void qs8_attention_tile_rows(const QS8AttentionArgs& a, int m, Qs8AttnTileRows* rows);
// Each tile row's partial last 4-byte group of q (head_dim % 4 bytes,
// zero-padded to a word): the broadcast operand of a 4-byte dot product's
// last K step, which must not read past the row. Writes nothing when
// head_dim is a multiple of 4 (there is no such group to read). Also out of
// line.
void qs8_attention_tile_q_tails(const QS8AttentionArgs& a, const Qs8AttnTileRows& rows, int32_t* q_tail);

// One tiling path's stages, run by qs8_attention_tiled_with below. `keys` is
// the tile's key count (the last row's limit: limits never decrease down
// the rows); each stage's result is checked on its own against the row
// reference (tests/kernels/qs8_attention_tile_test.cc) and timed on its own
// (kernels_bench, mha_tile_stage_qs8).
//  - pack:    the keys and values of keys [0, keys) into t, in the path's own
//             layout; sets t->value_keys = packed_k(keys).
//  - qk:      t.scores of the tile's rows over [0, keys); row r's first
//             limit[r] scores are qs8_qk_row's, or qs8_qk_row's plus one
//             constant of the row (the softmax sees only max - s_j; the Arm
//             kernels leave out the row term).
//  - softmax: row r's probabilities over [0, limit[r]) (qs8_softmax_row's;
//             0 up to packed_k(keys)) in the path's form for pv, their sum in
//             rows->p_sum[r], and when a.weights is set the row's weights
//             (write_weights_row), with t.probs holding the probabilities.
//  - pv:      the tile's output rows (qs8_pv_row's over those probabilities).
struct SoftmaxExpParams;
struct Qs8AttnTileStages {
  void (*pack)(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t);
  void (*qk)(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys);
  void (*softmax)(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t,
                  Qs8AttnTileRows* rows, int keys);
  void (*pv)(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys);
};

// Calls f(std::integral_constant<int, m>()) with m = n clamped to [1, kMax],
// so that a stage runs register tiles of exactly the rows it has.
template <int kMax, class F>
inline void with_tile_rows(int n, F&& f) {
  if constexpr (kMax > 1) {
    if (n < kMax) {
      with_tile_rows<kMax - 1>(n, f);
      return;
    }
  }
  f(std::integral_constant<int, kMax>());
}

// Whether a head takes the tiles: tile scratch given, at least
// kQs8AttnTileMinRows query rows and a key to attend to. Else the kernel
// runs its row-at-a-time path.
bool qs8_attention_tiles_apply(const QS8AttentionArgs& a);

// The tile loop every tiling path shares: pack once per head, then per tile
// of up to kQs8AttnTileRows query rows qk, softmax and pv. Only when
// qs8_attention_tiles_apply(a).
void qs8_attention_tiled_with(const Qs8AttnTileStages& s, const QS8AttentionArgs& a);

inline Qs8AttnTile carve_qs8_attention_tile(void* scratch, int kv_len, int head_dim, int v_dim) {
  using tile_detail::align64;
  uintptr_t p = (reinterpret_cast<uintptr_t>(scratch) + 63) / 64 * 64;
  auto take = [&p](size_t bytes) {
    const uintptr_t at = p;
    p += align64(bytes);
    return at;
  };
  Qs8AttnTile t;
  t.stride = qs8_attn_tile_stride(kv_len);
  t.value_keys = 0;
  t.key_flags = 0;
  const size_t rows = static_cast<size_t>(kQs8AttnTileRows) * t.stride;
  t.keys = reinterpret_cast<int8_t*>(take(packed_weight_bytes(kv_len, head_dim)));
  t.key_terms = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * packed_n(kv_len)));
  t.values = reinterpret_cast<int8_t*>(take(packed_weight_bytes(v_dim, kv_len)));
  t.scores = reinterpret_cast<int32_t*>(take(rows * sizeof(int32_t)));
  t.probs = reinterpret_cast<uint16_t*>(take(rows * sizeof(uint16_t)));
  t.p_lo = reinterpret_cast<uint8_t*>(take(rows));
  t.p_hi = reinterpret_cast<uint8_t*>(take(rows));
  return t;
}

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ATTENTION_TILE_H_
