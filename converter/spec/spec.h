// The converter's JSON spec: which layers to export, their dimensions and where
// their weights live in the source state dict (each kind's presets or
// explicit tensor names, converter/kinds/). load_spec() resolves it against
// the weights into FloatLayers, checking every tensor's presence, dtype,
// shape and values.
#ifndef EDGEATTN_CONVERTER_SPEC_SPEC_H_
#define EDGEATTN_CONVERTER_SPEC_SPEC_H_

#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/model/float_reference.h"

namespace edgeattn {
namespace convert {

// A tensor of the weights file that no layer of the spec uses. It is "next
// to" a used tensor (`beside`, of layer `layer`) when its parent module path
// (its name up to the last '.'; "" for a name without one) is
//   - the parent of a tensor a layer uses ('attn.Wa.bias' beside a used
//     'attn.Wa.weight'), or
//   - the module of a converted layer: the longest common module path of the
//     tensors it uses, when not empty ('attn.scale' beside a layer using
//     'attn.Wa.weight' and 'attn.Ua.weight', whose module is 'attn').
// A tensor under the prefix of a block a "repeat" made ('blocks.3.ls1.gamma'
// beside layer 'block3' with prefix 'blocks.3.') is next to that block too.
// Otherwise it belongs to no converted layer's module (embeddings, an output
// head, a module nobody asked for): `beside` and `layer` are empty.
// `beyond` is set when the tensor sits where a "repeat" entry's pattern
// would put block i for an i the repeat does not reach ('blocks.12.norm1.weight'
// with "repeat": 12 and prefix 'blocks.{i}.'): the model has more blocks than
// the spec converts, an error as a tensor next to a used one is.
struct UnusedTensor {
  std::string name;
  std::vector<size_t> shape;
  std::string beside, layer;
  std::string beyond;  // "block 12 under prefix 'blocks.{i}.' of \"repeat\" 'block{i}', which converts blocks 0..11"
};

struct ModelSpec {
  std::string model;              // "model" field (or the spec file's name)
  std::string preset;             // a whole-model preset's one-line account ("vit: ..."), "" without one
  std::vector<FloatLayer> layers;
  bool tile_scratch = true;       // plan the tiled int8 attention's scratch (convert --no-tile-scratch)
  // "decoder_start": the first layer of the part run once per generated
  // token (its query is the last token; Graph.decoder_start), -1: none.
  int decoder_start = -1;
  size_t weights_tensors = 0;     // tensors in the weights file
  std::vector<UnusedTensor> unused;  // the ones no layer uses, by name
};

// convert --residual int16 (issue 37): every encoder_block's residual stream
// int16 (FloatLayer::input16 / output16), and a layernorm chained after one
// reads it. An error names a chained layer that cannot read an int16 stream
// or a block whose source writes int8. With mha_outputs, an mha layer no
// other layer reads (the model's output) writes int16 too (contract 5c-out).
void use_residual16(ModelSpec* spec, bool mha_outputs = true);
// The default (--residual auto, issue 37): use_residual16 when the model has
// blocks, every hand-over of the stream is one the converter can make, and
// the stream stays inside the model (no block reads the model's input or
// gives its output, so the caller's rows keep their types); otherwise the
// flags stay as they were, *why says what stopped it, and the result is false.
bool use_residual16_inside(ModelSpec* spec, std::string* why);

struct LengthOverrides {
  int max_q_len = 0;   // > 0: replaces every layer's max_q_len (not pooling's, which is 1)
  int max_kv_len = 0;
};

// weights_path / spec_path are used in messages only.
ModelSpec load_spec(const std::string& spec_path, const std::string& spec_text,
                    const ArrayMap& weights, const std::string& weights_path,
                    const LengthOverrides& overrides);

// `edgeattn-convert expand`: the spec with a whole-model "preset" replaced by
// the layers it stands for ("repeat" entries kept), after every check a
// conversion makes, as JSON text with one layer per line; a spec without a
// preset comes back as it is (its layers one per line).
std::string expand_spec(const std::string& spec_path, const std::string& weights_path);

// The spec stage from files: reads the spec and the weights file (any format
// io/formats.h recognises) and resolves the layers. The weights' arrays are
// freed on return: the layers keep their own copies.
ModelSpec read_model_spec(const std::string& spec_path, const std::string& weights_path,
                          const LengthOverrides& overrides);

// The unused tensors next to a used one (UnusedTensor): without
// `allow_unused`, an error naming them and what to do (map them in the spec,
// or --allow-unused); with it, one warning for each (returned).
std::vector<std::string> check_unused(const ModelSpec& spec, const std::string& weights_path, bool allow_unused);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_SPEC_SPEC_H_
