// Read-side helpers over a verified model: the layer's shape for planning,
// its public description, and typed pointers to tensor bytes.
#ifndef EDGEATTN_RUNTIME_MODEL_ACCESS_H_
#define EDGEATTN_RUNTIME_MODEL_ACCESS_H_

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"

namespace edgeattn {

LayerShape layer_shape(const fb::Layer& layer);
LayerInfo layer_info(const fb::Layer& layer);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_MODEL_ACCESS_H_
