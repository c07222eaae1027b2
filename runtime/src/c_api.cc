// The C API: thin wrappers that construct the C++ objects inside the
// caller's opaque storage (placement new: no heap).
#include <cstring>
#include <new>
#include <type_traits>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"

namespace {

using edgeattn::Interpreter;
using edgeattn::Model;

static_assert(sizeof(Model) <= sizeof(ea_model), "ea_model storage too small");
static_assert(alignof(Model) <= alignof(ea_model), "ea_model storage misaligned");
static_assert(sizeof(Interpreter) <= sizeof(ea_interpreter), "ea_interpreter storage too small");
static_assert(alignof(Interpreter) <= alignof(ea_interpreter), "ea_interpreter storage misaligned");

const Model* as_model(const ea_model* m) {
  return std::launder(reinterpret_cast<const Model*>(m->opaque.bytes));
}
Interpreter* as_interp(ea_interpreter* i) {
  return std::launder(reinterpret_cast<Interpreter*>(i->opaque.bytes));
}
const Interpreter* as_interp(const ea_interpreter* i) {
  return std::launder(reinterpret_cast<const Interpreter*>(i->opaque.bytes));
}

ea_status to_c(edgeattn::Status s) { return static_cast<ea_status>(s); }

// A C caller may pass any int where edgeattn.h names an enum type, but C++
// may not read a value outside the enum's range through that type (UBSan:
// "load of value 7, which is not a valid value for type 'ea_range_policy'"):
// the C API reads such an argument's bits and checks them as an integer.
template <typename Enum>
long c_value(const Enum& value) {
  std::underlying_type_t<Enum> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<long>(bits);
}

}  // namespace

extern "C" {

ea_status ea_set_kernel_path(const char* name) { return to_c(edgeattn::SetKernelPath(name)); }

const char* ea_kernel_path(void) { return edgeattn::KernelPath(); }

const char* ea_status_string(ea_status status) {
  const long value = c_value(status);
  if (value < 0 || value > 255) return "unknown status";
  return edgeattn::status_string(static_cast<edgeattn::Status>(value));
}

const char* ea_layer_kind_name(ea_layer_kind kind) {
  switch (c_value(kind)) {
#define EA_LAYER_KIND(name, ENUM, value, options, description) \
  case EA_LAYER_##ENUM:                                        \
    return #name;
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
    case EA_LAYER_KIND_COUNT:
      break;
  }
  return "?";
}

ea_status ea_model_load(ea_model* model, const void* data, size_t size) {
  if (model == nullptr) return EA_INVALID_ARGUMENT;
  Model* m = new (model->opaque.bytes) Model();
  return to_c(m->Load(data, size));
}

const char* ea_model_error(const ea_model* model) {
  return model != nullptr ? as_model(model)->error() : "model is null";
}

int32_t ea_model_num_layers(const ea_model* model) {
  return model != nullptr ? as_model(model)->num_layers() : 0;
}

int32_t ea_model_find_layer(const ea_model* model, const char* name) {
  return model != nullptr ? as_model(model)->FindLayer(name) : -1;
}

ea_status ea_model_layer_info(const ea_model* model, int32_t layer, ea_layer_info* info) {
  if (model == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_model(model)->GetLayerInfo(layer, info));
}

ea_status ea_model_graph_info(const ea_model* model, ea_graph_info* info) {
  if (model == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_model(model)->GetGraphInfo(info));
}

int32_t ea_model_graph_output_rows(const ea_model* model, int32_t num_rows) {
  return model != nullptr ? as_model(model)->GraphOutputRows(num_rows) : 0;
}

size_t ea_model_arena_bytes(const ea_model* model) {
  return model != nullptr ? as_model(model)->arena_bytes() : 0;
}

size_t ea_model_arena_bytes_for(const ea_model* model, int32_t max_q_len, int32_t max_kv_len) {
  if (model == nullptr || !as_model(model)->loaded()) return 0;
  return as_model(model)->ArenaBytesFor(max_q_len, max_kv_len);
}

size_t ea_model_worker_bytes(const ea_model* model) {
  if (model == nullptr || !as_model(model)->loaded()) return 0;
  return as_model(model)->worker_bytes();
}

size_t ea_model_arena_bytes_for_workers(const ea_model* model, int32_t workers, int32_t max_q_len,
                                        int32_t max_kv_len) {
  if (model == nullptr || !as_model(model)->loaded()) return 0;
  return as_model(model)->ArenaBytesForWorkers(workers, max_q_len, max_kv_len);
}

ea_status ea_interpreter_init_for_lengths(ea_interpreter* interp, const ea_model* model,
                                          void* arena, size_t arena_bytes, int32_t max_q_len,
                                          int32_t max_kv_len) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  Interpreter* i = new (interp->opaque.bytes) Interpreter();
  return to_c(i->Init(model != nullptr ? as_model(model) : nullptr, arena, arena_bytes,
                      max_q_len, max_kv_len));
}

ea_status ea_interpreter_init(ea_interpreter* interp, const ea_model* model, void* arena,
                              size_t arena_bytes) {
  return ea_interpreter_init_for_lengths(interp, model, arena, arena_bytes, 0, 0);
}

ea_status ea_interpreter_cache_keys(ea_interpreter* interp, int32_t layer, const void* key,
                                    const void* value, int32_t kv_len, int32_t kv_valid_len) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->CacheKeys(layer, key, value, kv_len, kv_valid_len));
}

size_t ea_model_range_bytes(const ea_model* model, int32_t max_q_len, int32_t max_kv_len) {
  return model != nullptr ? as_model(model)->RangeBytes(max_q_len, max_kv_len) : 0;
}

ea_status ea_interpreter_run_scaled(ea_interpreter* interp, int32_t layer, const ea_run_args* args,
                                    uint32_t range_q16) {
  if (interp == nullptr || args == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->RunScaled(layer, *args, range_q16));
}

ea_status ea_interpreter_run_float(ea_interpreter* interp, int32_t layer, const ea_run_args* args,
                                   ea_range_policy policy, uint32_t* range_q16_out) {
  if (interp == nullptr || args == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->RunFloat(layer, *args, static_cast<int>(c_value(policy)), range_q16_out));
}

ea_status ea_interpreter_run(ea_interpreter* interp, int32_t layer, const ea_run_args* args) {
  if (interp == nullptr || args == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->Run(layer, *args));
}

ea_status ea_interpreter_invoke(ea_interpreter* interp, const ea_model_inputs* inputs,
                                ea_model_outputs* outputs) {
  if (interp == nullptr || inputs == nullptr || outputs == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->Invoke(*inputs, outputs));
}

ea_status ea_interpreter_generate(ea_interpreter* interp, const ea_model_inputs* inputs,
                                  const ea_generate_options* options, int32_t* tokens, int32_t capacity,
                                  int32_t* num_tokens) {
  if (interp == nullptr || inputs == nullptr || options == nullptr) return EA_INVALID_ARGUMENT;
  int n = 0;
  const ea_status s = to_c(as_interp(interp)->Generate(*inputs, *options, tokens, capacity,
                                                        num_tokens != nullptr ? &n : nullptr));
  if (num_tokens != nullptr) *num_tokens = n;
  return s;
}

ea_status ea_interpreter_begin_sequence(ea_interpreter* interp, int32_t layer) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->BeginSequence(layer));
}

ea_status ea_interpreter_step(ea_interpreter* interp, int32_t layer, const void* query,
                              void* output, void* attn_weights) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->Step(layer, query, output, attn_weights));
}

int32_t ea_interpreter_cached_len(const ea_interpreter* interp, int32_t layer) {
  return interp != nullptr ? as_interp(interp)->CachedLength(layer) : -1;
}

const char* ea_interpreter_error(const ea_interpreter* interp) {
  return interp != nullptr ? as_interp(interp)->error() : "interpreter is null";
}

int32_t ea_xnnpack_built(void) { return edgeattn::XnnpackBuilt() ? 1 : 0; }

ea_status ea_xnnpack_initialize(void) { return to_c(edgeattn::XnnpackInitialize()); }

ea_status ea_interpreter_use_executor(ea_interpreter* interp, const ea_executor* executor) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->UseExecutor(executor));
}

ea_status ea_interpreter_use_xnnpack(ea_interpreter* interp) {
  if (interp == nullptr) return EA_INVALID_ARGUMENT;
  return to_c(as_interp(interp)->UseXnnpack());
}

size_t ea_interpreter_xnnpack_bytes(const ea_interpreter* interp) {
  return interp != nullptr ? as_interp(interp)->xnnpack_bytes() : 0;
}

}  // extern "C"
