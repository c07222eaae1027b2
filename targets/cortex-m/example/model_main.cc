// Firmware example, whole model: a KWT-shaped keyword spotter (98 frames x 40
// features -> linear -> class token and positions -> encoder blocks ->
// LayerNorm -> class row -> 12 logits; with EA_CM_TORCH_KWT, Torch-KWT's
// post-norm form on each residual stream instead), converted at build time with
// --emit-c and run with ONE call per input, ea_interpreter_invoke(), in a
// static arena of exactly the converter's size. The logits are compared bit
// for bit with the host reference path's Invoke (edgeattn-golden-graph).
// The firmware links only the layer kinds of the model (CMake: KINDS of
// ea_cm_add_firmware), so it also checks that a model with another kind is
// refused at load, naming it. Prints instructions per inference, stack
// high-water and arena, then "N passed, N failed"; exits with the failures.
#include <cstring>

#include "edgeattn/edgeattn.h"
#include "firmware_report.h"
#include "platform.h"
#include "pooling_model.h"
#if EA_CM_TORCH_KWT
#include "golden_torch_kwt_int16.h"
#include "golden_torch_kwt_int8.h"
#include "torch_kwt_int16_model.h"
#include "torch_kwt_int8_model.h"
#else
#include "golden_kwt.h"
#include "kwt_model.h"
#endif
#if EA_CM_KWT_FULL
#include "golden_kwt_full.h"
#include "kwt_full_model.h"
#endif

namespace {

#if EA_CM_TORCH_KWT
alignas(16) uint8_t g_arena_torch_kwt_int16[TORCH_KWT_INT16_MODEL_ARENA_BYTES];
alignas(16) uint8_t g_arena_torch_kwt_int8[TORCH_KWT_INT8_MODEL_ARENA_BYTES];
#else
alignas(16) uint8_t g_arena_kwt[KWT_MODEL_ARENA_BYTES];
#endif
#if EA_CM_KWT_FULL
alignas(16) uint8_t g_arena_kwt_full[KWT_FULL_MODEL_ARENA_BYTES];
#endif

struct WholeModel {
  const char* name;
  const uint8_t* data;
  size_t size;
  size_t declared_arena;  // <NAME>_ARENA_BYTES
  uint8_t* arena;
  const ea_golden_graph_case* cases;
  int num_cases;
};

const WholeModel kModels[] = {
#if EA_CM_TORCH_KWT
    {"torch_kwt_int16", torch_kwt_int16_model, TORCH_KWT_INT16_MODEL_SIZE, TORCH_KWT_INT16_MODEL_ARENA_BYTES,
     g_arena_torch_kwt_int16, golden_torch_kwt_int16, GOLDEN_torch_kwt_int16_NUM_CASES},
    {"torch_kwt_int8", torch_kwt_int8_model, TORCH_KWT_INT8_MODEL_SIZE, TORCH_KWT_INT8_MODEL_ARENA_BYTES,
     g_arena_torch_kwt_int8, golden_torch_kwt_int8, GOLDEN_torch_kwt_int8_NUM_CASES},
#else
    {"kwt", kwt_model, KWT_MODEL_SIZE, KWT_MODEL_ARENA_BYTES, g_arena_kwt, golden_kwt, GOLDEN_kwt_NUM_CASES},
#endif
#if EA_CM_KWT_FULL
    {"kwt_full", kwt_full_model, KWT_FULL_MODEL_SIZE, KWT_FULL_MODEL_ARENA_BYTES, g_arena_kwt_full, golden_kwt_full,
     GOLDEN_kwt_full_NUM_CASES},
#endif
};

int8_t g_input[99 * 40];  // one row more than the models take
int8_t g_output[64];

void report(bool ok, const char* model, const char* what) {
  ea_cm_report::result(ok);
  ea_cm::write(model);
  ea_cm::write(" ");
  ea_cm::write_line(what);
}

void run_model(const WholeModel& m) {
  ea_cm::stack_paint();
  ea_model model;
  if (ea_model_load(&model, m.data, m.size) != EA_OK) {
    report(false, m.name, ea_model_error(&model));
    return;
  }
  ea_graph_info g;
  if (ea_model_graph_info(&model, &g) != EA_OK || g.input_dtype != EA_S8 || g.output_dtype != EA_S8 ||
      g.input_dim != 40 || g.max_input_rows != 98 || g.output_dim != 12) {
    report(false, m.name, "graph: not 98 x 40 int8 rows in, 12 int8 logits out");
    return;
  }
  report(ea_model_arena_bytes(&model) == m.declared_arena, m.name,
         "ea_model_arena_bytes equals the emitted _ARENA_BYTES");
  ea_interpreter interp;
  report(ea_interpreter_init(&interp, &model, m.arena, m.declared_arena - 1) == EA_ARENA_TOO_SMALL, m.name,
         "init refuses an arena one byte short (EA_ARENA_TOO_SMALL)");
  if (ea_interpreter_init(&interp, &model, m.arena, m.declared_arena) != EA_OK) {
    report(false, m.name, ea_interpreter_error(&interp));
    return;
  }
  for (int i = 0; i < m.num_cases; ++i) {
    const ea_golden_graph_case& c = m.cases[i];
    std::memset(g_output, 0x5a, sizeof g_output);
    const ea_model_inputs in = {c.input, c.num_rows, 0, nullptr, 0, 0};
    ea_model_outputs out = {g_output, 0};
    const uint64_t t0 = ea_cm::ticks();
    const ea_status st = ea_interpreter_invoke(&interp, &in, &out);
    const uint64_t t1 = ea_cm::ticks();
    if (st != EA_OK) {
      report(false, m.name, ea_interpreter_error(&interp));
      continue;
    }
    const bool ok = c.output_len <= sizeof g_output && out.num_rows * g.output_dim == static_cast<int32_t>(c.output_len) &&
                    std::memcmp(g_output, c.output, c.output_len) == 0;
    report(ok, m.name, ok ? "invoke: logits bit-exact with the host reference path" : "invoke: logits differ");
    ea_cm::write("  instructions per inference: ");
    ea_cm::write_uint(ea_cm::ticks_to_instructions(t1 - t0));
    ea_cm::write("\n");
  }
  // Too many input rows: refused with a message, nothing run.
  const ea_model_inputs too_long = {g_input, g.max_input_rows + 1, 0, nullptr, 0, 0};
  ea_model_outputs out = {g_output, 0};
  const bool refused = ea_interpreter_invoke(&interp, &too_long, &out) == EA_LENGTH_EXCEEDS_PLAN;
  ea_cm::write("  ");
  ea_cm::write_line(ea_interpreter_error(&interp));
  report(refused, m.name, "invoke refuses 99 input rows (EA_LENGTH_EXCEEDS_PLAN)");

  ea_cm_report::memory(m.name, m.declared_arena, m.size, g.num_steps);
}

// This firmware has only the whole model's kinds: a model with another kind
// (the bundled pooling layer) must be refused at load, saying so.
void left_out_kind() {
  ea_model model;
  const ea_status st = ea_model_load(&model, pooling_model, POOLING_MODEL_SIZE);
  ea_cm::write("  ");
  ea_cm::write_line(ea_model_error(&model));
  report(st == EA_UNSUPPORTED && std::strstr(ea_model_error(&model), "left out of this build") != nullptr, "pooling",
         "load refuses a kind left out of this firmware (EA_UNSUPPORTED)");
}

}  // namespace

int main() {
  ea_cm_report::begin("whole-model firmware");
  for (const WholeModel& m : kModels) run_model(m);
  left_out_kind();
  return ea_cm_report::end();
}
