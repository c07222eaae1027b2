// Differential fuzz target: every kernel path this machine supports must give
// the reference path's int8 results, byte for byte.
//
// The input is a model file with the trailer of model_input.h (lengths,
// kv_valid_len, attention weights, float specials, input seed). Every layer
// runs once per kernel path, the path forced through the public API
// (edgeattn::SetKernelPath; a path the build or CPU lacks returns non-OK and
// is skipped), and for cross-attention MHA, additive and decoder-block layers
// also as a decoder step with cached keys (CacheKeys + use_cached_keys). For int8
// layers every output byte and every Q15 attention weight (when requested)
// must equal the "ref" path's; the cached-keys run must also equal the
// uncached run of the same path. Any difference prints the layer, the path,
// the element index and both values, then aborts.
//
// Float (f32) layers are run on every path but their values are NOT compared:
// float paths are not bit-exact by contract (SIMD summation order, vector
// expf vs libm). The kernel tests bound the difference per kernel
// (tests/kernels/f32_linear_test.cc, F32Linear.WithinBound: 2 gamma_(in+1) sum|w x|;
// F32AttentionWithinBound: (expm1(2 ds) + 2 gamma_(n+8) + 2 gamma_n) max|v|),
// and those bounds need the kernels' intermediate operands (projected Q/K/V,
// scores), which the public API does not expose; through three projections
// and a softmax of fuzzed weights any fixed tolerance would either miss real
// bugs or report rounding. So f32 runs check only that every path returns
// EA_OK and writes nothing past its outputs, and NaN/Inf inputs (trailer bit
// 6.1) stay enabled for them. Every layer and path checks guard bytes after
// the output and weight buffers.
//
// Not compared: the XNNPACK backend (Interpreter::UseXnnpack). It requantizes
// in float with ties to even, so projections may differ from the reference by
// 1 by contract (docs/performance.md); fuzz_model covers it for crashes.
//
// Lengths go up to kMaxLen (70 and beyond, so ragged 16/32/64-wide SIMD tails
// are reached), with arena, I/O and multiply-accumulate counts bounded so
// that one input stays fast (also under qemu, see replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/kernels/dispatch.h"
#include "model_input.h"
#include "paths_limits.h"

namespace {

using eafuzz::Die;

using eafuzz::paths::kMaxArena;  // limits: paths_limits.h
using eafuzz::paths::kMaxIo;
using eafuzz::paths::kMaxLen;
using eafuzz::paths::kMaxMacs;
using eafuzz::paths::Macs;
constexpr size_t kGuard = 32;           // guard bytes after every output buffer
constexpr uint8_t kGuardByte = 0xA5;


// The paths this build and CPU support (SetKernelPath succeeds), "ref" first.
const std::vector<const char*>& Paths() {
  static const std::vector<const char*> paths = [] {
    std::vector<const char*> p;
    for (int i = 0; i < static_cast<int>(edgeattn::kernels::KernelPath::kCount); ++i) {  // "ref" first
      const char* name = edgeattn::kernels::kernel_path_name(static_cast<edgeattn::kernels::KernelPath>(i));
      if (edgeattn::SetKernelPath(name) == edgeattn::Status::kOk) p.push_back(name);
    }
    if (p.empty() || std::strcmp(p[0], "ref") != 0) {
      std::fprintf(stderr, "fuzz_paths: the ref path is not available\n");
      std::abort();
    }
    std::fprintf(stderr, "fuzz_paths: comparing kernel paths:");
    for (const char* name : p) std::fprintf(stderr, " %s", name);
    std::fprintf(stderr, "\n");
    return p;
  }();
  return paths;
}

// EA_FUZZ_PATHS_VERBOSE=1: one line per layer run (replays, debugging).
bool Verbose() {
  static const bool verbose = [] {
    const char* v = std::getenv("EA_FUZZ_PATHS_VERBOSE");
    return v != nullptr && v[0] == '1';
  }();
  return verbose;
}

// Output buffers of one run, with guard bytes after them.
struct RunOutputs {
  std::vector<uint8_t> out, weights, cached_out, cached_weights, step_out, step_weights;
  bool stepped = false;
};

void Prepare(std::vector<uint8_t>& buf, size_t bytes, uint8_t fill) {
  buf.assign(bytes + kGuard, kGuardByte);
  std::memset(buf.data(), fill, bytes);
}

[[noreturn]] void Report(const char* what, int layer, const eafuzz::LayerInput& in, const char* path,
                         const char* detail) {
  const edgeattn::LayerInfo& f = in.info;
  std::fprintf(stderr,
               "FINDING: %s: layer %d '%s' (%s %s, q_dim %d k_dim %d v_dim %d out_dim %d heads %d "
               "cross %d causal %d; q_len %d kv_len %d kv_valid_len %d weights %d): path %s: %s\n",
               what, layer, f.name != nullptr ? f.name : "?", ea_layer_kind_name(f.kind), in.s8 ? "int8" : "f32",
               static_cast<int>(f.query_dim), static_cast<int>(f.key_dim), static_cast<int>(f.value_dim),
               static_cast<int>(f.output_dim), static_cast<int>(f.num_heads), static_cast<int>(f.cross),
               static_cast<int>(f.causal), in.q_len, in.kv_len, static_cast<int>(in.args.kv_valid_len),
               in.want_weights ? 1 : 0, path, detail);
  std::abort();
}

void CheckGuard(const std::vector<uint8_t>& buf, size_t bytes, const char* what, int layer,
                const eafuzz::LayerInput& in, const char* path) {
  for (size_t j = bytes; j < buf.size(); ++j) {
    if (buf[j] != kGuardByte) {
      char detail[96];
      std::snprintf(detail, sizeof(detail), "byte %zu after the %zu-byte buffer was written", j - bytes, bytes);
      Report(what, layer, in, path, detail);
    }
  }
}

// int8 outputs (elem 1, signed) or Q15 weights (elem 2, unsigned).
void CompareExact(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, size_t bytes, int elem,
                  const char* what, int layer, const eafuzz::LayerInput& in, const char* path,
                  const char* want_path) {
  if (std::memcmp(want.data(), got.data(), bytes) == 0) return;
  for (size_t j = 0; j < bytes; j += static_cast<size_t>(elem)) {
    int a, b;
    if (elem == 1) {
      a = static_cast<int8_t>(want[j]);
      b = static_cast<int8_t>(got[j]);
    } else {
      uint16_t x, y;
      std::memcpy(&x, &want[j], 2);
      std::memcpy(&y, &got[j], 2);
      a = x;
      b = y;
    }
    if (a != b) {
      char detail[160];
      std::snprintf(detail, sizeof(detail), "index %zu (row %zu): %s %d, %s %d", j / elem,
                    j / elem / static_cast<size_t>(elem == 1 ? in.info.output_dim : in.kv_len), want_path, a,
                    path, b);
      Report(what, layer, in, path, detail);
    }
  }
}

// Runs layer i on the current path into `r` (and the cached-keys run for
// cacheable layers). `fill` marks what Run leaves unwritten.
void RunLayer(edgeattn::Interpreter& interp, int i, const eafuzz::LayerInput& base, RunOutputs* r,
              uint8_t fill, const char* path) {
  eafuzz::LayerInput in = base;  // UseCachedKeys changes the args
  Prepare(r->out, in.out_bytes, fill);
  Prepare(r->weights, in.weight_bytes, fill);
  edgeattn::RunArgs& a = in.args;
  a.output = r->out.data();
  a.attn_weights = in.want_weights ? r->weights.data() : nullptr;
  if (interp.Run(i, a) != edgeattn::Status::kOk) Die("Run", interp.error());
  CheckGuard(r->out, in.out_bytes, "output overrun", i, in, path);
  CheckGuard(r->weights, in.weight_bytes, "attention weights overrun", i, in, path);
  r->stepped = false;
  if (in.info.kv_cache) {
    // The run filled the KV cache with q_len positions: one decoding step
    // more (the first query row as the next token), when the plan has room.
    const int position = interp.CachedLength(i);
    const size_t out_bytes = static_cast<size_t>(in.info.output_dim) * eafuzz::ElemBytes(in.info.output_dtype);
    // A step's weights cover the keys it attends over: the positions so far,
    // or a decoder block's memory (its cross-attention's).
    const size_t keys = in.info.kind == EA_LAYER_DECODER_BLOCK ? static_cast<size_t>(in.kv_len)
                                                                : static_cast<size_t>(position + 1);
    const size_t w_bytes = static_cast<size_t>(in.info.num_heads) * keys * (in.s8 ? 2 : 4);
    Prepare(r->step_out, out_bytes, fill);
    Prepare(r->step_weights, w_bytes, fill);
    const edgeattn::Status s = interp.Step(i, a.query, r->step_out.data(),
                                           in.want_weights ? r->step_weights.data() : nullptr);
    if (s == edgeattn::Status::kOk) {
      r->stepped = true;
      if (Verbose()) std::fprintf(stderr, "fuzz_paths:   KV-cache step at position %d on %s\n", position, path);
      CheckGuard(r->step_out, out_bytes, "step output overrun", i, in, path);
      CheckGuard(r->step_weights, w_bytes, "step attention weights overrun", i, in, path);
    } else if (s != edgeattn::Status::kLengthExceedsPlan) {
      Die("Step", interp.error());
    }
  }
  if (!in.cacheable) return;
  eafuzz::UseCachedKeys(interp, i, &in);
  Prepare(r->cached_out, in.out_bytes, fill);
  Prepare(r->cached_weights, in.weight_bytes, fill);
  a.output = r->cached_out.data();
  a.attn_weights = in.want_weights ? r->cached_weights.data() : nullptr;
  if (interp.Run(i, a) != edgeattn::Status::kOk) Die("Run (cached keys)", interp.error());
  CheckGuard(r->cached_out, in.out_bytes, "output overrun (cached keys)", i, in, path);
  CheckGuard(r->cached_weights, in.weight_bytes, "attention weights overrun (cached keys)", i, in, path);
}

void CompareRuns(const RunOutputs& want, const RunOutputs& got, int i, const eafuzz::LayerInput& in,
                 const char* path, const char* want_path, const char* what_out, const char* what_w,
                 bool cached) {
  CompareExact(cached ? want.cached_out : want.out, cached ? got.cached_out : got.out, in.out_bytes, 1,
               what_out, i, in, path, want_path);
  if (in.want_weights) {
    CompareExact(cached ? want.cached_weights : want.weights, cached ? got.cached_weights : got.weights,
                 in.weight_bytes, 2, what_w, i, in, path, want_path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<const char*>& paths = Paths();
  eafuzz::AlignedBuffer whole(data, size);
  eafuzz::Input input;
  if (!eafuzz::OpenInput(data, size, whole, kMaxLen, kMaxArena, &input)) return 0;
  const edgeattn::Model& model = input.model;
  eafuzz::AlignedBuffer arena(input.arena_bytes);
  edgeattn::Interpreter interp;
  if (interp.Init(&model, arena.p, input.arena_bytes, input.q_cap, input.kv_cap) != edgeattn::Status::kOk) {
    Die("Init", interp.error());
  }
  eafuzz::LayerInput in;
  RunOutputs ref, other;
  for (int i = 0; i < model.num_layers(); ++i) {
    if (!eafuzz::PrepareLayer(model, i, input.trailer, input.q_cap, input.kv_cap, kMaxIo, input.seed, &in)) continue;
    if (Macs(model, i, in) > kMaxMacs) continue;
    if (Verbose()) {
      std::fprintf(stderr, "fuzz_paths: layer %d '%s' %s %s q_len %d kv_len %d kv_valid_len %d weights %d\n", i,
                   in.info.name, ea_layer_kind_name(in.info.kind), in.s8 ? "int8" : "f32", in.q_len, in.kv_len,
                   static_cast<int>(in.args.kv_valid_len), in.want_weights ? 1 : 0);
    }
    for (size_t p = 0; p < paths.size(); ++p) {
      if (edgeattn::SetKernelPath(paths[p]) != edgeattn::Status::kOk) std::abort();
      // Different fill bytes: an element one path leaves unwritten differs.
      RunLayer(interp, i, in, p == 0 ? &ref : &other, p == 0 ? 0x5A : 0xC3, paths[p]);
      if (!in.s8) continue;  // float: not bit-exact by contract (see the top)
      const RunOutputs& got = p == 0 ? ref : other;
      if (in.cacheable) {  // a decoder step with cached keys computes the same
        CompareExact(got.out, got.cached_out, in.out_bytes, 1, "cached-keys output differs from the uncached run",
                     i, in, paths[p], "uncached");
        if (in.want_weights) {
          CompareExact(got.weights, got.cached_weights, in.weight_bytes, 2,
                       "cached-keys attention weights differ from the uncached run", i, in, paths[p], "uncached");
        }
      }
      if (p == 0) continue;
      CompareRuns(ref, got, i, in, paths[p], "ref", "output differs from ref",
                  "attention weights differ from ref", false);
      if (ref.stepped != got.stepped) Report("KV-cache step ran on one path only", i, in, paths[p], "");
      if (ref.stepped) {
        CompareExact(ref.step_out, got.step_out, ref.step_out.size() - kGuard, 1,
                     "KV-cache step output differs from ref", i, in, paths[p], "ref");
        if (in.want_weights) {
          CompareExact(ref.step_weights, got.step_weights, ref.step_weights.size() - kGuard, 2,
                       "KV-cache step attention weights differ from ref", i, in, paths[p], "ref");
        }
      }
      if (in.cacheable) {
        CompareRuns(ref, got, i, in, paths[p], "ref", "cached-keys output differs from ref",
                    "cached-keys attention weights differ from ref", true);
      }
    }
  }
  edgeattn::SetKernelPath(paths.back());  // leave the best path selected
  return 0;
}
