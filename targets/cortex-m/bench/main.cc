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
#include "edgeattn/kernels/stage_profile.h"
#include "encoder_block_model.h"
#include "platform.h"
#include "pooling_model.h"
#if !EA_CM_BENCH_BLOCKS_ONLY
#include "shapes_model.h"
#endif
#include "transformer_model.h"
#if EA_CM_BENCH_BLOCK16
#include "block16_model.h"
#else
#define BLOCK16_MODEL_ARENA_BYTES 0
#endif
#if EA_CM_BENCH_BLOCKS_ONLY  // ea_cm_bench_block16 (M55): the two encoder blocks alone
#define SHAPES_MODEL_ARENA_BYTES 0
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
#if !EA_CM_BENCH_BLOCKS_ONLY
    {"transformer", transformer_model, TRANSFORMER_MODEL_SIZE},
    {"bahdanau", bahdanau_model, BAHDANAU_MODEL_SIZE},
    {"pooling", pooling_model, POOLING_MODEL_SIZE},
#endif
    {"encoder_block", encoder_block_model, ENCODER_BLOCK_MODEL_SIZE},
#if !EA_CM_BENCH_BLOCKS_ONLY
    {"shapes", shapes_model, SHAPES_MODEL_SIZE},
#endif
#if EA_CM_BENCH_BLOCK16
    // pre with --residual int16 (ea_cm_bench on M4, ea_cm_bench_block16 on M55)
    {"encoder_block16", block16_model, BLOCK16_MODEL_SIZE},
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

#if EA_STAGE_PROFILE
// The stage profile (ea_cm_bench_stages): the runtime's hooks
// (kernels/include/edgeattn/kernels/stage_profile.h) switch the stage that
// SysTick's ticks are counted to, during one run of each layer. A hook's own
// ticks, from its first reading to its second, go to "hooks", so the stages
// carry only the calls around them. The hooks read SysTick's 24-bit down
// counter alone (one load), so a span must stay under 2^24 ticks (670 million
// instructions on these boards).
enum Bucket { kOther, kProj, kScores, kSoftmax, kWsum, kFfn, kFfnGemm, kNorm, kHooks, kBuckets };
uint64_t g_ticks[kBuckets];
long long g_macs[2];  // projections, FFN
int g_bucket = kOther;
uint32_t g_last = 0;
bool g_armed = false;
uint32_t g_start = 0;
uint64_t g_total = 0;

uint32_t systick() { return *reinterpret_cast<volatile uint32_t*>(0xE000E018u); }
uint32_t ticks_between(uint32_t from, uint32_t to) { return (from - to) & 0x00FFFFFFu; }  // it counts down

int public_stage(int b) {
  switch (b) {
    case kProj: case kFfnGemm: return EA_STAGE_GEMM;
    case kScores: return EA_STAGE_SCORES;
    case kSoftmax: return EA_STAGE_SOFTMAX;
    case kWsum: return EA_STAGE_WSUM;
    case kFfn: return EA_STAGE_FFN;
    case kNorm: return EA_STAGE_LAYERNORM;
    default: return EA_STAGE_OTHER;
  }
}

int bucket_of(int stage, int from) {
  switch (stage) {
    case EA_STAGE_GEMM: return from == kFfn ? kFfnGemm : kProj;
    case EA_STAGE_SCORES: return kScores;
    case EA_STAGE_SOFTMAX: return kSoftmax;
    case EA_STAGE_WSUM: return kWsum;
    case EA_STAGE_FFN: return kFfn;
    case EA_STAGE_LAYERNORM: return kNorm;
    default: return kOther;
  }
}

// The bench core's tick source for the profiled run: its first reading (just
// before Interpreter::Run) arms the profile, its second closes it.
uint64_t profiled_now() {
  const uint32_t t = systick();
  if (!g_armed) {
    for (uint64_t& b : g_ticks) b = 0;
    g_macs[0] = g_macs[1] = 0;
    g_bucket = kOther;
    g_start = g_last = t;
    g_armed = true;
  } else {
    g_ticks[g_bucket] += ticks_between(g_last, t);
    g_total = ticks_between(g_start, t);
    g_armed = false;
  }
  return g_armed ? 0 : ea_cm::ticks_to_instructions(g_total);  // RunLayer's elapsed: the span
}
#endif

}  // namespace

#if EA_STAGE_PROFILE
extern "C" int ea_stage_enter(int stage) {
  if (!g_armed) return EA_STAGE_OTHER;
  const uint32_t t = systick();
  g_ticks[g_bucket] += ticks_between(g_last, t);
  const int left = public_stage(g_bucket);
  g_bucket = bucket_of(stage, g_bucket);
  g_last = systick();
  g_ticks[kHooks] += ticks_between(t, g_last);
  return left;
}

extern "C" void ea_stage_macs(long long macs) {
  if (g_armed) g_macs[g_bucket == kFfn ? 1 : 0] += macs;
}

namespace {

// num / den as "N.NNNN" (no printf on the board).
void write_ratio(uint64_t num, uint64_t den) {
  const uint64_t q = den == 0 ? 0 : (num * 10000 + den / 2) / den;
  ea_cm::write_uint(q / 10000);
  char digits[6] = {'.', 0, 0, 0, 0, 0};
  for (int i = 4, v = static_cast<int>(q % 10000); i >= 1; --i, v /= 10) digits[i] = static_cast<char>('0' + v % 10);
  ea_cm::write(digits);
}

// "<what> <model>/<layer>[ cached]": the head of a stages or gemm line.
void write_line_head(const char* what, const char* model_name, const char* layer, bool cached) {
  ea_cm::write(what);
  ea_cm::write(" ");
  ea_cm::write(model_name);
  ea_cm::write("/");
  ea_cm::write(layer);
  ea_cm::write(cached ? " cached" : "");
}

// " <key>=<value>"
void write_field(const char* key, uint64_t value) {
  ea_cm::write(" ");
  ea_cm::write(key);
  ea_cm::write("=");
  ea_cm::write_uint(value);
}

// Whether the layer's kind runs the stage (its hooks must have counted it).
bool runs(ea_layer_kind k, int bucket) {
  const bool block = k == EA_LAYER_ENCODER_BLOCK || k == EA_LAYER_DECODER_BLOCK;
  const bool attention = block || k == EA_LAYER_MULTI_HEAD_ATTENTION;
  switch (bucket) {
    case kProj: return attention || k == EA_LAYER_LINEAR;
    case kScores: case kSoftmax: case kWsum: return attention;
    case kFfn: case kFfnGemm: return block || k == EA_LAYER_FEED_FORWARD;
    case kNorm: return block || k == EA_LAYER_LAYERNORM;
    default: return false;
  }
}

// One more run of the layer with the profile armed; prints its "stages" and
// "gemm" lines and returns whether the stages add up to the run's total.
bool profile_layer(const char* model_name, Model& model, Interpreter& interp, int layer, bool cached) {
  bench::Options o;
  o.warmup = 0;
  o.iters = 1;
  o.cached = cached;
  const bench::Workspace ws = {g_io, sizeof g_io, g_samples, kMaxSamples};
  bench::LayerResult r;
  const char* why = "";
  if (bench::RunLayer(model, interp, layer, o, profiled_now, ws, &r, &why) != Status::kOk) return false;
  uint64_t sum = 0;
  for (uint64_t b : g_ticks) sum += b;
  // Each bucket in instructions; "other" takes the total's rest, so the line adds up exactly.
  uint64_t in[kBuckets];
  uint64_t named = 0;
  for (int b = kOther + 1; b < kBuckets; ++b) named += in[b] = ea_cm::ticks_to_instructions(g_ticks[b]);
  const uint64_t total = ea_cm::ticks_to_instructions(g_total);
  in[kOther] = total - named;
  write_line_head("stages", model_name, r.name, cached);
  write_field("total", total);
  write_field("proj", in[kProj]);
  write_field("scores", in[kScores]);
  write_field("softmax", in[kSoftmax]);
  write_field("wsum", in[kWsum]);
  write_field("ffn", in[kFfn] + in[kFfnGemm]);
  write_field("layernorm", in[kNorm]);
  write_field("other", in[kOther]);
  write_field("hooks", in[kHooks]);
  ea_cm::write_line("");
  const uint64_t macs = static_cast<uint64_t>(g_macs[0] + g_macs[1]);
  if (macs != 0) {
    const uint64_t gemm = in[kProj] + in[kFfnGemm];
    write_line_head("gemm", model_name, r.name, cached);
    write_field("macs", macs);
    write_field("instr", gemm);
    ea_cm::write(" instr_per_mac=");
    write_ratio(gemm, macs);
    // The core's floor: SMLAD does 2 multiply-adds (M4), VMLADAVA.S8 16 (M55).
#if defined(__ARM_FEATURE_MVE)
    ea_cm::write(" floor=0.0625");
#else
    ea_cm::write(" floor=0.5000");
#endif
    ea_cm::write_line("");
  }
  // The buckets, counted apart, must cover the run exactly; each stage the
  // kind runs must have been seen; where every stage has hooks (attention,
  // blocks) the rest must stay small.
  bool ok = sum == g_total && g_total != 0 && !g_armed;
  for (int b = kOther + 1; b < kHooks; ++b) ok = ok && (!runs(r.kind, b) || g_ticks[b] != 0);
  if (runs(r.kind, kScores)) ok = ok && in[kOther] * 4 < total;
  return ok;
}

}  // namespace
#endif

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
#if EA_STAGE_PROFILE
        if (!profile_layer(e.name, model, interp, layer, cached != 0)) {
          ea_cm::write_line("FAIL: the stages do not add up to the layer's total");
          ++failed;
        }
#endif
      }
    }
  }
  ea_cm::write_int(failed == 0 ? 1 : 0);
  ea_cm::write(" passed, ");
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
