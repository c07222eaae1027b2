// Memory plan of one layer: which buffers it needs at given lengths.
// Shared by the runtime (to lay out the arena and check the recorded sizes)
// and the converter (to write the exact arena bytes into the model file).
#ifndef EDGEATTN_PLAN_H_
#define EDGEATTN_PLAN_H_

#include <cstddef>
#include <cstdint>

#include "edgeattn/edgeattn.h"

namespace edgeattn {

struct LayerPlan {
  // 64-bit on every target so that no dimension in a file can overflow the
  // arithmetic; Model::Load rejects plans above kMaxArenaBytes.
  uint64_t cache_bytes;    // persistent: key (and value) projections of cross MHA / additive / KV cache
  uint64_t scratch_bytes;  // per call; the scratch region is shared by all layers
  // Per pool worker beyond the first: the scratch one attention task uses
  // (its row scratch; worker 0 uses the one inside scratch_bytes). 0 when the
  // kind's parallel parts need none (projections, LayerNorm, adds).
  uint64_t worker_bytes;
};

// The dimensions that decide a layer's buffers.
struct LayerShape {
  int kind;          // an ea_layer_kind; any other value is a kind no module plans (refused)
  ea_dtype dtype;
  int embed_dim;     // MHA: width of the projected Q/K/V and of the context
  int attn_dim;      // additive: width of W_q q and W_k k
  int key_dim;       // Luong general: width of W^T q
  bool tile_scratch; // int8 dot-product cores: plan the tiled kernels' scratch (file's Layer.tile_scratch)
  int head_dim;      // MHA, Luong, pooling: query/key width of one attention head
  int v_dim;         // MHA, Luong, pooling: value width of one attention head
  bool cross;        // MHA: keys/values projected into the layer's cache
  bool kv_cache;     // MHA (causal self-attention): K/V kept for decoding steps
  int kv_width;      // MHA: width of the K and V projections (num_kv_heads * head_dim)
  bool projects_query;  // Luong general
  bool coverage;     // additive: coverage vector [kv] (int32 / float) after the keys in the cache
  int hidden_dim;    // feed-forward and encoder blocks: width of the FFN's hidden rows
  bool residual16;   // int8 encoder blocks: the residual stream's rows are int16 (issue 37)
  bool output16;     // int8 MHA and linear layers: int16 output (a zero residual row in the scratch, contract 5c-out)
  int out_dim;       // linear: out_features (the width of output16's zero residual row)
};

constexpr size_t kArenaAlignment = EA_ALIGNMENT;
constexpr uint64_t kMaxArenaBytes = 0x7FFFFFFFu;  // addressable on 32-bit targets

constexpr uint64_t align_up(uint64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// A layer's buffers, each rounded up to kArenaAlignment: its kind's module
// (runtime/src/layers/<name>.cc, plan() and the layout beside it) decides
// them; a persistent cache (MHA's cross or KV-cache keys and values,
// additive's projected keys and coverage) and a scratch shared with the other
// layers (projected rows, FFN hidden rows, a block's intermediate rows, the
// attention row scratch). Row-wise kinds (layernorm, linear) need none.
// Row scratch is one query row at a time: kv int32 scores (+ kv uint16
// probabilities for int8), so attention never needs q x kv memory. int8
// layers with a scaled-dot-product core (MHA, Luong, pooling) that may run at
// least kernels::kQs8AttnTileMinRows query rows add the tile scratch of
// kernels/include/edgeattn/kernels/attention_tile.h: one head's keys and
// values repacked, and a tile of 8 rows of scores and probabilities
// (O(head_dim x kv + 8 x kv), never q x kv).
// A kind the runtime does not know gets an impossible plan (both sizes above
// kMaxArenaBytes), so every size check refuses it.
LayerPlan plan_layer(const LayerShape& shape, int q_len, int kv_len);

// The shape of a layer of kind `kind` (an ea_layer_kind) whose FlatBuffer
// options table (the file's Layer.options) is at `options`, as the runtime's
// module of that kind reads it. The converter plans the arena it writes from
// the options it has just written, with this, so the file's arena and the
// runtime's plan agree by construction. A kind this build lacks gets kind -1
// (plan_layer refuses it).
LayerShape shape_of_options(int kind, const void* options, ea_dtype dtype, bool tile_scratch);

// The intermediate tensors of a whole-model run (the file's Graph): step
// s's output rows, live from step `first` (which writes them) to step `last`
// (the last that reads them). The model's output goes to the caller's buffer
// and gets none.
struct GraphTensor {
  uint64_t bytes;  // rows at the step's maximum x output width x element size
  int first;
  int last;
};

// Offsets (from the start of the activations region) for n tensors, each
// aligned to kArenaAlignment: tensors whose live steps overlap never share
// bytes, and a region is reused once its tensor is dead. First fit, the
// largest tensor first (ties in step order), so a chain of layers needs two
// regions (the output of step s and its input, step s-1's) even when its
// outputs differ in size, and the converter and the runtime get the same
// offsets. Returns the region's size. n <= kMaxGraphSteps.
constexpr int kMaxGraphSteps = 32;
uint64_t lay_out_graph(const GraphTensor* tensors, int n, uint64_t* offsets);

namespace fb {
struct Layer;
struct Graph;
}  // namespace fb

// The graph's tensors (tensors[s]: step s's output; the last step's has 0
// bytes) from the file's layers and graph, rows capped at max_q_len as
// Interpreter::Init's cap does (0: none). The converter calls it on the
// tables it has just written, the runtime on the loaded file, so both plan
// the same arena. Returns the number of steps (<= kMaxGraphSteps after Load).
int graph_tensors(const fb::Layer* const* layers, int num_layers, const fb::Graph& graph, int max_q_len,
                  GraphTensor* tensors);

// The arena of a model, laid out once for the converter, Model::Load and
// Interpreter::Init: the layers' persistent caches one after another (layer
// i's at cache_offsets[i] when that pointer is not null), then the graph's
// activations (activation_bytes, lay_out_graph; 0 without a graph), then
// one scratch region shared by every layer, as large as the largest layer's
// scratch (plans come from plan_layer, so no sum overflows).
// With a thread pool of T workers (ea_executor), workers 1..T-1 each get
// worker_bytes after total_bytes: arena_bytes_for_workers().
struct ArenaLayout {
  uint64_t activation_offset;  // = the sum of the caches
  uint64_t scratch_offset;     // = activation_offset + activation_bytes
  uint64_t total_bytes;
  uint64_t worker_bytes;       // the largest layer's worker_bytes
};
ArenaLayout lay_out_arena(const LayerPlan* plans, int num_layers, uint64_t* cache_offsets,
                          uint64_t activation_bytes = 0);

// lay_out_arena one layer at a time, for callers that keep no array of plans
// (the runtime plans at load and Init on a microcontroller's stack).
class ArenaBuilder {
 public:
  // Returns the layer's cache offset.
  uint64_t Add(const LayerPlan& plan) {
    const uint64_t offset = cache_;
    cache_ += plan.cache_bytes;
    if (plan.scratch_bytes > scratch_) scratch_ = plan.scratch_bytes;
    if (plan.worker_bytes > worker_) worker_ = plan.worker_bytes;
    return offset;
  }
  ArenaLayout Finish(uint64_t activation_bytes) const {
    const uint64_t scratch_offset = cache_ + activation_bytes;
    return ArenaLayout{cache_, scratch_offset, scratch_offset + scratch_, worker_};
  }

 private:
  uint64_t cache_ = 0, scratch_ = 0, worker_ = 0;
};

// The arena for `workers` >= 1 pool workers (1: total_bytes).
constexpr uint64_t arena_bytes_for_workers(const ArenaLayout& a, int workers) {
  return a.total_bytes + (workers > 1 ? static_cast<uint64_t>(workers - 1) * a.worker_bytes : 0);
}

}  // namespace edgeattn

#endif  // EDGEATTN_PLAN_H_
