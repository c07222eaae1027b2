// What every layer kind's run() shares: the checked arguments of one call
// (Call), sequential carving of arena regions in plan order, the int8/float
// linear over packed or row-major weights, and one attention head over
// projected q/k/v (the scaled dot-product core of MHA, Luong and pooling).
#ifndef EDGEATTN_RUNTIME_LAYERS_EXEC_H_
#define EDGEATTN_RUNTIME_LAYERS_EXEC_H_

#include <cstddef>
#include <cstdint>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/plan.h"

namespace edgeattn {

// A kind's arena buffers described once: its layout() adds each buffer in
// order (16-byte aligned) and keeps the offset; plan() reads the totals and
// run() the offsets, so the two cannot drift apart.
class Regions {
 public:
  uint64_t Add(uint64_t bytes) {
    const uint64_t at = end_;
    end_ += align_up(bytes);
    return at;
  }
  uint64_t bytes() const { return end_; }

 private:
  uint64_t end_ = 0;
};

// The row scratch of one attention core (offsets inside it, and its size):
// one query row's scores [kv_len] (int32 / float); int8: its Q15
// probabilities [kv_len] and, when the tiled int8 kernels may run (tile), their
// scratch (kernels/include/edgeattn/kernels/attention_tile.h). run_head()
// uses it as laid out here; plan() reserves `bytes`.
struct RowScratch {
  uint64_t scores, probs, tile;
  uint64_t bytes;
};
RowScratch row_scratch(bool s8, bool tile, int kv_len, int head_dim, int v_dim);
// The row scratch a kind plans for `shape` at these lengths: tile for an
// int8 scaled-dot-product core (dot_product) with tile scratch in the file
// that may run >= kQs8AttnTileMinRows query rows.
RowScratch planned_row_scratch(const LayerShape& shape, int q_len, int kv_len, bool dot_product);

// Range mode (range_mode.cc): the derived parameters of one run at range
// R = range_q16 / 2^16 (every input-derived activation scale times R).
struct RangeScale {
  uint32_t range_q16;
  int32_t score_mult, score_shift;  // the softmax score multiplier times R^2 (pooling: R)
  int32_t pre_mult, pre_shift;      // additive: the pre-tanh multiplier times R
  int32_t cov_mult, cov_shift;      // coverage: the coverage-term multiplier divided by R
  int32_t* bias;                    // workspace for one projection's biases
  // Fills `bias` with l's biases divided by R (zero-point fold kept); set by
  // range_mode.cc so that builds which never run range mode do not link it.
  const int32_t* (*adjust_bias)(const fb::Model& model, const fb::Linear* l, const RangeScale& r);
};

// Everything one layer call needs, after argument checks.
struct Call {
  const fb::Layer* layer;
  bool s8;
  int q_len, kv_len, kv_valid_len;
  int max_q_len;     // the layer's capped max_q_len (a decoder block's KV-cache layout)
  const void* query;
  const void* key;
  const void* value;
  void* output;
  void* weights;
  bool keys_cached;  // key projections already in the cache region
  uint8_t* cache;    // this layer's persistent region (may be null)
  uint8_t* scratch;
  const void* xnn;   // XNNPACK operator table, or null
  const RangeScale* range;  // range mode, or null
};

template <typename T>
const T* tensor_data(const fb::Model& model, const fb::Tensor* t) {
  if (t == nullptr) return nullptr;
  return reinterpret_cast<const T*>(model.data()->data() + t->offset());
}

// y = linear(x) over `rows` dense rows of l->in_features() elements; int8
// through XNNPACK when `xnn` holds an operator for this projection; with
// `range` (range mode) through the kernels with the biases divided by R.
void run_linear(const fb::Model& model, const fb::Linear* l, bool s8, int rows, const void* x,
                void* y, const void* xnn, const RangeScale* range = nullptr);

inline size_t elem_size(bool s8) { return s8 ? 1 : 4; }

inline int32_t zp_of(const fb::ActQuant* q) { return q != nullptr ? q->zero_point() : 0; }

// A layer's LayerShape from its kind's shape() (what its plan was made
// from: Model::ShapeOf without the kind lookup), for a run's layout().
inline LayerShape shape_with(const fb::Layer& l, void (*kind_shape)(const fb::Layer&, LayerShape*)) {
  LayerShape s = {};
  s.dtype = l.dtype() == fb::DType::S8 ? EA_S8 : EA_F32;
  s.tile_scratch = l.tile_scratch();
  kind_shape(l, &s);
  return s;
}

// Core attention of one head over prepared (projected) q/k/v, both dtypes.
struct HeadView {
  const void* q; int q_stride; int32_t q_zp;
  const void* k; int k_stride; int32_t k_zp;
  const void* v; int v_stride; int32_t v_zp;
  void* out; int out_stride; int32_t out_zp;
  int head_dim, v_dim;
  void* weights;  // [q_len][kv_len] or null
};

// One head: scores, softmax, weighted values, weights if asked; row_scratch
// is the row (and, for int8 with >= 4 query rows, tile) scratch of the plan.
void run_head(const Call& c, const HeadView& h, float scale, const fb::SoftmaxQuant* sq,
              bool causal, uint8_t* row_scratch);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_LAYERS_EXEC_H_
