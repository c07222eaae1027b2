// The tile loop of the tiled int8 attention (attention_tile.h) and its
// per-tile row setup, shared by every tiling path; built without ISA flags,
// the stages it calls are the paths' own.
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

void qs8_attention_tile_rows(const QS8AttentionArgs& a, int m, Qs8AttnTileRows* rows) {
  rows->m = m;
  rows->n = a.q_len - m < kQs8AttnTileRows ? a.q_len - m : kQs8AttnTileRows;
  for (int r = 0; r < rows->n; ++r) {
    rows->limit[r] = attention_row_limit(m + r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    rows->p_sum[r] = 0;
  }
}

void qs8_attention_tile_q_tails(const QS8AttentionArgs& a, const Qs8AttnTileRows& rows, int32_t* q_tail) {
  const int full = a.head_dim / 4 * 4;
  if (full == a.head_dim) return;
  for (int r = 0; r < rows.n; ++r) {
    const int8_t* q = a.q + static_cast<ptrdiff_t>(rows.m + r) * a.q_stride;
    uint32_t tail = 0;
    for (int i = full; i < a.head_dim; ++i) tail |= static_cast<uint32_t>(static_cast<uint8_t>(q[i])) << (8 * (i - full));
    q_tail[r] = static_cast<int32_t>(tail);
  }
}

bool qs8_attention_tiles_apply(const QS8AttentionArgs& a) {
  return a.tile_scratch != nullptr && a.q_len >= kQs8AttnTileMinRows &&
         attention_row_limit(a.q_len - 1, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset) > 0;
}

void qs8_attention_tiled_with(const Qs8AttnTileStages& s, const QS8AttentionArgs& a) {
  // The last row sees the most keys: pack those once for the head.
  const int keys = attention_row_limit(a.q_len - 1, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
  Qs8AttnTile t = carve_qs8_attention_tile(a.tile_scratch, a.kv_len, a.head_dim, a.v_dim);
  s.pack(a, keys, &t);
  const SoftmaxExpParams x = softmax_exp_params(a.score_mult, a.score_shift);
  for (int m = 0; m < a.q_len; m += kQs8AttnTileRows) {
    Qs8AttnTileRows rows;
    qs8_attention_tile_rows(a, m, &rows);
    const int tile_keys = rows.limit[rows.n - 1];
    s.qk(a, t, rows, tile_keys);
    s.softmax(a, x, t, &rows, tile_keys);
    s.pv(a, t, rows, tile_keys);
  }
}

}  // namespace kernels
}  // namespace edgeattn
