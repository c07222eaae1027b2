#include "edgeattn/plan.h"

#include "edgeattn/kernels/attention_tile.h"

namespace edgeattn {

// Sizes are computed in 64 bits: verified models bound every dimension
// (<= 16384) and length (<= 65535), so no product overflows here even on
// 32-bit targets, and Model::Load rejects plans above kMaxArenaBytes.
LayerPlan plan_layer(const LayerShape& shape, int q_len, int kv_len) {
  const uint64_t elem = shape.dtype == EA_S8 ? 1 : 4;
  const uint64_t q = q_len > 0 ? static_cast<uint64_t>(q_len) : 0;
  const uint64_t kv = kv_len > 0 ? static_cast<uint64_t>(kv_len) : 0;
  // One row of scores (int32 or float) and, for int8, its Q15 probabilities.
  uint64_t row = align_up(kv * 4);
  if (shape.dtype == EA_S8) row += align_up(kv * 2);
  if (shape.dtype == EA_S8 && shape.kind != EA_LAYER_ADDITIVE &&
      q_len >= kernels::kQs8AttnTileMinRows) {
    row += align_up(kernels::qs8_attention_tile_bytes(kv_len, shape.head_dim, shape.v_dim));
  }

  LayerPlan plan = {0, row};
  switch (shape.kind) {
    case EA_LAYER_MULTI_HEAD_ATTENTION: {
      const uint64_t e = static_cast<uint64_t>(shape.embed_dim);
      const uint64_t kv_proj = 2 * align_up(kv * e * elem);
      plan.scratch_bytes += 2 * align_up(q * e * elem);
      if (shape.cross) {
        plan.cache_bytes = kv_proj;
      } else {
        plan.scratch_bytes += kv_proj;
      }
      break;
    }
    case EA_LAYER_ADDITIVE: {
      const uint64_t a = static_cast<uint64_t>(shape.attn_dim);
      plan.scratch_bytes += align_up(q * a * elem);
      plan.cache_bytes = align_up(kv * a * elem);
      break;
    }
    case EA_LAYER_LUONG:
      if (shape.projects_query) {
        plan.scratch_bytes += align_up(q * static_cast<uint64_t>(shape.key_dim) * elem);
      }
      break;
    case EA_LAYER_POOLING:
      break;
  }
  return plan;
}

}  // namespace edgeattn
