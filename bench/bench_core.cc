#include "bench_core.h"

namespace edgeattn {
namespace bench {
namespace {

size_t align16(size_t n) { return (n + 15) / 16 * 16; }

// xorshift32: the same inputs on every target, so output hashes compare.
struct Rng {
  uint32_t state;
  uint32_t Next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
};

// range: S32 values (token ids) in 0..range-1.
void Fill(void* data, size_t count, ea_dtype dtype, Rng& rng, int32_t range = 0) {
  if (dtype == EA_S32) {
    auto* p = static_cast<int32_t*>(data);
    for (size_t i = 0; i < count; ++i) p[i] = range > 0 ? static_cast<int32_t>(rng.Next() % static_cast<uint32_t>(range)) : 0;
  } else if (dtype == EA_S8) {
    auto* p = static_cast<int8_t*>(data);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<int8_t>(rng.Next() >> 24);
  } else if (dtype == EA_S16) {  // the 16-bit residual stream: uniform over int16, its ends included
    auto* p = static_cast<int16_t*>(data);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<int16_t>(rng.Next() >> 16);
  } else {
    auto* p = static_cast<float*>(data);
    // Uniform in [-1, 1): exact in float, identical on every target.
    for (size_t i = 0; i < count; ++i) {
      p[i] = static_cast<float>(static_cast<int32_t>(rng.Next() >> 8) - (1 << 23)) / (1 << 23);
    }
  }
}

uint32_t Fnv1a(const uint8_t* data, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 16777619u;
  }
  return h;
}

void SortSamples(uint64_t* s, int n) {
  for (int i = 1; i < n; ++i) {
    const uint64_t v = s[i];
    int j = i - 1;
    while (j >= 0 && s[j] > v) {
      s[j + 1] = s[j];
      --j;
    }
    s[j + 1] = v;
  }
}

struct Buffers {
  uint8_t* query;
  uint8_t* key;
  uint8_t* value;
  uint8_t* output;
  size_t output_bytes;
  size_t total;
};

size_t Elem(ea_dtype t) { return t == EA_S8 ? 1 : t == EA_S16 ? 2 : 4; }

Buffers Layout(const LayerInfo& info, int q_len, int kv_len, uint8_t* base) {
  const size_t es = Elem(info.dtype);
  Buffers b = {};
  size_t off = 0;
  b.query = base + off;
  off += align16(static_cast<size_t>(q_len) * info.query_dim * Elem(info.input_dtype));
  b.key = base + off;
  off += align16(static_cast<size_t>(kv_len) * info.key_dim * es);
  b.value = base + off;
  off += align16(static_cast<size_t>(kv_len) * info.value_dim * es);
  b.output = base + off;
  b.output_bytes = static_cast<size_t>(q_len + info.added_rows) * info.output_dim * Elem(info.output_dtype);
  off += align16(b.output_bytes);
  b.total = off;
  return b;
}

}  // namespace

size_t IoBytes(const LayerInfo& info, int q_len, int kv_len) {
  return Layout(info, q_len, kv_len, nullptr).total;
}

Status RunLayer(const Model& model, Interpreter& interp, int layer, const Options& options,
                TickFn ticks, const Workspace& ws, LayerResult* result, const char** why) {
  *why = "";
  LayerInfo info;
  Status s = model.GetLayerInfo(layer, &info);
  if (s != Status::kOk) return s;
  // What the layer reads, from its description rather than its kind:
  // without a separate key sequence the keys are the query rows; a query
  // width of 0 is a learned query (one output row).
  const bool self = !info.cross;
  const bool learned_query = info.query_dim == 0;
  // --cached on a KV-cache layer: one decoding step with kv_len positions
  // cached (the prefix is prefilled, untimed, before each timed step).
  const bool kv_step = options.cached && info.kv_cache;
  int q_len = learned_query ? 1 : (options.q_len > 0 ? options.q_len : info.max_q_len);
  int kv_len = options.kv_len > 0 ? options.kv_len : info.max_kv_len;
  if (self) kv_len = kv_step ? (kv_len < info.max_kv_len ? kv_len : info.max_kv_len) : q_len;
  if (kv_step) q_len = kv_len;  // the tokens: kv_len - 1 prefilled, the last one stepped
  const Buffers b = Layout(info, q_len, kv_len, ws.io);
  if (b.total > ws.io_bytes) {
    *why = "input/output buffers exceed the bench's I/O space";
    return Status::kInvalidArgument;
  }
  if (options.iters < 1 || options.iters > ws.max_samples || options.warmup < 0) {
    *why = "iterations must be in 1..max samples";
    return Status::kInvalidArgument;
  }
  Rng rng{0x2545F491u + static_cast<uint32_t>(layer)};
  Fill(b.query, static_cast<size_t>(q_len) * info.query_dim, info.input_dtype, rng, info.input_range);
  Fill(b.key, static_cast<size_t>(kv_len) * info.key_dim, info.dtype, rng);
  Fill(b.value, static_cast<size_t>(kv_len) * info.value_dim, info.dtype, rng);

  // Cached keys and values (cross-attention, additive); a decoder block also
  // caches its memory, but its cached run is a KV-cache step, not timed here.
  const bool cacheable = info.key_cache != 0 && info.kv_cache == 0;
  RunArgs args = {};
  args.query = b.query;
  args.key = self ? nullptr : b.key;
  args.value = learned_query || self ? nullptr : b.value;
  args.q_len = q_len;
  args.kv_len = kv_len;
  args.output = b.output;
  if (options.cached && cacheable) {
    s = interp.CacheKeys(layer, b.key, b.value, kv_len, 0);
    if (s != Status::kOk) return s;
    args.use_cached_keys = 1;
  }
  const size_t token_bytes = static_cast<size_t>(info.query_dim) * Elem(info.input_dtype);
  // One call: a run, or (kv_step) a prefill of kv_len - 1 tokens and the timed step.
  auto call = [&](uint64_t* elapsed) {
    Status st = Status::kOk;
    if (kv_step) {
      st = interp.BeginSequence(layer);
      if (st == Status::kOk && kv_len > 1) {
        RunArgs prefill = args;
        prefill.q_len = kv_len - 1;
        prefill.kv_len = 0;
        st = interp.Run(layer, prefill);
      }
      if (st != Status::kOk) return st;
      const uint64_t t0 = ticks();
      st = interp.Step(layer, b.query + static_cast<size_t>(kv_len - 1) * token_bytes, b.output);
      *elapsed = ticks() - t0;
      return st;
    }
    const uint64_t t0 = ticks();
    st = interp.Run(layer, args);
    *elapsed = ticks() - t0;
    return st;
  };
  uint64_t elapsed = 0;
  for (int i = 0; i < options.warmup; ++i) {
    s = call(&elapsed);
    if (s != Status::kOk) return s;
  }
  for (int i = 0; i < options.iters; ++i) {
    s = call(&elapsed);
    if (s != Status::kOk) return s;
    ws.samples[i] = elapsed;
  }
  SortSamples(ws.samples, options.iters);
  result->name = info.name;
  result->kind = info.kind;
  result->dtype = info.dtype;
  result->q_len = kv_step ? 1 : q_len;
  result->kv_len = kv_len;
  result->min = ws.samples[0];
  result->median = ws.samples[options.iters / 2];
  result->p90 = ws.samples[(options.iters * 9) / 10 < options.iters ? (options.iters * 9) / 10 : options.iters - 1];
  result->max = ws.samples[options.iters - 1];
  result->output_hash = Fnv1a(b.output, kv_step ? static_cast<size_t>(info.output_dim) * Elem(info.output_dtype)
                                               : b.output_bytes);
  result->arena_bytes = info.arena_bytes;
  return Status::kOk;
}

Status RunModel(const Model& model, Interpreter& interp, const Options& options, TickFn ticks,
                const Workspace& ws, LayerResult* result, const char** why) {
  *why = "";
  GraphInfo g;
  Status s = model.GetGraphInfo(&g);
  if (s != Status::kOk) return s;
  const int rows = options.q_len > 0 ? options.q_len : g.max_input_rows;
  const int memory_rows = g.memory_dim == 0 ? 0 : options.kv_len > 0 ? options.kv_len : g.max_memory_rows;
  const int out_rows = model.GraphOutputRows(rows);
  // A generating graph: one Generate of every token the plan holds (BOS 0,
  // no EOS) into the output space, the tokens hashed.
  const bool generates = g.decoder_start > 0;
  const GenerateOptions generate = {0, -1, g.max_tokens};
  int num_tokens = 0;
  const size_t in_bytes = align16(static_cast<size_t>(rows) * g.input_dim * Elem(g.input_dtype));
  const size_t memory_bytes = align16(static_cast<size_t>(memory_rows) * g.memory_dim * Elem(g.dtype));
  const size_t out_bytes = generates ? static_cast<size_t>(g.max_tokens) * sizeof(int32_t)
                                     : static_cast<size_t>(out_rows) * g.output_dim * Elem(g.output_dtype);
  if (in_bytes + memory_bytes + align16(out_bytes) > ws.io_bytes) {
    *why = "input/output buffers exceed the bench's I/O space";
    return Status::kInvalidArgument;
  }
  if (options.iters < 1 || options.iters > ws.max_samples || options.warmup < 0) {
    *why = "iterations must be in 1..max samples";
    return Status::kInvalidArgument;
  }
  uint8_t* in = ws.io;
  uint8_t* memory = ws.io + in_bytes;
  uint8_t* out = memory + memory_bytes;
  Rng rng{0x2545F491u};
  Fill(in, static_cast<size_t>(rows) * g.input_dim, g.input_dtype, rng, g.input_range);
  Fill(memory, static_cast<size_t>(memory_rows) * g.memory_dim, g.dtype, rng);
  ModelInputs inputs = {in, rows, 0, g.memory_dim > 0 ? memory : nullptr, memory_rows, 0};
  ModelOutputs outputs = {out, 0};
  for (int i = -options.warmup; i < options.iters; ++i) {
    const uint64_t t0 = ticks();
    s = generates ? interp.Generate(inputs, generate, reinterpret_cast<int32_t*>(out), g.max_tokens, &num_tokens)
                  : interp.Invoke(inputs, &outputs);
    const uint64_t elapsed = ticks() - t0;
    if (s != Status::kOk) return s;
    if (i >= 0) ws.samples[i] = elapsed;
  }
  SortSamples(ws.samples, options.iters);
  LayerInfo last;
  model.GetLayerInfo(g.output_layer, &last);
  result->name = "model";
  result->kind = last.kind;
  result->dtype = g.dtype;
  result->q_len = rows;
  result->kv_len = memory_rows;
  result->min = ws.samples[0];
  result->median = ws.samples[options.iters / 2];
  result->p90 = ws.samples[(options.iters * 9) / 10 < options.iters ? (options.iters * 9) / 10 : options.iters - 1];
  result->max = ws.samples[options.iters - 1];
  result->output_hash = Fnv1a(out, generates ? static_cast<size_t>(num_tokens) * sizeof(int32_t)
                                             : static_cast<size_t>(outputs.num_rows) * g.output_dim * Elem(g.output_dtype));
  result->arena_bytes = model.arena_bytes();
  return Status::kOk;
}

}  // namespace bench
}  // namespace edgeattn
