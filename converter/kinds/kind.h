// One module per layer kind, as runtime/src/layers/ is for the runtime.
// Everything the converter knows about a kind lives in its file
// (converter/kinds/<name>.cc, for each kind of edgeattn/layer_kinds.def):
// its spec fields and presets, its float64 reference, its calibration points, its quantization and how it is written
// into the file (the arena is planned from that options table by the
// runtime's module of the kind, plan.h shape_of_options) and its lines in
// `inspect`. Each fills a KindModule by field name, starting from
// kind_identity(); registry.cc makes the table from the list; spec loading,
// calibration, conversion, the runner, eval and inspect ask a layer's module
// (FloatLayer::kind) instead of deciding on the kind themselves.
//
// Composite kinds (a block holding an MHA) reuse another module's pieces: the
// MHA module's parameters and functions are public in kinds/mha.h, a
// sub-layer is a FloatLayer of its own, its calibration points are recorded
// under a prefix (merge_ranges) and read back with Calibrated::sub().
#ifndef EDGEATTN_CONVERTER_KINDS_KIND_H_
#define EDGEATTN_CONVERTER_KINDS_KIND_H_

#include <flatbuffers/flatbuffers.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/model/block_float.h"
#include "converter/model/float_reference.h"
#include "converter/spec/spec_fields.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/plan.h"

namespace edgeattn {
namespace convert {

class ModelWriter;
struct TensorEntry;  // write/file_contents.h
struct FloatNorm;    // model/block_float.h

// A LayerNorm whose output feeds only the projections `next` (SmoothQuant,
// converter/calibrate/smooth.h): per-channel factors divide its gain and bias and
// multiply the projections' input columns, the same float function.
struct SmoothPair {
  std::string point;  // the calibration key of the LayerNorm's output ("attn.query", "norm2", ...)
  std::string what;   // for reports: "norm1 -> q/k/v_proj"
  FloatNorm* norm;
  std::vector<FloatLinear*> next;
};

// How the writer quantized a calibrated point (Calibrated::used): as int8,
// as the int16 stream, or both, with the parameters the file holds.
struct PointQuant {
  bool int8 = false, int16 = false;
  ActQuantParams q8, q16;
};
using PointUses = std::map<std::string, PointQuant>;  // full key -> its quantizations

// The calibrated range of a layer's tensor as int8 parameters, with errors
// naming the layer. `prefix` is put before every key (a composite's sub-layer).
// With `used`, records every point it quantizes and how (the report's
// calibration list names each tensor the file holds a quantization of).
struct Calibrated {
  const RangeMap& r;
  std::string where;
  std::string prefix;
  PointUses* used = nullptr;

  bool has(const std::string& key) const { return r.count(prefix + key) != 0; }
  const Range& range(const std::string& key) const;
  ActQuantParams operator()(const std::string& key) const;
  // The same range as an int16 tensor of the residual stream (stream16_quant).
  ActQuantParams s16(const std::string& key) const;
  // An FFN's hidden tensor (fc1's output), which feeds only the activation
  // table `act` writes at act_out: its range cut below where the activation
  // is flat (activation_input_quant).
  ActQuantParams activation_input(const std::string& key, Activation act, const ActQuantParams& act_out) const;
  Calibrated sub(const std::string& p) const { return Calibrated{r, where, prefix + p, used}; }
};

struct KindModule {
  // From the list (kind_identity).
  const char* name = "";                            // the spec's "kind", and the reports'
  ea_layer_kind runtime_kind = EA_LAYER_KIND_COUNT;  // LayerInfo.kind of its layers in a model
  fb::LayerOptions options = fb::LayerOptions::NONE;  // the union member that stores it in a file
  // The query is a learned weight: no query input, one output row, and no
  // max_q_len field in the spec (pooling).
  bool learned_query = false;
  // Its keys pair up with its query rows one to one (add: y = x + r):
  // max_kv_len is max_q_len (the spec may leave it out).
  bool keys_pair_rows = false;
  // The spec's "mask": "causal" is allowed (else a spec error).
  bool causal_mask = false;

  // ---- spec -----------------------------------------------------------------
  // Layer fields beyond the common ones (name, kind, mask, max_q_len,
  // max_kv_len, prefix, tensors), and the names allowed under "tensors".
  std::vector<std::string> fields;
  std::vector<std::string> tensor_fields;
  // Fills L (name, kind and mask are set) from the layer object: dimensions,
  // L->params, weights from presets or explicit tensor names; every error
  // names the field or tensor (f.where, w.where()).
  void (*resolve)(const SpecFields& f, const SpecWeights& w, FloatLayer* L) = nullptr;

  // ---- a layer of a model, without weights (eval reads datasets for it) -----
  // The kind's parameters the generic code reads (L's common fields are set).
  void (*shell)(const LayerInfo& info, FloatLayer* L) = nullptr;
  LayerIo (*io)(const FloatLayer& L) = nullptr;

  // ---- float64 reference (float_reference.h: forward()) ---------------------
  // out [rows][output_dim] (rows = q_len, 1 with learned_query), weights
  // [heads][rows][kv_len] or null; every element written. With ranges, adds
  // this sample's calibration points (padded rows left out).
  void (*forward)(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) = nullptr;

  // ---- calibration (calibrate.cc) --------------------------------------------
  // Points whose values the --calib-method sees (min/max otherwise); points
  // chosen by min/max (+ headroom) whatever the method (additive: pre_tanh).
  std::vector<std::string> (*value_points)(const FloatLayer& L) = nullptr;
  std::vector<std::string> (*minmax_points)(const FloatLayer& L) = nullptr;
  // The points whose range quantizes the layer's query input (the file's
  // query quantization); null: {"query"}. A chained layer (the spec's
  // "input") takes their range from its source's "output", so the source's
  // int8 output bytes are exactly its input.
  std::vector<std::string> (*input_points)(const FloatLayer& L) = nullptr;
  // A cross layer's points quantizing its memory (keys and values); null:
  // {"key", "value"}. With the spec's "memory" they take the memory
  // layer's output range, so its int8 output bytes are the memory as they are.
  std::vector<std::string> (*memory_points)(const FloatLayer& L) = nullptr;
  // The point whose range quantizes the layer's output in the file; null:
  // "output". A layer chained after it takes its input range from there
  // (pooling and row_pool "first" write their input's quantization).
  std::string (*output_point)(const FloatLayer& L) = nullptr;

  // ---- quantization and writer (convert.cc) ----------------------------------
  // The layer's options table (the union member `options`), int8 from the
  // calibrated ranges or float32.
  flatbuffers::Offset<void> (*write_s8)(ModelWriter& w, const FloatLayer& L, const Calibrated& c) = nullptr;
  flatbuffers::Offset<void> (*write_f32)(ModelWriter& w, const FloatLayer& L) = nullptr;

  // ---- inspect and reports -----------------------------------------------------
  // Its constant tensors in the file (write/file_contents.h add_tensor / add_linear).
  void (*tensors)(const fb::Layer& layer, const std::string& name, std::vector<TensorEntry>* out) = nullptr;
  // Lines after the dimensions (embed_dim, cache sizes, ...), and the
  // quantization section of an int8 layer; null: none.
  void (*inspect)(const fb::Layer& layer, const LayerInfo& info, std::ostream& os) = nullptr;
  void (*inspect_quant)(const fb::Layer& layer, std::ostream& os) = nullptr;

  // ---- SmoothQuant (--smooth-alpha, converter/calibrate/smooth.h) -----------------------
  // The layer's LayerNorm -> projection pairs; an error naming the layer when
  // a LayerNorm's output feeds more than projections (post-norm: the residual
  // adds). null: the kind has no LayerNorm.
  std::vector<SmoothPair> (*smooth_pairs)(FloatLayer* L) = nullptr;

  // ---- a model's ends (ea_layer_info.input_dtype / output_dtype S32) --------
  // Token ids in (embedding): the query rows are int32 ids, one per row
  // (query_dim 1), each in 0..input_range(L)-1; datasets read L.query as an
  // integer array [N, L] (or [N, L, 1]) and the runner passes int32 ids.
  // null: float (or int8) rows.
  int (*input_range)(const FloatLayer& L) = nullptr;
  // Class indices out (argmax): the output rows are int32 indices, compared
  // with the float model's by agreement (Metrics::agreement), not by error.
  bool index_output = false;
  // Points whose recorded min/max are the tensor's whole range, known
  // exactly (an embedding's output: the table's range): min/max, no method,
  // no headroom. null: none.
  std::vector<std::string> (*exact_points)(const FloatLayer& L) = nullptr;
};

// The list's entry of `kind` (name, runtime kind, file options) with every
// trait unset: where a module starts.
inline KindModule kind_identity(ea_layer_kind kind) {
  KindModule m;
  switch (kind) {
#define EA_LAYER_KIND(name_, ENUM, value, file_options, description) \
  case EA_LAYER_##ENUM:                                              \
    m.name = #name_;                                                 \
    m.options = fb::LayerOptions::file_options;                      \
    break;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
    case EA_LAYER_KIND_COUNT:
      break;
  }
  m.runtime_kind = kind;
  return m;
}

namespace kinds {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) extern const KindModule kind_##name;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
}  // namespace kinds

// The table (registry.cc), made from the list: kind <name>'s module is
// kinds::kind_<name> (converter/kinds/<name>.cc), in the list's order. A
// module's own functions live in namespace <name>_module inside an anonymous
// one: every module names them alike (module(), resolve, write_s8, ...), and
// unity builds (EA_UNITY_BUILD) compile several modules as one file.
const std::vector<const KindModule*>& all_kinds();
// The module named `name` / of a runtime kind, or null.
const KindModule* find_kind(const std::string& name);
const KindModule* find_kind(ea_layer_kind kind);
const KindModule* find_kind(fb::LayerOptions options);
// "mha, additive, ... or linear" (for messages).
std::string kind_names();

// A composite records its sub-layer's points as "<prefix><key>": it runs the
// sub-layer's forward into sub_ranges(*ranges, prefix) (empty, keeping values
// where `ranges` keeps them for the prefixed key), then merge_ranges() adds
// that map to `ranges` under the prefix.
RangeMap sub_ranges(const RangeMap& ranges, const std::string& prefix);
void merge_ranges(const RangeMap& from, const std::string& prefix, RangeMap* into);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_KINDS_KIND_H_
