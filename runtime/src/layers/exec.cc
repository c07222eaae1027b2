#include "exec.h"

#include "../xnnpack_backend.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {

namespace k = kernels;

void run_linear(const fb::Model& model, const fb::Linear* l, bool s8, int rows, const void* x,
                void* y, const void* xnn, const RangeScale* range) {
  if (s8 && range == nullptr && xnnpack::run_linear(xnn, l, rows, static_cast<const int8_t*>(x),
                                static_cast<int8_t*>(y))) {
    return;
  }
  const int in = static_cast<int>(l->in_features());
  const int out = static_cast<int>(l->out_features());
  if (s8) {  // weights in the packed K4N16 layout (schema/edgeattn.fbs)
    const auto* r = l->requant();
    k::kernels().qs8_linear(rows, out, in, static_cast<const int8_t*>(x), in,
                       tensor_data<int8_t>(model, l->weight()),
                       range != nullptr ? range->adjust_bias(model, l, *range)
                                        : tensor_data<int32_t>(model, l->bias()),
                       r->multiplier()->data(),
                       r->shift()->data(), r->multiplier()->size() > 1 ? 1 : 0,
                       l->output()->zero_point(), static_cast<int8_t*>(y), out);
  } else {
    const int w_stride = static_cast<int>(l->weight()->row_stride());
    k::kernels().f32_linear(rows, out, in, static_cast<const float*>(x), in,
                       tensor_data<float>(model, l->weight()), w_stride,
                       tensor_data<float>(model, l->bias()), static_cast<float*>(y), out);
  }
}

RowScratch row_scratch(bool s8, bool tile, int kv_len, int head_dim, int v_dim) {
  const uint64_t kv = kv_len > 0 ? static_cast<uint64_t>(kv_len) : 0;
  Regions r;
  RowScratch rs = {};
  rs.scores = r.Add(kv * 4);  // int32 or float
  if (s8) {
    rs.probs = r.Add(kv * 2);
    if (tile) rs.tile = r.Add(k::qs8_attention_tile_bytes(kv_len, head_dim, v_dim));
  }
  rs.bytes = r.bytes();
  return rs;
}

RowScratch planned_row_scratch(const LayerShape& shape, int q_len, int kv_len, bool dot_product) {
  const bool tile = dot_product && shape.tile_scratch && q_len >= k::kQs8AttnTileMinRows;
  return row_scratch(shape.dtype == EA_S8, tile, kv_len, shape.head_dim, shape.v_dim);
}

void run_head(const Call& c, const HeadView& h, float scale, const fb::SoftmaxQuant* sq,
              bool causal, uint8_t* row_scratch_base) {
  // Planned (plan_layer) whenever the layer may run this many query rows.
  const bool tile = c.s8 && c.q_len >= k::kQs8AttnTileMinRows && c.layer->tile_scratch();
  const RowScratch rs = row_scratch(c.s8, tile, c.kv_len, h.head_dim, h.v_dim);
  uint8_t* const row = row_scratch_base;
  if (c.s8) {
    k::QS8AttentionArgs a = {};
    a.q_len = c.q_len; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const int8_t*>(h.q); a.q_stride = h.q_stride; a.q_zp = h.q_zp;
    a.k = static_cast<const int8_t*>(h.k); a.k_stride = h.k_stride; a.k_zp = h.k_zp;
    a.v = static_cast<const int8_t*>(h.v); a.v_stride = h.v_stride; a.v_zp = h.v_zp;
    a.score_mult = c.range != nullptr ? c.range->score_mult : sq->score_multiplier();
    a.score_shift = c.range != nullptr ? c.range->score_shift : sq->score_shift();
    a.pv_mult = sq->pv_multiplier(); a.pv_shift = sq->pv_shift();
    a.out_zp = h.out_zp;
    a.causal = causal; a.causal_offset = c.kv_len - c.q_len; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<int8_t*>(h.out); a.out_stride = h.out_stride;
    a.weights = static_cast<uint16_t*>(h.weights); a.weights_stride = c.kv_len;
    a.scratch = reinterpret_cast<int32_t*>(row + rs.scores);
    a.prob_scratch = reinterpret_cast<uint16_t*>(row + rs.probs);
    if (tile) a.tile_scratch = row + rs.tile;
    k::kernels().qs8_attention(a);
  } else {
    k::F32AttentionArgs a = {};
    a.q_len = c.q_len; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const float*>(h.q); a.q_stride = h.q_stride;
    a.k = static_cast<const float*>(h.k); a.k_stride = h.k_stride;
    a.v = static_cast<const float*>(h.v); a.v_stride = h.v_stride;
    a.scale = scale;
    a.causal = causal; a.causal_offset = c.kv_len - c.q_len; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<float*>(h.out); a.out_stride = h.out_stride;
    a.weights = static_cast<float*>(h.weights); a.weights_stride = c.kv_len;
    a.scratch = reinterpret_cast<float*>(row + rs.scores);
    k::kernels().f32_attention(a);
  }
}

}  // namespace edgeattn
