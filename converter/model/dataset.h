// Per-layer inputs (and PyTorch reference outputs) read from a calibration or
// reference .npz: L.query [N,Lq,Dq], L.key [N,Lk,Dk], L.value [N,Lk,Dv],
// L.kv_valid_len int [N], L.output [N,Lq,Dout], L.attn_weights [N,H,Lq,Lk].
#ifndef EDGEATTN_CONVERTER_MODEL_DATASET_H_
#define EDGEATTN_CONVERTER_MODEL_DATASET_H_

#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

struct LayerData {
  int n = 0, lq = 0, lk = 0;           // pooling: lq = 1
  std::vector<double> query, key, value;  // key/value empty when absent
  std::vector<int> valid;             // [n], -1 = all keys valid
  std::vector<double> ref_output;     // [n][lq][output_dim] (reference sets only)
  std::vector<double> ref_weights;    // [n][heads][lq][lk]

  SampleInput sample(const FloatLayer& layer, int i) const;
};

// Throws naming `path` and the missing/bad key. with_reference: also require
// L.output, and read L.attn_weights when the file has it (ref_weights stays
// empty when it does not: eval then compares outputs only).
LayerData load_layer_data(const ArrayMap& npz, const std::string& path, const FloatLayer& layer,
                          bool with_reference);
// The same, moving the layer's arrays out of `npz` instead of copying them
// (for a map that is read once; the moved-from entries keep their shapes).
LayerData take_layer_data(ArrayMap* npz, const std::string& path, const FloatLayer& layer, bool with_reference);

// The inputs of a layer `consumer` whose query is `source`'s output (the
// spec's "input"): source's float64 forward over each of its samples `in`
// (source.output_rows(in.lq) rows; the keys when consumer's query is learned).
LayerData chained_layer_data(const FloatLayer& source, const LayerData& in, const FloatLayer& consumer);
// The keys (= values) and key padding of `consumer`, a cross layer whose
// memory is `source`'s output (the spec's "memory"): source's float64
// forward over its samples `in`, one per sample of d.
void chain_memory_data(const FloatLayer& source, const LayerData& in, const FloatLayer& consumer, LayerData* d);
// --data-key FILE_KEY=KEY: a data file's own name for one of the keys above,
// so a file written for another tool (a whole model's `x` and `logits`) is
// read as it is: `x=embed.query`, `logits=head.output`.
struct DataKey {
  std::string file_key, key;
};
// Throws naming the argument that is not FILE_KEY=LAYER.WHAT.
std::vector<DataKey> parse_data_keys(const std::vector<std::string>& args);
// Renames each file_key of `npz` to its key. Throws naming `path` when the
// file lacks a file_key or already has the key (two arrays for one key), or
// when a key names no layer of `layer_names`.
void rename_data_keys(ArrayMap* npz, const std::string& path, const std::vector<DataKey>& keys,
                      const std::vector<std::string>& layer_names);

// Every layer's inputs from one .npz (`what`: "calibration data (--calib)"
// in errors), [i] for layers[i], its keys renamed by `keys` first; a chained
// layer's (FloatLayer::input_layer) are made from its source's float64
// outputs, not read.
std::vector<LayerData> load_model_data(const std::string& path, const std::string& what,
                                       const std::vector<FloatLayer>& layers,
                                       const std::vector<DataKey>& keys = {});
// Samples [first, first + count) of `d` (inputs and any reference outputs).
LayerData slice_samples(const LayerData& d, int first, int count);

// Splits off the last round(fraction * n) samples (at least 1, leaving at
// least 1) as held-out data: deterministic, so a rerun calibrates on the same
// samples. Throws naming `what` if d has fewer than 2 samples or fraction is
// not in (0, 1).
void split_heldout(const LayerData& d, double fraction, const std::string& what, LayerData* calib,
                   LayerData* heldout);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_MODEL_DATASET_H_
