#include "exec.h"

#include "../xnnpack_backend.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {

namespace k = kernels;

void run_linear(const fb::Model& model, const Call& c, const fb::Linear* l, int rows, const void* x,
                void* y) {
  if (c.s8 && c.range == nullptr && xnnpack::run_linear(c.xnn, l, rows, static_cast<const int8_t*>(x),
                                    static_cast<int8_t*>(y))) {
    return;
  }
  const int in = static_cast<int>(l->in_features());
  const int out = static_cast<int>(l->out_features());
  // Row tiles, or 16-channel blocks for few rows (k::linear_split). Each
  // output element is one dot product whatever the tile: any split, same bytes.
  const k::LinearSplit split = k::linear_split(rows, in, out, pool_workers(c.pool), pool_min_work(c.pool));
  if (c.s8) {  // weights in the packed K4N16 layout (schema/edgeattn.fbs)
    const auto* r = l->requant();
    const int8_t* w = tensor_data<int8_t>(model, l->weight());
    // Range mode: the biases divided by R, computed once before the split.
    const int32_t* bias = c.range != nullptr ? c.range->adjust_bias(model, l, *c.range)
                                             : tensor_data<int32_t>(model, l->bias());
    const int32_t* mult = r->multiplier()->data();
    const int32_t* shift = r->shift()->data();
    const int per_channel = r->multiplier()->size() > 1 ? 1 : 0;
    const int32_t zp = l->output()->zero_point();
    const size_t block_bytes = static_cast<size_t>(k::kLinearChannelBlock) * static_cast<size_t>((in + 3) / 4 * 4);
    const auto* xs = static_cast<const int8_t*>(x);
    auto* ys = static_cast<int8_t*>(y);
    parallel_ranges(c.pool, split.units, split.tasks, [&](int begin, int end, int) {
      if (split.by_rows) {
        const k::TaskRange r = k::linear_rows({begin, end}, rows);
        k::kernels().qs8_linear(r.end - r.begin, out, in, xs + static_cast<size_t>(r.begin) * in, in, w, bias,
                                mult, shift, per_channel, zp, ys + static_cast<size_t>(r.begin) * out, out);
      } else {
        const k::TaskRange ch = k::linear_channels({begin, end}, out);
        const int c0 = ch.begin;
        k::kernels().qs8_linear(rows, ch.end - c0, in, xs, in, w + static_cast<size_t>(begin) * block_bytes,
                                bias != nullptr ? bias + c0 : nullptr, per_channel ? mult + c0 : mult,
                                per_channel ? shift + c0 : shift, per_channel, zp, ys + c0, out);
      }
    });
  } else {
    const int w_stride = static_cast<int>(l->weight()->row_stride());
    const float* w = tensor_data<float>(model, l->weight());
    const float* bias = tensor_data<float>(model, l->bias());
    const auto* xs = static_cast<const float*>(x);
    auto* ys = static_cast<float*>(y);
    parallel_ranges(c.pool, split.units, split.tasks, [&](int begin, int end, int) {
      if (split.by_rows) {
        const k::TaskRange r = k::linear_rows({begin, end}, rows);
        k::kernels().f32_linear(r.end - r.begin, out, in, xs + static_cast<size_t>(r.begin) * in, in, w, w_stride,
                                bias, ys + static_cast<size_t>(r.begin) * out, out);
      } else {
        const k::TaskRange ch = k::linear_channels({begin, end}, out);
        k::kernels().f32_linear(rows, ch.end - ch.begin, in, xs, in, w + static_cast<size_t>(ch.begin) * w_stride,
                                w_stride, bias != nullptr ? bias + ch.begin : nullptr, ys + ch.begin, out);
      }
    });
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

void run_head(const Call& c, const HeadView& h, int row0, int rows, float scale,
              const fb::SoftmaxQuant* sq, bool causal, uint8_t* row_scratch_base) {
  // Planned (plan_layer) whenever the layer may run this many query rows.
  const bool tile = c.s8 && rows >= k::kQs8AttnTileMinRows && c.layer->tile_scratch();
  // Rows row0.. of the call: query, output and weights rows move down; the
  // causal mask stays where the whole call put it (key j visible to query
  // row i when j <= i + kv_len - q_len).
  const size_t es = elem_size(c.s8);
  const void* q = static_cast<const uint8_t*>(h.q) + static_cast<size_t>(row0) * h.q_stride * es;
  void* out = static_cast<uint8_t*>(h.out) + static_cast<size_t>(row0) * h.out_stride * es;
  void* weights = h.weights == nullptr ? nullptr
                  : static_cast<uint8_t*>(h.weights) +
                        static_cast<size_t>(row0) * c.kv_len * (c.s8 ? 2 : 4);
  const int causal_offset = c.kv_len - c.q_len + row0;
  const RowScratch rs = row_scratch(c.s8, tile, c.kv_len, h.head_dim, h.v_dim);
  uint8_t* const row = row_scratch_base;
  if (c.s8) {
    k::QS8AttentionArgs a = {};
    a.q_len = rows; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const int8_t*>(q); a.q_stride = h.q_stride; a.q_zp = h.q_zp;
    a.k = static_cast<const int8_t*>(h.k); a.k_stride = h.k_stride; a.k_zp = h.k_zp;
    a.v = static_cast<const int8_t*>(h.v); a.v_stride = h.v_stride; a.v_zp = h.v_zp;
    a.score_mult = c.range != nullptr ? c.range->score_mult : sq->score_multiplier();
    a.score_shift = c.range != nullptr ? c.range->score_shift : sq->score_shift();
    a.pv_mult = sq->pv_multiplier(); a.pv_shift = sq->pv_shift();
    a.out_zp = h.out_zp;
    a.causal = causal; a.causal_offset = causal_offset; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<int8_t*>(out); a.out_stride = h.out_stride;
    a.weights = static_cast<uint16_t*>(weights); a.weights_stride = c.kv_len;
    a.scratch = reinterpret_cast<int32_t*>(row + rs.scores);
    a.prob_scratch = reinterpret_cast<uint16_t*>(row + rs.probs);
    if (tile) a.tile_scratch = row + rs.tile;
    k::kernels().qs8_attention(a);
  } else {
    k::F32AttentionArgs a = {};
    a.q_len = rows; a.kv_len = c.kv_len; a.head_dim = h.head_dim; a.v_dim = h.v_dim;
    a.q = static_cast<const float*>(q); a.q_stride = h.q_stride;
    a.k = static_cast<const float*>(h.k); a.k_stride = h.k_stride;
    a.v = static_cast<const float*>(h.v); a.v_stride = h.v_stride;
    a.scale = scale;
    a.causal = causal; a.causal_offset = causal_offset; a.kv_valid_len = c.kv_valid_len;
    a.out = static_cast<float*>(out); a.out_stride = h.out_stride;
    a.weights = static_cast<float*>(weights); a.weights_stride = c.kv_len;
    a.scratch = reinterpret_cast<float*>(row + rs.scores);
    k::kernels().f32_attention(a);
  }
}

}  // namespace edgeattn
