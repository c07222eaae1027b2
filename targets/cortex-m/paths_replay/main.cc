// Cortex-M replay of the fuzz_paths corpus: a fixed sample of its int8 inputs
// (edgeattn-paths-cases, see paths_case.h), each model loaded from flash into
// a static arena through the C API and every layer run as fuzz_paths runs it
// (Run, a KV-cache step, the cached-keys run), once on "ref" and once on the
// board's best path (cmsis-dsp / helium). Every output byte and Q15 weight is
// compared with what the HOST's ref path produced: a kernel bug shared by
// both device paths still shows. Guard bytes after each buffer catch
// overruns. Prints each difference (input, layer, path, run, index, both
// values), then "N passed, N failed" (one count per layer and path) and
// exits non-zero on any failure.
#include <cstring>

#include "edgeattn/edgeattn.h"
#include "paths_cases.h"
#include "platform.h"

namespace {

constexpr uint32_t kGuard = 32;  // bytes after each output buffer
constexpr uint8_t kGuardByte = 0xA5;

alignas(16) uint8_t g_arena[EA_PATHS_MAX_ARENA];
int8_t g_out[EA_PATHS_MAX_OUTPUT + kGuard];
uint16_t g_weights[EA_PATHS_MAX_WEIGHTS + kGuard / 2];

int g_passed = 0;
int g_failed = 0;

struct Where {
  const ea_paths_input* input;
  int32_t layer;
  const char* path;
  const char* run;  // "run", "step", "cached-keys run"
};

void fail_line(const Where& w, const char* what) {
  ea_cm::write("FAIL ");
  ea_cm::write(w.input->name);
  ea_cm::write(" layer ");
  ea_cm::write_int(w.layer);
  ea_cm::write(" path ");
  ea_cm::write(w.path);
  ea_cm::write(" ");
  ea_cm::write(w.run);
  ea_cm::write(": ");
  ea_cm::write(what);
}

// First differing element and how many differ (elem 1: int8, 2: uint16).
bool compare(const Where& w, const char* what, const void* want, const void* got, uint32_t n, int elem) {
  if (std::memcmp(want, got, n * static_cast<uint32_t>(elem)) == 0) return true;
  uint32_t first = 0, count = 0;
  int32_t a = 0, b = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t x = elem == 1 ? static_cast<const int8_t*>(want)[i] : static_cast<const uint16_t*>(want)[i];
    const int32_t y = elem == 1 ? static_cast<const int8_t*>(got)[i] : static_cast<const uint16_t*>(got)[i];
    if (x != y && count++ == 0) {
      first = i;
      a = x;
      b = y;
    }
  }
  fail_line(w, what);
  ea_cm::write(" index ");
  ea_cm::write_uint(first);
  ea_cm::write(": host ref ");
  ea_cm::write_int(a);
  ea_cm::write(", device ");
  ea_cm::write_int(b);
  ea_cm::write(" (");
  ea_cm::write_uint(count);
  ea_cm::write(" of ");
  ea_cm::write_uint(n);
  ea_cm::write_line(" differ)");
  return false;
}

bool guard_ok(const Where& w, const void* buf, uint32_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(buf) + bytes;
  for (uint32_t i = 0; i < kGuard; ++i) {
    if (p[i] != kGuardByte) {
      fail_line(w, "wrote past the end of a buffer\n");
      return false;
    }
  }
  return true;
}

void prepare(uint32_t out_bytes, uint32_t weight_elems, uint8_t fill) {
  std::memset(g_out, kGuardByte, sizeof g_out);
  std::memset(g_weights, kGuardByte, sizeof g_weights);
  std::memset(g_out, fill, out_bytes);
  std::memset(g_weights, fill, weight_elems * 2u);
}

bool check(const Where& w, const int8_t* out, uint32_t out_len, const uint16_t* weights, uint32_t w_len) {
  bool ok = compare(w, "output", out, g_out, out_len, 1) && guard_ok(w, g_out, out_len);
  if (weights != nullptr) {
    ok = compare(w, "attention weights", weights, g_weights, w_len, 2) && guard_ok(w, g_weights, w_len * 2u) && ok;
  }
  return ok;
}

bool status_ok(const Where& w, ea_status st, ea_interpreter* interp) {
  if (st == EA_OK) return true;
  fail_line(w, ea_interpreter_error(interp));
  ea_cm::write("\n");
  return false;
}

// One layer on the current path: Run, KV-cache step, cached-keys run.
bool run_layer(const ea_model* model, ea_interpreter* interp, const Where& where, const ea_paths_layer& c,
               uint8_t fill) {
  Where w = where;
  w.run = "run";
  ea_run_args a = {};
  a.query = c.query;
  a.key = c.key;
  a.value = c.value;
  a.q_len = c.q_len;
  a.kv_len = c.key != nullptr ? c.kv_len : 0;
  a.kv_valid_len = c.kv_valid_len;
  a.output = g_out;
  a.attn_weights = c.weights != nullptr ? g_weights : nullptr;
  prepare(c.output_len, c.weights_len, fill);
  if (!status_ok(w, ea_interpreter_run(interp, c.layer, &a), interp)) return false;
  bool ok = check(w, c.output, c.output_len, c.weights, c.weights_len);
  if (c.step) {
    w.run = "step";
    prepare(c.step_output_len, c.step_weights_len, fill);
    const ea_status st = ea_interpreter_step(interp, c.layer, c.query, g_out,
                                             c.step_weights != nullptr ? g_weights : nullptr);
    ok = status_ok(w, st, interp) && check(w, c.step_output, c.step_output_len, c.step_weights,
                                           c.step_weights_len) && ok;
  }
  if (c.cached) {
    w.run = "cached-keys run";
    ea_status st = ea_interpreter_cache_keys(interp, c.layer, c.key, c.value, c.kv_len, c.kv_valid_len);
    if (!status_ok(w, st, interp)) return false;
    a.use_cached_keys = 1;
    a.key = nullptr;
    ea_layer_info info;
    if (ea_model_layer_info(model, c.layer, &info) == EA_OK &&
        info.kind != EA_LAYER_ADDITIVE) {
      a.value = nullptr;  // MHA: values cached too; additive: still given
    }
    prepare(c.output_len, c.weights_len, fill);
    ok = status_ok(w, ea_interpreter_run(interp, c.layer, &a), interp) &&
         check(w, c.output, c.output_len, c.weights, c.weights_len) && ok;
  }
  return ok;
}

void replay(const ea_paths_input& in, const char* best) {
  Where w = {&in, -1, "-", "load"};
  ea_model model;
  if (ea_model_load(&model, in.model, in.model_size) != EA_OK) {
    fail_line(w, ea_model_error(&model));
    ea_cm::write("\n");
    ++g_failed;
    return;
  }
  ea_interpreter interp;
  const ea_status st = ea_interpreter_init_for_lengths(&interp, &model, g_arena, in.arena_bytes, in.q_cap,
                                                       in.kv_cap);
  if (ea_model_arena_bytes_for(&model, in.q_cap, in.kv_cap) != in.arena_bytes || st != EA_OK) {
    fail_line(w, st != EA_OK ? ea_interpreter_error(&interp) : "arena bytes differ from the host's");
    ea_cm::write("\n");
    ++g_failed;
    return;
  }
  // ref first, then the board's path, as fuzz_paths orders them; different
  // fill bytes, so an element a path leaves unwritten differs.
  const char* const paths[] = {"ref", best};
  const uint8_t fills[] = {0x5A, 0xC3};
  for (int32_t j = 0; j < in.num_layers; ++j) {
    const ea_paths_layer& c = in.layers[j];
    for (int p = 0; p < 2; ++p) {
      w = {&in, c.layer, paths[p], "run"};
      if (ea_set_kernel_path(paths[p]) != EA_OK) {
        fail_line(w, "ea_set_kernel_path failed\n");
        ++g_failed;
        continue;
      }
      (run_layer(&model, &interp, w, c, fills[p]) ? g_passed : g_failed)++;
    }
  }
}

}  // namespace

int main() {
  ea_cm::ticks_start();
  // The path selected at start-up is the board's best.
  static char best[16];
  std::strncpy(best, ea_kernel_path(), sizeof best - 1);
  ea_cm::write("fuzz_paths corpus replay on ");
  ea_cm::write(ea_cm::kBoard);
  ea_cm::write(": ");
  ea_cm::write_uint(EA_PATHS_NUM_INPUTS);
  ea_cm::write(" inputs, ");
  ea_cm::write_uint(EA_PATHS_NUM_LAYER_CASES);
  ea_cm::write(" int8 layer cases, paths ref and ");
  ea_cm::write_line(best);
#if EA_CM_SIMD
  if (std::strcmp(best, "ref") == 0) {  // the replay would compare ref with itself
    ea_cm::write_line("FAIL the board's DSP/Helium path is not selected; 0 passed, 1 failed");
    return 1;
  }
#endif
  const uint64_t t0 = ea_cm::ticks();
  for (const ea_paths_input& in : ea_paths_inputs) replay(in, best);
  ea_cm::write("instructions: ");
  ea_cm::write_uint(ea_cm::ticks_to_instructions(ea_cm::ticks() - t0));
  ea_cm::write("\n");
  ea_cm::write_int(g_passed);
  ea_cm::write(" passed, ");
  ea_cm::write_int(g_failed);
  ea_cm::write_line(" failed");
  return g_failed != 0 ? 1 : 0;
}
