// The per-row setup of a tile of the tiled int8 attention (attention_tile.h).
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {

void qs8_attention_tile_rows(const QS8AttentionArgs& a, int m, Qs8AttnTileRows* rows) {
  const int groups = a.head_dim / 4;
  rows->m = m;
  rows->n = a.q_len - m < kQs8AttnTileRows ? a.q_len - m : kQs8AttnTileRows;
  for (int r = 0; r < rows->n; ++r) {
    const int8_t* q = a.q + static_cast<ptrdiff_t>(m + r) * a.q_stride;
    rows->limit[r] = attention_row_limit(m + r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
    uint32_t b = 0;  // sum_i (q_i - zq), wrapping like the kernels' int32 sums
    for (int i = 0; i < a.head_dim; ++i) b += static_cast<uint32_t>(static_cast<int32_t>(q[i]) - a.q_zp);
    rows->neg_row_term[r] = static_cast<int32_t>(0u - (128u + static_cast<uint32_t>(a.k_zp)) * b);
    uint32_t tail = 0;
    for (int i = 4 * groups; i < a.head_dim; ++i) {
      tail |= static_cast<uint32_t>(static_cast<uint8_t>(q[i])) << (8 * (i - 4 * groups));
    }
    rows->q_tail[r] = static_cast<int32_t>(tail);
    rows->p_sum[r] = 0;
  }
}

}  // namespace kernels
}  // namespace edgeattn
