// What every layer kind's run() shares: the checked arguments of one call
// (Call), sequential carving of arena regions in plan order, the int8/float
// linear over packed or row-major weights, and one attention head over
// projected q/k/v (the scaled dot-product core of MHA, Luong and pooling).
#ifndef EDGEATTN_RUNTIME_LAYERS_EXEC_H_
#define EDGEATTN_RUNTIME_LAYERS_EXEC_H_

#include <cstddef>
#include <cstdint>

#include "../build_options.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/requant.h"
#include "edgeattn/kernels/stage_profile.h"
#include "edgeattn/kernels/task_split.h"
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

// (m, shift) := the multiplier m 2^(shift - 31) times / divided by
// R = range_q16 / 2^16, renormalized to m in [2^30, 2^31) and rounded
// (range_mode.cc). False if the shift leaves the kernels' range.
bool scale_multiplier(int32_t* m, int32_t* shift, uint32_t range_q16);
bool divide_multiplier(int32_t* m, int32_t* shift, uint32_t range_q16);

// The caller's thread pool as the layers see it (Interpreter::UseExecutor):
// its executor and the row scratch of workers 1..workers-1 (worker 0 uses the
// layer's own, inside the plan's scratch).
struct Pool {
  ea_executor executor;
  int workers;              // >= 2 (no pool: Call.pool is null)
  uint8_t* worker_scratch;  // worker w >= 1: worker_scratch + (w - 1) * worker_bytes
  uint64_t worker_bytes;
  uint64_t min_task_work;   // Interpreter::SetMinTaskWork (default kMinTaskWork in edgeattn.hpp)
};

// How many tasks `work` (multiply-adds, or element operations) is worth on
// this pool (kernels/include/edgeattn/kernels/task_split.h): 1 without one.
#ifndef EA_THREAD_POOL
#define EA_THREAD_POOL 1
#endif
inline int task_count(const Pool* pool, uint64_t work, int max_tasks) {
  if (!EA_THREAD_POOL || pool == nullptr || max_tasks <= 1) return 1;
  return kernels::task_count(work, pool->min_task_work, pool->workers, max_tasks);
}
inline int pool_workers(const Pool* pool) { return EA_THREAD_POOL && pool != nullptr ? pool->workers : 1; }
inline uint64_t pool_min_work(const Pool* pool) { return pool != nullptr ? pool->min_task_work : 0; }

// body(begin, end, worker) over `tasks` contiguous ranges of [0, n)
// (kernels::task_range), task t on worker slot t (its scratch), through the
// pool's parallel_for. Every output byte is written by exactly one task, so
// results do not depend on the pool, its thread count or the order it runs
// tasks in.
template <typename Body>
void parallel_ranges(const Pool* pool, int n, int tasks, const Body& body) {
  if (tasks > n) tasks = n;
  if (!EA_THREAD_POOL || pool == nullptr || tasks <= 1) {
    if (n > 0) body(0, n, 0);
    return;
  }
#if EA_THREAD_POOL
  struct Job {
    const Body* body;
    int n, tasks;
  };
  Job job = {&body, n, tasks};
  const ea_task_fn run_task = [](void* arg, int32_t t) {
    const Job& j = *static_cast<const Job*>(arg);
    if (t < 0 || t >= j.tasks) return;  // a pool that invents task indices
    const kernels::TaskRange r = kernels::task_range(j.n, j.tasks, static_cast<int>(t));
    if (r.begin < r.end) (*j.body)(r.begin, r.end, static_cast<int>(t));
  };
  pool->executor.parallel_for(pool->executor.context, run_task, &job, tasks);
#endif
}

// Everything one layer call needs, after argument checks.
struct Call {
  const fb::Layer* layer;
  bool s8;  // an int8 layer; read it as int8()
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
  const Pool* pool;  // the caller's thread pool, or null (the caller's thread)
  // Always true in an int8-only build, which refuses float layers at load:
  // the float branches behind it compile out.
  bool int8() const { return !kWithF32 || s8; }
};

template <typename T>
const T* tensor_data(const fb::Model& model, const fb::Tensor* t) {
  if (t == nullptr) return nullptr;
  return reinterpret_cast<const T*>(model.data()->data() + t->offset());
}

inline size_t elem_size(bool s8) { return s8 ? 1 : 4; }
inline size_t elem_size(ea_dtype t) { return t == EA_S8 ? 1 : t == EA_S16 ? 2 : 4; }

// The residual a block adds to a projection's output (its out_proj, fc2):
// y = x + linear(...). int8 in the projection's epilogue from its int32 sums
// (requant.h contract 5b, `add` the block's ResidualAdd); f32 (add null) as
// the linear, then f32_add.
// With s16 (a block's 16-bit residual stream, contract 5c) the residual
// rows and the output are int16. s16 without an add is contract 5c-out (an
// mha layer's int16 output): x one row of zeros read for every row (stride
// 0), A = 0, n = kResidual5cOutShift.
struct Residual {
  const fb::ResidualAdd* add;
  const void* x;  // rows of the projection's out_features, dense (one_row: one row)
  bool s16 = false;
  bool one_row = false;
};

// One projection with its tensors resolved, run over a row range or an
// output-channel range (the tiles of kernels::linear_split), with the
// residual of Set() added when there is one.
struct Projection {
  bool s8 = false;
  int in = 0, out = 0;
  // int8: weights in the packed K4N16 layout (schema/edgeattn.fbs)
  const int8_t* w8 = nullptr;
  const int32_t* bias32 = nullptr;
  const int32_t* mult = nullptr;
  const int32_t* shift = nullptr;
  int per_channel = 0;
  int32_t zp = 0;
  // f32
  const float* wf = nullptr;
  int w_stride = 0;
  const float* biasf = nullptr;
  // The residual (null: none) and, int8, its epilogue term.
  const void* res = nullptr;
  int res_rows = 1;  // 0: the residual is one row for every output row (Residual::one_row)
  kernels::ResidualTerm term = {};
  bool res16 = false;  // int16 residual and output (contract 5c)
  kernels::Residual16Term term16 = {};

  void Set(const fb::Model& model, const Call& c, const fb::Linear* l, const Residual* r = nullptr);
  // Rows r0..r1 of y from the same rows of x (dense rows).
  void Rows(int r0, int r1, const void* x, void* y) const;
  // Channels c0..c1 (c0 a multiple of kernels::kLinearChannelBlock) of every row.
  void Channels(int c0, int c1, int rows, const void* x, void* y) const;
};

// y = linear(x) over `rows` dense rows of l->in_features() elements; int8
// through XNNPACK when c.xnn holds an operator for this projection (on the
// caller's thread); in range mode (c.range) through the kernels with the
// biases divided by R; on c.pool in row or output-channel tiles.
// With a residual r: y = r->x + linear(x), never through XNNPACK.
void run_linear(const fb::Model& model, const Call& c, const fb::Linear* l, int rows, const void* x,
                void* y, const Residual* res = nullptr);
// ls[0..n) over the same rows x (self-attention's Q, K and V projections)
// into ys[i]: on a pool, one call whose row tiles run every projection (one
// hand-over instead of n); else as n run_linear calls. Same bytes either way.
constexpr int kMaxLayerProjections = 4;
void run_linears_same_input(const fb::Model& model, const Call& c, const fb::Linear* const* ls, int n, int rows,
                            const void* x, void* const* ys);


inline int32_t zp_of(const fb::ActQuant* q) { return q != nullptr ? q->zero_point() : 0; }
// The public form of a quantization (ea_layer_info), {0, 0} when absent.
inline ea_quant quant_of(const fb::ActQuant* q) {
  return q != nullptr ? ea_quant{q->scale(), q->zero_point()} : ea_quant{0.0f, 0};
}

// ea_layer_info of a row-wise layer (layernorm, ffn, linear): rows of in_dim
// in, rows of out_dim out, no attention weights; it has no keys or values, so
// the query rows stand in for them (as for self-attention).
inline void row_layer_info(int in_dim, int out_dim, const fb::ActQuant* in, const fb::ActQuant* out,
                           LayerInfo* info) {
  info->query_dim = in_dim;
  info->key_dim = in_dim;
  info->value_dim = in_dim;
  info->output_dim = out_dim;
  info->num_heads = 0;
  info->query_quant = quant_of(in);
  info->key_quant = info->query_quant;
  info->value_quant = info->query_quant;
  info->output_quant = quant_of(out);
}

// Row-wise steps chained in one pool call (kernels::chain_split): every
// step S has S.work_per_row (multiply-adds or their equivalents), S.Prepare()
// (resolves what the tasks share, before the pool call), S.Rows(r0, r1,
// worker) (rows r0..r1 of its output from the same rows of its inputs, which
// the steps before it in the chain wrote) and S.Alone(rows) (the step on its
// own pool call, split its own way). Each task runs every step over its row
// tiles in chain order, so a row's steps see the same inputs as when run one
// after another: the same bytes, one hand-over instead of one per step.
// Steps run alone when the rows are too few for the chain's tasks, and with
// XNNPACK (whole matrices on the caller's thread) or range mode (one bias
// workspace per projection). A task runs each step over all of its rows
// before the next: sub-tiles of 8 to 32 rows, which would keep a tile's
// rows in L1 from step to step, measured no faster on one thread (8 rows:
// 1-4 % slower; kernels_bench's encoder_block_qs8/.../chain_rows:N,
// docs/performance.md).
template <typename... Steps>
void run_chain(const Call& c, int rows, int unit, Steps&&... steps) {
  const uint64_t work = (uint64_t{0} + ... + steps.work_per_row) * static_cast<uint64_t>(rows);
  const kernels::ChainSplit split =
      kernels::chain_split(rows, unit, work, pool_workers(c.pool), pool_min_work(c.pool));
  if (!split.chained || c.xnn != nullptr || c.range != nullptr) {
    (steps.Alone(rows), ...);
    return;
  }
  (steps.Prepare(), ...);
  parallel_ranges(c.pool, split.units, split.tasks, [&](int begin, int end, int worker) {
    const kernels::TaskRange r = kernels::chain_rows({begin, end}, unit, rows);
    (steps.Rows(r.begin, r.end, worker), ...);
  });
}

// A chain step: projections of the same input rows x into ys (one, or
// self-attention's Q, K and V); alone through run_linear or
// run_linears_same_input.
class LinearStep {
 public:
  LinearStep(const fb::Model& model, const Call& c, const fb::Linear* l, const void* x, void* y)
      : LinearStep(model, c, &l, 1, x, &y) {}
  // One projection with a block's residual added, y = r->x + l(x) (r null: none).
  LinearStep(const fb::Model& model, const Call& c, const fb::Linear* l, const void* x, void* y, const Residual* r)
      : LinearStep(model, c, &l, 1, x, &y) {
    if (r != nullptr) {
      res_ = *r;
      has_res_ = true;
    }
  }
  LinearStep(const fb::Model& model, const Call& c, const fb::Linear* const* ls, int n, const void* x,
             void* const* ys);
  uint64_t work_per_row;
  void Prepare();
  void Rows(int r0, int r1, int) const {
    for (int i = 0; i < n_; ++i) ps_[i].Rows(r0, r1, x_, ys_[i]);
  }
  void Alone(int rows) const;

 private:
  const fb::Model& model_;
  const Call& c_;
  const fb::Linear* ls_[kMaxLayerProjections];
  void* ys_[kMaxLayerProjections];
  Projection ps_[kMaxLayerProjections];
  int n_;
  const void* x_;
  Residual res_ = {};
  bool has_res_ = false;
};

// A step counted in the FFN stage (its GEMMs as the FFN's): the stage
// profile of the Cortex-M bench only; elsewhere the step itself.
#if defined(EA_STAGE_PROFILE) && EA_STAGE_PROFILE
template <typename S>
struct FfnStep {
  S s;
  uint64_t work_per_row;
  void Prepare() { s.Prepare(); }
  void Rows(int r0, int r1, int w) const {
    EA_STAGE_ENTER(outer, EA_STAGE_FFN);
    s.Rows(r0, r1, w);
    EA_STAGE_LEAVE(outer);
  }
  void Alone(int rows) const {
    EA_STAGE_ENTER(outer, EA_STAGE_FFN);
    s.Alone(rows);
    EA_STAGE_LEAVE(outer);
  }
};
template <typename S>
FfnStep<S> ffn_step(const S& s) {
  return FfnStep<S>{s, s.work_per_row};
}
#define EA_FFN_STEP(step) ::edgeattn::ffn_step(step)
#else
#define EA_FFN_STEP(step) step
#endif

// A layer's LayerShape from its kind's shape() (what its plan was made
// from: Model::ShapeOf without the kind lookup), for a run's layout().
inline LayerShape shape_with(const fb::Layer& l, void (*kind_shape)(const void* options, LayerShape*)) {
  LayerShape s = {};
  s.dtype = l.dtype() == fb::DType::S8 ? EA_S8 : EA_F32;
  s.tile_scratch = l.tile_scratch();
  kind_shape(l.options(), &s);
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

// One head, query rows row0..row0+rows-1 of c.q_len: scores, softmax,
// weighted values, weights if asked; row_scratch is the row (and, for int8
// with >= 4 query rows, tile) scratch of the plan.
void run_head(const Call& c, const HeadView& h, int row0, int rows, float scale,
              const fb::SoftmaxQuant* sq, bool causal, uint8_t* row_scratch);

// The row scratch of pool worker w (0: the plan's, at row_scratch).
inline uint8_t* worker_row_scratch(const Call& c, uint8_t* row_scratch, int w) {
  return w == 0 ? row_scratch : c.pool->worker_scratch + static_cast<size_t>(w - 1) * c.pool->worker_bytes;
}

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_LAYERS_EXEC_H_
