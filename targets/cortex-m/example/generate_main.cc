// Firmware example, generation: the bundled seq2seq transformer as one
// generating file (models/transformer/generate.spec.json: token embedding,
// positions, encoder block, LayerNorm; per token the target's embedding,
// positions, decoder block, LayerNorm, output head and argmax), converted at
// build time with --emit-c and run with ONE call per source,
// ea_interpreter_generate(): the encoder once, then one decoder step per
// token on the KV caches until EOS, the embedding lookup and the argmax on
// the device, in a static arena of exactly the converter's size. The tokens
// are compared with the host reference path's Generate
// (edgeattn-golden-generate). The firmware links only the model's kinds.
// Prints instructions per generation and per token, stack high-water and
// arena, then "N passed, N failed"; exits with the failures.
#include <cstring>

#include "edgeattn/edgeattn.h"
#include "golden_transformer_generate.h"
#include "firmware_report.h"
#include "platform.h"
#include "transformer_generate_model.h"

namespace {

alignas(16) uint8_t g_arena[TRANSFORMER_GENERATE_MODEL_ARENA_BYTES];
int32_t g_tokens[32];

void report(bool ok, const char* what) {
  ea_cm_report::result(ok);
  ea_cm::write_line(what);
}

void run() {
  ea_cm::stack_paint();
  ea_model model;
  if (ea_model_load(&model, transformer_generate_model, TRANSFORMER_GENERATE_MODEL_SIZE) != EA_OK) {
    report(false, ea_model_error(&model));
    return;
  }
  ea_graph_info g;
  if (ea_model_graph_info(&model, &g) != EA_OK || g.decoder_start == 0 || g.input_dtype != EA_S32 ||
      g.max_tokens < 1 || g.max_tokens > static_cast<int32_t>(sizeof g_tokens / sizeof g_tokens[0]) - 1) {
    report(false, "graph: not a generating model with token ids in");
    return;
  }
  report(ea_model_arena_bytes(&model) == TRANSFORMER_GENERATE_MODEL_ARENA_BYTES,
         "ea_model_arena_bytes equals the emitted _ARENA_BYTES");
  ea_interpreter interp;
  report(ea_interpreter_init(&interp, &model, g_arena, sizeof g_arena - 1) == EA_ARENA_TOO_SMALL,
         "init refuses an arena one byte short (EA_ARENA_TOO_SMALL)");
  if (ea_interpreter_init(&interp, &model, g_arena, sizeof g_arena) != EA_OK) {
    report(false, ea_interpreter_error(&interp));
    return;
  }
  const ea_generate_options options = {GOLDEN_transformer_generate_BOS, GOLDEN_transformer_generate_EOS,
                                       g.max_tokens};
  uint64_t all_instructions = 0;
  int32_t all_tokens = 0;
  for (int i = 0; i < GOLDEN_transformer_generate_NUM_CASES; ++i) {
    const ea_golden_generate_case& c = golden_transformer_generate[i];
    std::memset(g_tokens, 0x5a, sizeof g_tokens);
    const ea_model_inputs in = {c.source, c.num_rows, c.valid_rows, nullptr, 0, 0};
    int32_t n = 0;
    const uint64_t t0 = ea_cm::ticks();
    const ea_status st = ea_interpreter_generate(&interp, &in, &options, g_tokens, g.max_tokens, &n);
    const uint64_t t1 = ea_cm::ticks();
    if (st != EA_OK) {
      report(false, ea_interpreter_error(&interp));
      continue;
    }
    const bool ok = n == c.num_tokens && std::memcmp(g_tokens, c.tokens, sizeof(int32_t) * n) == 0 &&
                    g_tokens[n] == 0x5a5a5a5a;  // nothing written past the last token
    report(ok, ok ? "generate: tokens equal the host reference path's" : "generate: tokens differ");
    const uint64_t instructions = ea_cm::ticks_to_instructions(t1 - t0);
    all_instructions += instructions;
    all_tokens += n;
    ea_cm::write("  ");
    ea_cm::write_uint(static_cast<uint64_t>(n));
    ea_cm::write(" tokens from ");
    ea_cm::write_uint(static_cast<uint64_t>(c.valid_rows));
    ea_cm::write(" source ids, instructions ");
    ea_cm::write_uint(instructions);
    ea_cm::write("\n");
  }
  ea_cm::write("  instructions per generation (mean): ");
  ea_cm::write_uint(all_instructions / GOLDEN_transformer_generate_NUM_CASES);
  ea_cm::write(", per token (mean, the encoder's share included): ");
  ea_cm::write_uint(all_tokens > 0 ? all_instructions / static_cast<uint64_t>(all_tokens) : 0);
  ea_cm::write("\n");

  // More tokens than the plan holds: refused with a message, nothing run.
  const ea_golden_generate_case& c = golden_transformer_generate[0];
  const ea_model_inputs in = {c.source, c.num_rows, c.valid_rows, nullptr, 0, 0};
  const ea_generate_options too_many = {options.bos, options.eos, g.max_tokens + 1};
  int32_t n = 0;
  const bool refused = ea_interpreter_generate(&interp, &in, &too_many, g_tokens, g.max_tokens + 1, &n) ==
                       EA_LENGTH_EXCEEDS_PLAN && n == 0;
  ea_cm::write("  ");
  ea_cm::write_line(ea_interpreter_error(&interp));
  report(refused, "generate refuses max_tokens above the plan's (EA_LENGTH_EXCEEDS_PLAN)");

  ea_cm_report::memory("transformer_generate", sizeof g_arena, TRANSFORMER_GENERATE_MODEL_SIZE, g.num_steps);
}

}  // namespace

int main() {
  ea_cm_report::begin("generation firmware");
  run();
  return ea_cm_report::end();
}
