// edgeattn-bench for Cortex-M: the lead's portable bench core (bench/bench_core.h)
// on every layer of the bundled int8 models and of the CMSIS-NN comparison's
// shapes (make_shapes_model.py), embedded as C arrays.
//
// Unit: with EA_CM_DWT=1 (real silicon with a DWT) the DWT cycle counter, in
// cycles. Otherwise (default; qemu) SysTick ticks converted to instructions:
// under qemu-system-arm -icount shift=0 every instruction is 1 ns of guest time,
// so the figure is the exact, deterministic number of executed instructions.
// It is not a cycle count (qemu models no pipeline, memory or cache; an MVE
// beat counts as one instruction): a regression proxy only.
#include <cstring>

#include "bahdanau_model.h"
#include "bench_core.h"
#include "edgeattn/edgeattn.hpp"
#include "encoder_block_model.h"
#include "platform.h"
#include "pooling_model.h"
#include "shapes_model.h"
#include "transformer_model.h"
#if EA_CM_BENCH_BLOCK16
#include "block16_model.h"
#else
#define BLOCK16_MODEL_ARENA_BYTES 0
#endif

namespace {

using namespace edgeattn;

constexpr size_t max_of(size_t a, size_t b) { return a > b ? a : b; }
alignas(16) uint8_t g_arena[max_of(max_of(max_of(TRANSFORMER_MODEL_ARENA_BYTES, BAHDANAU_MODEL_ARENA_BYTES),
                                          max_of(POOLING_MODEL_ARENA_BYTES, SHAPES_MODEL_ARENA_BYTES)),
                                   max_of(ENCODER_BLOCK_MODEL_ARENA_BYTES, BLOCK16_MODEL_ARENA_BYTES))];
alignas(16) uint8_t g_io[32768];
constexpr int kMaxSamples = 16;
uint64_t g_samples[kMaxSamples];

#if defined(EA_CM_DWT) && EA_CM_DWT
constexpr const char* kUnit = "cycles (DWT CYCCNT)";
volatile uint32_t& reg(uint32_t a) { return *reinterpret_cast<volatile uint32_t*>(a); }
uint64_t g_cycles_high = 0;
uint32_t g_last = 0;
uint64_t now() {
  const uint32_t c = reg(0xE0001004u);
  if (c < g_last) g_cycles_high += 1ull << 32;
  g_last = c;
  return g_cycles_high | c;
}
void start_counter() {
  reg(0xE000EDFCu) |= 1u << 24;  // DEMCR.TRCENA
  reg(0xE0001004u) = 0;
  reg(0xE0001000u) |= 1u;        // DWT_CTRL.CYCCNTENA
}
#else
constexpr const char* kUnit = "instructions (qemu -icount shift=0, from SysTick; not cycles)";
uint64_t now() { return ea_cm::ticks_to_instructions(ea_cm::ticks()); }
void start_counter() { ea_cm::ticks_start(); }
#endif

struct Embedded {
  const char* name;
  const uint8_t* data;
  size_t size;
};
const Embedded kModels[] = {
    {"transformer", transformer_model, TRANSFORMER_MODEL_SIZE},
    {"bahdanau", bahdanau_model, BAHDANAU_MODEL_SIZE},
    {"pooling", pooling_model, POOLING_MODEL_SIZE},
    {"encoder_block", encoder_block_model, ENCODER_BLOCK_MODEL_SIZE},
    {"shapes", shapes_model, SHAPES_MODEL_SIZE},
#if EA_CM_BENCH_BLOCK16
    {"encoder_block16", block16_model, BLOCK16_MODEL_SIZE},  // pre with --residual int16 (M4 only)
#endif
};

#ifdef EA_CM_BENCH_ONLY
// Whether want is "<model>/<layer>".
bool same_layer(const char* want, const char* model, const char* layer) {
  const size_t m = std::strlen(model);
  return std::strncmp(want, model, m) == 0 && want[m] == '/' && std::strcmp(want + m + 1, layer) == 0;
}
#endif

// A loop of exactly 2 * n instructions (subs + bne), to check the unit.
__attribute__((noinline)) void spin(uint32_t n) {
  __asm__ volatile(
      "1: subs %0, %0, #1\n\t"
      "bne 1b"
      : "+r"(n)::"cc");
}

}  // namespace

int main() {
  start_counter();
  ea_cm::write("edgeattn-bench (cortex-m) on ");
  ea_cm::write(ea_cm::kBoard);
  ea_cm::write(", kernel path ");
  ea_cm::write_line(ea_kernel_path());
  ea_cm::write("unit: ");
  ea_cm::write_line(kUnit);
  const uint64_t c0 = now();
  spin(1000000);
  const uint64_t c1 = now();
  ea_cm::write("calibration: a 2000000-instruction loop measures ");
  ea_cm::write_uint(c1 - c0);
  ea_cm::write_line("");

  int failed = 0;
  for (const Embedded& e : kModels) {
    Model model;
    Interpreter interp;
    if (model.Load(e.data, e.size) != Status::kOk ||
        interp.Init(&model, g_arena, sizeof g_arena) != Status::kOk) {
      ea_cm::write_line("FAIL: cannot load/init the model");
      ++failed;
      continue;
    }
    for (int layer = 0; layer < model.num_layers(); ++layer) {
      for (int cached = 0; cached < 2; ++cached) {
        LayerInfo info;
        model.GetLayerInfo(layer, &info);
#ifdef EA_CM_BENCH_ONLY
        // One layer only ("model/layer"), e.g. for a per-function profile of it.
        if (!same_layer(EA_CM_BENCH_ONLY, e.name, info.name)) continue;
#endif
        // Cached keys and values (cross-attention, additive); a decoder block also
        // caches its memory, but its cached run is a KV-cache step, not timed here.
        const bool cacheable = info.key_cache != 0 && info.kv_cache == 0;
        if (cached && !cacheable) continue;
        bench::Options o;
        o.warmup = 1;
        o.iters = 5;
        o.cached = cached != 0;
        const bench::Workspace ws = {g_io, sizeof g_io, g_samples, kMaxSamples};
        bench::LayerResult r;
        const char* why = "";
        const Status st = bench::RunLayer(model, interp, layer, o, now, ws, &r, &why);
        if (st != Status::kOk) {
          ea_cm::write("FAIL: ");
          ea_cm::write(e.name);
          ea_cm::write(": ");
          ea_cm::write(why);
          ea_cm::write_line(interp.error());
          ++failed;
          continue;
        }
        ea_cm::write(e.name);
        ea_cm::write("/");
        ea_cm::write(r.name);
        ea_cm::write(" ");
        ea_cm::write(ea_layer_kind_name(r.kind));
        ea_cm::write(cached ? " cached" : "");
        ea_cm::write(" q=");
        ea_cm::write_int(r.q_len);
        ea_cm::write(" kv=");
        ea_cm::write_int(r.kv_len);
        ea_cm::write(" min=");
        ea_cm::write_uint(r.min);
        ea_cm::write(" median=");
        ea_cm::write_uint(r.median);
        ea_cm::write(" max=");
        ea_cm::write_uint(r.max);
        ea_cm::write(" output=");
        ea_cm::write_hex32(r.output_hash);  // FNV-1a, as edgeattn-bench prints it
        ea_cm::write_line("");
      }
    }
  }
  ea_cm::write_int(failed == 0 ? 1 : 0);
  ea_cm::write(" passed, ");
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
