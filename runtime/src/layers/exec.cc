#include "exec.h"

#include "../xnnpack_backend.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/stage_profile.h"

namespace edgeattn {

namespace k = kernels;

void Projection::Set(const fb::Model& model, const Call& c, const fb::Linear* l, const Residual* r) {
  s8 = c.int8();
  in = static_cast<int>(l->in_features());
  out = static_cast<int>(l->out_features());
  res = r != nullptr ? r->x : nullptr;
  res_rows = r != nullptr && r->one_row ? 0 : 1;
  if (s8 || !kWithF32) {
    const auto* rq = l->requant();
    w8 = tensor_data<int8_t>(model, l->weight());
    // Range mode: the biases divided by R, computed once before any split.
    bias32 = c.range != nullptr ? c.range->adjust_bias(model, l, *c.range) : tensor_data<int32_t>(model, l->bias());
    mult = rq->multiplier()->data();
    shift = rq->shift()->data();
    per_channel = rq->multiplier()->size() > 1 ? 1 : 0;
    zp = l->output()->zero_point();
    res16 = kWithInt16Stream && r != nullptr && r->s16;
    if (res16 && r->add == nullptr) {  // contract 5c-out: a zero residual
      term16.mult = 0;
      term16.shift = k::kResidual5cOutShift;
    } else if (res16) {  // contract 5c's term; verify_add checked A and n
      term16.mult = r->add->a_multiplier();
      term16.shift = r->add->shift();
    } else if (r != nullptr) {  // contract 5b's term; verify_add checked A, n and both int8 zero points
      const fb::ResidualAdd* a = r->add;
      term.mult = a->a_multiplier();
      term.shift = a->shift();
      term.a_zp = a->a()->zero_point();
      term.y_zp = a->output()->zero_point();
    }
  } else {
    wf = tensor_data<float>(model, l->weight());
    w_stride = static_cast<int>(l->weight()->row_stride());
    biasf = tensor_data<float>(model, l->bias());
  }
}

void Projection::Rows(int r0, int r1, const void* x, void* y) const {
  EA_STAGE_MACS(static_cast<long long>(r1 - r0) * in * out);
  EA_STAGE_ENTER(outer, EA_STAGE_GEMM);
  const size_t at = static_cast<size_t>(r0) * out;
  if (s8 || !kWithF32) {
    const int8_t* xr = static_cast<const int8_t*>(x) + static_cast<size_t>(r0) * in;
    int8_t* yr = static_cast<int8_t*>(y) + at;
    if (kWithInt16Stream && res16) {
      const k::QS16Residual rs = {static_cast<const int16_t*>(res) + at * res_rows, out * res_rows, term16};
      k::qs8_linear_res16_kernel()(r1 - r0, out, in, xr, in, w8, bias32, mult, shift, per_channel, rs,
                                    static_cast<int16_t*>(y) + at, out);
    } else if (res != nullptr) {
      const k::QS8Residual rs = {static_cast<const int8_t*>(res) + at, out, term};
      k::qs8_linear_res_kernel()(r1 - r0, out, in, xr, in, w8, bias32, mult, shift, per_channel, rs, yr, out);
    } else {
      k::qs8_linear_kernel()(r1 - r0, out, in, xr, in, w8, bias32, mult, shift, per_channel, zp, yr, out);
    }
  } else {
    float* yr = static_cast<float*>(y) + at;
    k::f32_linear_kernel()(r1 - r0, out, in, static_cast<const float*>(x) + static_cast<size_t>(r0) * in, in, wf,
                           w_stride, biasf, yr, out);
    if (res != nullptr) k::f32_add_kernel()(r1 - r0, out, static_cast<const float*>(res) + at, out, yr, out, yr, out);
  }
  EA_STAGE_LEAVE(outer);
}

void Projection::Channels(int c0, int c1, int rows, const void* x, void* y) const {
  EA_STAGE_MACS(static_cast<long long>(rows) * (c1 - c0) * in);
  EA_STAGE_ENTER(outer, EA_STAGE_GEMM);
  if (s8 || !kWithF32) {
    const size_t block_bytes = static_cast<size_t>(k::kLinearChannelBlock) * static_cast<size_t>((in + 3) / 4 * 4);
    const int8_t* w = w8 + static_cast<size_t>(c0 / k::kLinearChannelBlock) * block_bytes;
    const int32_t* b = bias32 != nullptr ? bias32 + c0 : nullptr;
    const int32_t* m = per_channel ? mult + c0 : mult;
    const int32_t* sh = per_channel ? shift + c0 : shift;
    int8_t* yc = static_cast<int8_t*>(y) + c0;
    if (kWithInt16Stream && res16) {
      const k::QS16Residual rs = {static_cast<const int16_t*>(res) + c0, out * res_rows, term16};
      k::qs8_linear_res16_kernel()(rows, c1 - c0, in, static_cast<const int8_t*>(x), in, w, b, m, sh, per_channel,
                                    rs, static_cast<int16_t*>(y) + c0, out);
    } else if (res != nullptr) {
      const k::QS8Residual rs = {static_cast<const int8_t*>(res) + c0, out, term};
      k::qs8_linear_res_kernel()(rows, c1 - c0, in, static_cast<const int8_t*>(x), in, w, b, m, sh, per_channel, rs,
                                 yc, out);
    } else {
      k::qs8_linear_kernel()(rows, c1 - c0, in, static_cast<const int8_t*>(x), in, w, b, m, sh, per_channel, zp, yc,
                             out);
    }
  } else {
    float* yc = static_cast<float*>(y) + c0;
    k::f32_linear_kernel()(rows, c1 - c0, in, static_cast<const float*>(x), in,
                           wf + static_cast<size_t>(c0) * w_stride, w_stride,
                           biasf != nullptr ? biasf + c0 : nullptr, yc, out);
    if (res != nullptr) k::f32_add_kernel()(rows, c1 - c0, static_cast<const float*>(res) + c0, out, yc, out, yc, out);
  }
  EA_STAGE_LEAVE(outer);
}

LinearStep::LinearStep(const fb::Model& model, const Call& c, const fb::Linear* const* ls, int n, const void* x,
                       void* const* ys)
    : work_per_row(0), model_(model), c_(c), ls_(), ys_(), n_(n), x_(x) {
  for (int i = 0; i < n; ++i) {
    ls_[i] = ls[i];
    ys_[i] = ys[i];
    work_per_row += static_cast<uint64_t>(ls[i]->in_features()) * ls[i]->out_features();
  }
}

void LinearStep::Prepare() {
  for (int i = 0; i < n_; ++i) ps_[i].Set(model_, c_, ls_[i], has_res_ ? &res_ : nullptr);
}

void LinearStep::Alone(int rows) const {
  if (n_ == 1) {
    run_linear(model_, c_, ls_[0], rows, x_, ys_[0], has_res_ ? &res_ : nullptr);
  } else {
    run_linears_same_input(model_, c_, ls_, n_, rows, x_, ys_);
  }
}

void run_linear(const fb::Model& model, const Call& c, const fb::Linear* l, int rows, const void* x,
                void* y, const Residual* res) {
  if (c.int8() && c.range == nullptr && res == nullptr &&
      xnnpack::run_linear(c.xnn, l, rows, static_cast<const int8_t*>(x), static_cast<int8_t*>(y))) {
    return;
  }
  Projection p;
  p.Set(model, c, l, res);
  // Row tiles, or 16-channel blocks for few rows (k::linear_split). Each
  // output element is one dot product whatever the tile: any split, same bytes.
  const k::LinearSplit split = k::linear_split(rows, p.in, p.out, pool_workers(c.pool), pool_min_work(c.pool));
  parallel_ranges(c.pool, split.units, split.tasks, [&](int begin, int end, int) {
    if (split.by_rows) {
      const k::TaskRange r = k::linear_rows({begin, end}, rows);
      p.Rows(r.begin, r.end, x, y);
    } else {
      const k::TaskRange ch = k::linear_channels({begin, end}, p.out);
      p.Channels(ch.begin, ch.end, rows, x, y);
    }
  });
}

void run_linears_same_input(const fb::Model& model, const Call& c, const fb::Linear* const* ls, int n, int rows,
                            const void* x, void* const* ys) {
  // Separately when XNNPACK may take them, in range mode (one bias workspace)
  // or when the rows are too few for row tiles.
  int out = 0;
  for (int i = 0; i < n; ++i) out += static_cast<int>(ls[i]->out_features());
  const k::LinearSplit split =
      k::linear_split(rows, static_cast<int>(ls[0]->in_features()), out, pool_workers(c.pool), pool_min_work(c.pool));
  if (c.pool == nullptr || c.xnn != nullptr || c.range != nullptr || !split.by_rows || split.tasks < 2 ||
      n > kMaxLayerProjections) {
    for (int i = 0; i < n; ++i) run_linear(model, c, ls[i], rows, x, ys[i]);
    return;
  }
  Projection ps[kMaxLayerProjections];
  for (int i = 0; i < n; ++i) ps[i].Set(model, c, ls[i]);
  parallel_ranges(c.pool, split.units, split.tasks, [&](int begin, int end, int) {
    const k::TaskRange r = k::linear_rows({begin, end}, rows);
    for (int i = 0; i < n; ++i) ps[i].Rows(r.begin, r.end, x, ys[i]);
  });
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
  const bool tile = c.int8() && rows >= k::kQs8AttnTileMinRows && c.layer->tile_scratch();
  // Rows row0.. of the call: query, output and weights rows move down; the
  // causal mask stays where the whole call put it (key j visible to query
  // row i when j <= i + kv_len - q_len).
  const size_t es = elem_size(c.int8());
  const void* q = static_cast<const uint8_t*>(h.q) + static_cast<size_t>(row0) * h.q_stride * es;
  void* out = static_cast<uint8_t*>(h.out) + static_cast<size_t>(row0) * h.out_stride * es;
  void* weights = h.weights == nullptr ? nullptr
                  : static_cast<uint8_t*>(h.weights) +
                        static_cast<size_t>(row0) * c.kv_len * (c.int8() ? 2 : 4);
  const int causal_offset = c.kv_len - c.q_len + row0;
  const RowScratch rs = row_scratch(c.int8(), tile, c.kv_len, h.head_dim, h.v_dim);
  uint8_t* const row = row_scratch_base;
  if (c.int8()) {
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
    k::qs8_attention_kernel()(a);
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
    k::f32_attention_kernel()(a);
  }
}

}  // namespace edgeattn
