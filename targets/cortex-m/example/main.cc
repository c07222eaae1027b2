// Firmware example: the bundled int8 models embedded as C arrays
// (edgeattn-convert --emit-c), each with a static arena of exactly the size the
// converter recorded, run on embedded inputs; the outputs and Q15 attention
// weights are compared bit for bit with the host reference path's
// (edgeattn-golden). Prints "N passed, N failed" and exits with the number of
// failures (qemu semihosting). Also reports per-case instruction counts and
// the stack high-water mark of each model.
//
// EA_ARENA_SHRINK=1 builds every arena one byte short: then each model must
// be refused with EA_ARENA_TOO_SMALL (and nothing may crash).
#include <cstring>

#include "bahdanau_model.h"
#include "edgeattn/edgeattn.h"
#include "encoder_block_model.h"
#include "golden_bahdanau.h"
#include "golden_encoder_block.h"
#include "golden_pooling.h"
#include "golden_transformer.h"
#include "firmware_report.h"
#include "platform.h"
#include "pooling_model.h"
#include "transformer_model.h"

#ifndef EA_ARENA_SHRINK
#define EA_ARENA_SHRINK 0
#endif

namespace {

alignas(16) uint8_t g_arena_transformer[TRANSFORMER_MODEL_ARENA_BYTES - EA_ARENA_SHRINK];
alignas(16) uint8_t g_arena_bahdanau[BAHDANAU_MODEL_ARENA_BYTES - EA_ARENA_SHRINK];
alignas(16) uint8_t g_arena_pooling[POOLING_MODEL_ARENA_BYTES - EA_ARENA_SHRINK];
alignas(16) uint8_t g_arena_encoder_block[ENCODER_BLOCK_MODEL_ARENA_BYTES - EA_ARENA_SHRINK];

struct EmbeddedModel {
  const char* name;
  const uint8_t* data;
  size_t size;
  size_t declared_arena;  // <NAME>_ARENA_BYTES
  uint8_t* arena;
  size_t arena_bytes;
  const ea_golden_case* cases;
  int num_cases;
};

const EmbeddedModel kModels[] = {
    {"transformer", transformer_model, TRANSFORMER_MODEL_SIZE, TRANSFORMER_MODEL_ARENA_BYTES,
     g_arena_transformer, sizeof g_arena_transformer, golden_transformer, GOLDEN_transformer_NUM_CASES},
    {"bahdanau", bahdanau_model, BAHDANAU_MODEL_SIZE, BAHDANAU_MODEL_ARENA_BYTES, g_arena_bahdanau,
     sizeof g_arena_bahdanau, golden_bahdanau, GOLDEN_bahdanau_NUM_CASES},
    {"pooling", pooling_model, POOLING_MODEL_SIZE, POOLING_MODEL_ARENA_BYTES, g_arena_pooling,
     sizeof g_arena_pooling, golden_pooling, GOLDEN_pooling_NUM_CASES},
    {"encoder_block", encoder_block_model, ENCODER_BLOCK_MODEL_SIZE, ENCODER_BLOCK_MODEL_ARENA_BYTES,
     g_arena_encoder_block, sizeof g_arena_encoder_block, golden_encoder_block, GOLDEN_encoder_block_NUM_CASES},
};

// Outputs of one case (largest bundled case: 13 x 60 int8, 4 x 13 x 13 Q15).
[[maybe_unused]] int8_t g_output[2048];
[[maybe_unused]] uint16_t g_weights[4096];

void report(bool ok, const char* model, const char* what, int32_t layer, int32_t sample) {
  ea_cm_report::result(ok);
  ea_cm::write(model);
  ea_cm::write(" layer ");
  ea_cm::write_int(layer);
  ea_cm::write(" sample ");
  ea_cm::write_int(sample);
  ea_cm::write(" ");
  ea_cm::write_line(what);
}

void run_model(const EmbeddedModel& m) {
  ea_cm::stack_paint();
  ea_model model;
  ea_status st = ea_model_load(&model, m.data, m.size);
  if (st != EA_OK) {
    report(false, m.name, ea_model_error(&model), -1, -1);
    return;
  }
  if (ea_model_arena_bytes(&model) != m.declared_arena) {
    report(false, m.name, "ea_model_arena_bytes differs from the emitted _ARENA_BYTES", -1, -1);
  }
  ea_interpreter interp;
  st = ea_interpreter_init(&interp, &model, m.arena, m.arena_bytes);
#if EA_ARENA_SHRINK
  ea_cm::write(m.name);
  ea_cm::write(": arena ");
  ea_cm::write_uint(m.arena_bytes);
  ea_cm::write(" of ");
  ea_cm::write_uint(m.declared_arena);
  ea_cm::write(" bytes: ");
  ea_cm::write_line(ea_interpreter_error(&interp));
  report(st == EA_ARENA_TOO_SMALL, m.name, "init refuses an arena one byte short (EA_ARENA_TOO_SMALL)", -1, -1);
  return;
#else
  if (st != EA_OK) {
    report(false, m.name, ea_interpreter_error(&interp), -1, -1);
    return;
  }
  for (int i = 0; i < m.num_cases; ++i) {
    const ea_golden_case& c = m.cases[i];
    if (c.output_len > sizeof g_output || c.weights_len > sizeof g_weights / sizeof g_weights[0]) {
      report(false, m.name, "case larger than the output buffers", c.layer, c.sample);
      continue;
    }
    std::memset(g_output, 0x5a, sizeof g_output);
    std::memset(g_weights, 0x5a, sizeof g_weights);
    ea_run_args a = {};
    a.query = c.query;
    a.key = c.key;
    a.value = c.value;
    a.q_len = c.q_len;
    a.kv_len = c.kv_len;
    a.kv_valid_len = c.kv_valid_len;
    a.output = g_output;
    a.attn_weights = c.weights_len > 0 ? g_weights : nullptr;  // layernorm, ffn: none
    uint64_t t0 = ea_cm::ticks();
    if (c.cached) {
      st = ea_interpreter_cache_keys(&interp, c.layer, c.key, c.value, c.kv_len, c.kv_valid_len);
      if (st != EA_OK) {
        report(false, m.name, ea_interpreter_error(&interp), c.layer, c.sample);
        continue;
      }
      a.use_cached_keys = 1;
      a.key = nullptr;
      if (c.value == nullptr) a.value = c.key;  // additive: the sequence the keys came from
    }
    st = ea_interpreter_run(&interp, c.layer, &a);
    const uint64_t t1 = ea_cm::ticks();
    if (st != EA_OK) {
      report(false, m.name, ea_interpreter_error(&interp), c.layer, c.sample);
      continue;
    }
    const bool out_ok = std::memcmp(g_output, c.output, c.output_len) == 0;
    const bool w_ok = std::memcmp(g_weights, c.weights, c.weights_len * sizeof(uint16_t)) == 0;
    report(out_ok && w_ok,
           m.name, out_ok ? (w_ok ? "bit-exact" : "attention weights differ") : "output differs", c.layer,
           c.sample);
    ea_cm::write("  instructions: ");
    ea_cm::write_uint(ea_cm::ticks_to_instructions(t1 - t0 - (t0 - t0)));
    ea_cm::write(c.cached ? " (CacheKeys + Run)\n" : " (Run)\n");
  }
#endif
  ea_cm_report::memory(m.name, m.arena_bytes, m.size);
}

}  // namespace

int main() {
  ea_cm_report::begin("firmware example");
  for (const EmbeddedModel& m : kModels) run_model(m);
  return ea_cm_report::end();
}
