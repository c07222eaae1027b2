// Whole-model presets (issue 36): a spec whose top level names a "preset"
// instead of listing "layers",
//   {"model": "deit_tiny", "preset": "vit", "num_heads": 3}
// The preset reads the model's structure from the weights file's names and
// shapes (how many blocks, the widths, which ends the model has) and writes
// the "layers" list a user would write by hand for it; load_spec then
// converts that list as any other, so every check, message and report line
// is the same as for a written-out spec.
#ifndef EDGEATTN_CONVERTER_SPEC_MODEL_PRESETS_H_
#define EDGEATTN_CONVERTER_SPEC_MODEL_PRESETS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

// The top-level fields a spec with this "preset" may have (spec.cc checks
// them as it checks a layer's, with suggestions); empty for an unknown preset.
std::vector<std::string> model_preset_fields(const std::string& preset);
// "vit, hf_vit, torch_encoder, torch_transformer": the presets, for messages.
std::string model_preset_names();

// `spec` with "preset" replaced by the "layers" it stands for (the other
// top-level fields kept). *summary: one line for the report ("vit: 12 blocks
// of 192, 3 heads, ..."). Fails, naming the field or tensor, on an unknown
// preset or field, a missing field, or weights the preset does not describe.
nlohmann::json expand_model_preset(const nlohmann::json& spec, const ArrayMap& weights,
                                   const std::string& spec_path, const std::string& weights_path,
                                   std::string* summary);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_SPEC_MODEL_PRESETS_H_
