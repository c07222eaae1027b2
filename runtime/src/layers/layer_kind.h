// One module per layer kind. Everything the runtime knows about a kind (how
// to verify its fields, describe it, plan its arena buffers, run it, fill its
// key cache, its range-mode rule) lives in that kind's file
// (runtime/src/layers/<name>.cc), which fills a LayerKindModule by field name
// (starting from kind_identity(), the list's entry) and defines
// layers::kind_<name>. registry.cc makes the table from the one list of kinds
// (edgeattn/layer_kinds.def). Model loading, planning and execution look a
// kind up there; a kind that is not in the table is an error at load (never a
// silent default).
#ifndef EDGEATTN_RUNTIME_LAYERS_LAYER_KIND_H_
#define EDGEATTN_RUNTIME_LAYERS_LAYER_KIND_H_

#include <cstdint>

#include "../checker.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/plan.h"
#include "exec.h"

namespace edgeattn {

// Projections a layer kind may have (a decoder block: q, k, v, out of both
// attentions, fc1, fc2).
constexpr int kMaxLayerLinears = 10;

// What range mode (Interpreter::SetRange) rescales in a kind that supports
// it: its softmax constants, how many of the score's factors scale with the
// range, and its other multipliers.
struct RangeRule {
  const fb::SoftmaxQuant* (*softmax)(const fb::Layer& l);
  // q and k both scale: 2; pooling's query is a weight: 1; additive scores
  // are tanh outputs times fixed v weights: 0.
  int score_factors;
  // Further multipliers into rs (pre_*, cov_*); false if a shift leaves the
  // range. Null: none.
  bool (*scale_more)(const fb::Layer& l, uint32_t range_q16, RangeScale* rs);
};

// A kind's traits. Unset members keep these defaults (null: the kind does not
// have that ability); each module sets the ones it has, by name.
struct LayerKindModule {
  fb::LayerOptions options = fb::LayerOptions::NONE;  // the union member that stores the kind in a file
  ea_layer_kind kind = EA_LAYER_KIND_COUNT;
  const char* name = "";  // the list's description, for messages
  // The query is a learned weight: no query input, one output row.
  bool learned_query = false;
  // Load: the kind's dimensions, tensors and quantization (after the checks
  // common to every layer: name, dtype, options present, max lengths).
  bool (*verify)(Checker& c, const fb::Layer& layer, bool s8) = nullptr;
  // The dimensions that decide its buffers, read from its options table (the
  // file's union member `options`; the converter plans the arena it writes
  // with this same function, shape_of_options() in plan.h), and its public
  // description (kind-specific fields only; the caller fills name, dtype,
  // lengths).
  void (*shape)(const void* options, LayerShape* shape) = nullptr;
  void (*info)(const fb::Layer& layer, LayerInfo* info) = nullptr;
  // Its arena buffers at the given lengths (plan_layer() in plan.h).
  LayerPlan (*plan)(const LayerShape& shape, int q_len, int kv_len) = nullptr;
  // One call with checked arguments.
  void (*run)(const fb::Model& model, const Call& c, int max_kv_len) = nullptr;
  // Fills the persistent key cache from c.key / c.value / c.kv_len (null
  // when the kind never has one; see has_key_cache).
  void (*cache_keys)(const fb::Model& model, const Call& c, int max_kv_len) = nullptr;
  bool (*has_key_cache)(const LayerShape& shape) = nullptr;
  // Whether a cached run still reads the caller's values (additive caches
  // only the projected keys).
  bool cached_run_reads_values = false;
  // Its projections (for backends that prepare them, e.g. XNNPACK): up to
  // kMaxLayerLinears, returns how many.
  int (*linears)(const fb::Layer& layer, const fb::Linear* out[kMaxLayerLinears]) = nullptr;
  // Decoding with a KV cache (null when the kind cannot): whether this layer
  // keeps one, and one step: the query row c.query at position `position`
  // (its K and V appended to the cache there), attending over positions
  // 0..position, one output row. A full run fills positions 0..q_len-1.
  // A kind without a KV cache may step too (positions: the row plus the
  // table's row `position`), for Interpreter::Generate.
  bool (*has_kv_cache)(const LayerShape& shape) = nullptr;
  void (*step)(const fb::Model& model, const Call& c, int max_kv_len, int position) = nullptr;
  // Coverage (additive layers with LayerShape.coverage): zero the coverage
  // vector in the layer's cache region, laid out for max_kv_len
  // (BeginSequence).
  void (*reset_coverage)(const fb::Layer& layer, uint8_t* cache, int max_kv_len) = nullptr;
  // The KV cache's positions are query rows, bounded by max_q_len (a decoder
  // block, whose kv_len is the memory's); false: bounded by max_kv_len.
  bool kv_positions_on_q_len = false;
  // Its key rows pair up with its query rows one to one (add: y = x + r):
  // a call's kv_len must equal its q_len.
  bool keys_pair_rows = false;
  // Each output row depends on its input row alone (no attention across
  // rows): a generating graph's decoder part runs it one row per token.
  bool rows_independent = false;
};

// The list's entry of `kind` (options, kind, name) with every trait unset:
// where a module starts.
constexpr LayerKindModule kind_identity(ea_layer_kind kind) {
  LayerKindModule m;
  switch (kind) {
#define EA_LAYER_KIND(name_, ENUM, value, file_options, description) \
  case EA_LAYER_##ENUM:                                              \
    m.options = fb::LayerOptions::file_options;                      \
    m.name = description;                                            \
    break;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
    case EA_LAYER_KIND_COUNT:
      break;
  }
  m.kind = kind;
  return m;
}

// The module of a kind, or null for a kind this runtime does not know.
const LayerKindModule* find_layer_kind(fb::LayerOptions options);
const LayerKindModule* find_layer_kind(int kind);  // an ea_layer_kind value
// A kind the schema has but this build left out (CMake EA_LAYER_KINDS: a
// firmware that runs only some kinds keeps only their modules).
bool layer_kind_left_out(fb::LayerOptions options);
const char* layer_kind_option_name(fb::LayerOptions options);

// The row scratch every attention core needs (plan.cc): one row of kv scores
// (+ kv Q15 probabilities for int8), and for int8 scaled-dot-product cores
// that may run >= kQs8AttnTileMinRows query rows, the tile scratch of
// kernels/include/edgeattn/kernels/attention_tile.h.
uint64_t attention_row_bytes(const LayerShape& shape, int q_len, int kv_len, bool dot_product);

namespace layers {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) extern const LayerKindModule kind_##name;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND

// Range mode's rule of kind <name>, defined in the kind's module when the
// kind supports range mode. Weak: a kind without one (or left out of the
// build) leaves its address null, and only range_mode.cc refers to them, so a
// firmware that never runs range mode links none (--gc-sections).
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) \
  extern const RangeRule range_rule_##name __attribute__((weak));
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
}  // namespace layers

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_LAYERS_LAYER_KIND_H_
