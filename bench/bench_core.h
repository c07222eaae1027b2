// Portable core of edgeattn-bench: runs one layer of a loaded model on
// deterministic pseudo-random inputs, times each call with a caller-supplied
// tick source and hashes the output so runs on different targets can be
// compared bit for bit. No heap: the caller supplies every buffer.
#ifndef EDGEATTN_BENCH_BENCH_CORE_H_
#define EDGEATTN_BENCH_BENCH_CORE_H_

#include <cstddef>
#include <cstdint>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace bench {

struct Options {
  int q_len = 0;        // 0: the layer's maximum
  int kv_len = 0;       // 0: the layer's maximum
  int warmup = 3;
  int iters = 20;
  bool cached = false;  // cross-attention / additive: keys projected once (CacheKeys), then timed runs;
                        // KV-cache layers: one Step with kv_len positions (prefill untimed)
};

struct LayerResult {
  const char* name;
  ea_layer_kind kind;
  ea_dtype dtype;
  int q_len, kv_len;
  uint64_t min, median, p90, max;  // ticks per call
  uint32_t output_hash;            // FNV-1a of the output bytes of the last call
  size_t arena_bytes;              // this layer's plan at its maxima
};

// Caller-owned memory for inputs/outputs and timing samples.
struct Workspace {
  uint8_t* io;          // 16-byte aligned
  size_t io_bytes;
  uint64_t* samples;
  int max_samples;
};

using TickFn = uint64_t (*)();

// Bytes of `io` that RunLayer needs for this layer at the given lengths.
size_t IoBytes(const LayerInfo& info, int q_len, int kv_len);

// Runs `layer`. On failure returns the status; the interpreter's or model's
// error() says why (or a bench message in `why`).
Status RunLayer(const Model& model, Interpreter& interp, int layer, const Options& options,
                TickFn ticks, const Workspace& ws, LayerResult* result, const char** why);

// Runs the whole model (Interpreter::Invoke; the model must have a graph):
// input rows options.q_len (0: the graph's maximum), memory rows
// options.kv_len (0: its maximum), the same pseudo-random inputs on every
// target. result->name is "model", result->kind the output layer's.
Status RunModel(const Model& model, Interpreter& interp, const Options& options, TickFn ticks,
                const Workspace& ws, LayerResult* result, const char** why);

}  // namespace bench
}  // namespace edgeattn

#endif  // EDGEATTN_BENCH_BENCH_CORE_H_
