#include "model_access.h"

#include "layers/layer_kind.h"

namespace edgeattn {

namespace {

LayerShape shape_from(const LayerKindModule* module, const void* options, ea_dtype dtype, bool tile_scratch) {
  LayerShape s = {};
  s.dtype = dtype;
  s.tile_scratch = tile_scratch;
  if (module == nullptr) {  // not after Load (it refuses unknown kinds); plan_layer refuses this
    s.kind = -1;
    return s;
  }
  s.kind = module->kind;
  module->shape(options, &s);
  return s;
}

}  // namespace

// Two entry points on one body: a firmware links only layer_shape.
LayerShape shape_of_options(int kind, const void* options, ea_dtype dtype, bool tile_scratch) {
  return shape_from(options != nullptr ? find_layer_kind(kind) : nullptr, options, dtype, tile_scratch);
}

LayerShape layer_shape(const fb::Layer& layer) {
  return shape_from(find_layer_kind(layer.options_type()), layer.options(),
                    layer.dtype() == fb::DType::S8 ? EA_S8 : EA_F32, layer.tile_scratch());
}

LayerInfo layer_info(const fb::Layer& layer) {
  LayerInfo info = {};
  info.name = layer.name()->c_str();
  info.dtype = layer.dtype() == fb::DType::S8 ? EA_S8 : EA_F32;
  info.max_q_len = static_cast<int32_t>(layer.max_q_len());
  info.max_kv_len = static_cast<int32_t>(layer.max_kv_len());
  info.arena_bytes = static_cast<size_t>(layer.arena_bytes());
  info.num_heads = 1;
  info.num_kv_heads = 1;
  info.input_dtype = info.dtype;  // a kind at a model's end sets its own (kind->info)
  info.output_dtype = info.dtype;
  const LayerKindModule* kind = find_layer_kind(layer.options_type());
  if (kind == nullptr) return info;  // not after Load (it refuses unknown kinds)
  info.kind = kind->kind;
  kind->info(layer, &info);
  info.key_cache = kind->has_key_cache != nullptr && kind->has_key_cache(layer_shape(layer)) ? 1 : 0;
  return info;
}

}  // namespace edgeattn
