// The runtime's table of layer kinds, made from the one list
// (edgeattn/layer_kinds.def): kind <name>'s module is layers::kind_<name>
// (runtime/src/layers/<name>.cc). A build may leave kinds out (CMake
// EA_LAYER_KINDS, e.g. "mha;additive" for firmware that runs only those,
// passed here as EA_LAYER_KINDS_BUILT): their modules are then never
// referenced, so --gc-sections drops them, and a model using one is refused
// at load with EA_UNSUPPORTED.
#include "layer_kind.h"

#ifndef EA_LAYER_KINDS_BUILT  // a build outside CMake: every kind
#define EA_LAYER_KINDS_BUILT "*"
#endif

namespace edgeattn {
namespace {

constexpr bool same(const char* a, const char* a_end, const char* b) {
  for (; a != a_end; ++a, ++b) {
    if (*b == '\0' || *a != *b) return false;
  }
  return *b == '\0';
}

// Whether `name` is in the comma-separated `list` ("*": all), at compile time.
constexpr bool built(const char* list, const char* name) {
  if (same(list, list + 1, "*") && list[1] == '\0') return true;
  const char* start = list;
  for (const char* p = list;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (same(start, p, name)) return true;
      if (*p == '\0') return false;
      start = p + 1;
    }
  }
}

// Left-out kinds are null entries, decided at compile time, so their modules
// are never referenced.
constexpr const LayerKindModule* kKinds[] = {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) \
  built(EA_LAYER_KINDS_BUILT, #name) ? &layers::kind_##name : nullptr,
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
};

}  // namespace

bool layer_kind_left_out(fb::LayerOptions options) {
  // (A value between two members is no kind: the schema's values have gaps.)
  return options >= fb::LayerOptions::MIN && options <= fb::LayerOptions::MAX &&
         options != fb::LayerOptions::NONE && fb::EnumNameLayerOptions(options)[0] != '\0' &&
         find_layer_kind(options) == nullptr;
}

const char* layer_kind_option_name(fb::LayerOptions options) {
  switch (options) {
#define EA_LAYER_KIND(name, ENUM, value, file_options, description) \
  case fb::LayerOptions::file_options:                              \
    return description " (" #name ")";
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
    default:
      return "unknown";
  }
}

const LayerKindModule* find_layer_kind(fb::LayerOptions options) {
  for (const LayerKindModule* m : kKinds) {
    if (m != nullptr && m->options == options) return m;
  }
  return nullptr;
}

const LayerKindModule* find_layer_kind(int kind) {
  for (const LayerKindModule* m : kKinds) {
    if (m != nullptr && m->kind == kind) return m;
  }
  return nullptr;
}

}  // namespace edgeattn
