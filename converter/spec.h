// The converter's JSON spec: which layers to export, their dimensions and where
// their weights live in the source state dict (each kind's presets or
// explicit tensor names, converter/kinds/). load_spec() resolves it against
// the weights into FloatLayers, checking every tensor's presence, dtype,
// shape and values.
#ifndef EDGEATTN_CONVERTER_SPEC_H_
#define EDGEATTN_CONVERTER_SPEC_H_

#include <string>
#include <vector>

#include "converter/array.h"
#include "converter/float_reference.h"

namespace edgeattn {
namespace convert {

struct ModelSpec {
  std::string model;              // "model" field (or the spec file's name)
  std::vector<FloatLayer> layers;
  bool tile_scratch = true;       // plan the tiled int8 attention's scratch (convert --no-tile-scratch)
};

struct LengthOverrides {
  int max_q_len = 0;   // > 0: replaces every layer's max_q_len (not pooling's, which is 1)
  int max_kv_len = 0;
};

// weights_path / spec_path are used in messages only.
ModelSpec load_spec(const std::string& spec_path, const std::string& spec_text,
                    const ArrayMap& weights, const std::string& weights_path,
                    const LengthOverrides& overrides);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_SPEC_H_
