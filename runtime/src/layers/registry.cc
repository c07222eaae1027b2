// The table of layer kinds: the one place that lists them. Adding a kind is
// one module file (see layer_kind.h) plus one line here.
#include "layer_kind.h"

namespace edgeattn {
namespace {

const LayerKindModule* const kKinds[] = {
    &layers::kMultiHeadAttention,
    &layers::kAdditive,
    &layers::kLuong,
    &layers::kPooling,
};

}  // namespace

const LayerKindModule* find_layer_kind(fb::LayerOptions options) {
  for (const LayerKindModule* m : kKinds) {
    if (m->options == options) return m;
  }
  return nullptr;
}

const LayerKindModule* find_layer_kind(int kind) {
  for (const LayerKindModule* m : kKinds) {
    if (m->kind == kind) return m;
  }
  return nullptr;
}

}  // namespace edgeattn
