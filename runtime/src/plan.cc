#include "edgeattn/plan.h"

#include "edgeattn/kernels/attention_tile.h"
#include "layers/layer_kind.h"

namespace edgeattn {

// Sizes are computed in 64 bits: verified models bound every dimension
// (<= 16384) and length (<= 65535), so no product overflows here even on
// 32-bit targets, and Model::Load rejects plans above kMaxArenaBytes.
uint64_t attention_row_bytes(const LayerShape& shape, int q_len, int kv_len, bool dot_product) {
  const uint64_t kv = kv_len > 0 ? static_cast<uint64_t>(kv_len) : 0;
  uint64_t row = align_up(kv * 4);
  if (shape.dtype == EA_S8) {
    row += align_up(kv * 2);
    if (dot_product && shape.tile_scratch && q_len >= kernels::kQs8AttnTileMinRows) {
      row += align_up(kernels::qs8_attention_tile_bytes(kv_len, shape.head_dim, shape.v_dim));
    }
  }
  return row;
}

LayerPlan plan_layer(const LayerShape& shape, int q_len, int kv_len) {
  const LayerKindModule* kind = find_layer_kind(shape.kind);
  if (kind == nullptr) return LayerPlan{kMaxArenaBytes + 1, kMaxArenaBytes + 1, 0};
  return kind->plan(shape, q_len > 0 ? q_len : 0, kv_len > 0 ? kv_len : 0);
}

uint64_t lay_out_graph(const GraphTensor* tensors, int n, uint64_t* offsets) {
  // Largest first (ties in step order), so that a smaller tensor never holds
  // the start of a region a larger one needs later: in a model whose first
  // step's output is a little smaller than the blocks' (KWT: 98 frame rows,
  // then 99 with the class row) first fit in step order would open a third
  // region. No array of indices: n <= kMaxGraphSteps rounds of a scan.
  uint64_t total = 0;
  uint64_t placed = 0;  // bit i: tensor i has its offset
  for (int round = 0; round < n; ++round) {
    int i = -1;
    for (int t = 0; t < n; ++t) {
      if ((placed >> t & 1u) == 0 && (i < 0 || align_up(tensors[t].bytes) > align_up(tensors[i].bytes))) i = t;
    }
    // The lowest offset where tensor i fits between the placed tensors it
    // lives beside: try 0, then the end of each such tensor.
    uint64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < n; ++j) {
        if ((placed >> j & 1u) == 0) continue;
        const bool live_together = tensors[j].first <= tensors[i].last && tensors[i].first <= tensors[j].last;
        const uint64_t end = offsets[j] + align_up(tensors[j].bytes);
        if (live_together && offsets[j] < at + align_up(tensors[i].bytes) && at < end) {
          at = end;
          moved = true;
        }
      }
    }
    offsets[i] = at;
    placed |= uint64_t{1} << i;
    if (at + align_up(tensors[i].bytes) > total) total = at + align_up(tensors[i].bytes);
  }
  return total;
}

ArenaLayout lay_out_arena(const LayerPlan* plans, int num_layers, uint64_t* cache_offsets,
                          uint64_t activation_bytes) {
  ArenaBuilder arena;
  for (int i = 0; i < num_layers; ++i) {
    const uint64_t offset = arena.Add(plans[i]);
    if (cache_offsets != nullptr) cache_offsets[i] = offset;
  }
  return arena.Finish(activation_bytes);
}

}  // namespace edgeattn
