// edgeattn C++ API. Same model as the C API in edgeattn.h (whose POD structs
// it reuses): no heap, no exceptions, every failure is a Status plus a message.
//
//   edgeattn::Model model;
//   if (model.Load(bytes, size) != edgeattn::Status::kOk) puts(model.error());
//   alignas(16) static uint8_t arena[EA_MODEL_ARENA_BYTES];
//   edgeattn::Interpreter interp;
//   interp.Init(&model, arena, sizeof(arena));
//   edgeattn::RunArgs args = {};  // query, key, value, lengths, output, ...
//   interp.Run(model.FindLayer("enc_self"), args);
#ifndef EDGEATTN_EDGEATTN_HPP_
#define EDGEATTN_EDGEATTN_HPP_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "edgeattn/edgeattn.h"
#include "edgeattn/plan.h"

namespace edgeattn {

namespace fb {
struct Model;
struct Layer;
struct GraphStep;
}  // namespace fb
struct RangeScale;
struct Pool;
struct Call;
struct LayerKindModule;

enum class Status : uint8_t {
  kOk = EA_OK,
  kInvalidArgument = EA_INVALID_ARGUMENT,
  kInvalidModel = EA_INVALID_MODEL,
  kVersionMismatch = EA_VERSION_MISMATCH,
  kCrcMismatch = EA_CRC_MISMATCH,
  kUnsupported = EA_UNSUPPORTED,
  kArenaTooSmall = EA_ARENA_TOO_SMALL,
  kLengthExceedsPlan = EA_LENGTH_EXCEEDS_PLAN,
  kNotReady = EA_NOT_READY,
};

const char* status_string(Status status);

// Kernel path in use, and an override (see ea_set_kernel_path).
Status SetKernelPath(const char* name);
const char* KernelPath();

// Optional XNNPACK backend for the int8 projections (see Interpreter::UseXnnpack).
// XnnpackBuilt(): this build has it (CMake option EA_WITH_XNNPACK).
// XnnpackInitialize(): once per process, before the models you run with it are
// loaded; XNNPACK's CPU detection allocates its tables with malloc there, and
// nowhere after. Returns kUnsupported in builds without the backend.
bool XnnpackBuilt();
Status XnnpackInitialize();

using LayerInfo = ea_layer_info;
using GraphInfo = ea_graph_info;
using RunArgs = ea_run_args;
using ModelInputs = ea_model_inputs;
using ModelOutputs = ea_model_outputs;
using GenerateOptions = ea_generate_options;
using Quant = ea_quant;

// Fixed-size message buffer: formatting without printf or the heap.
class ErrorMessage {
 public:
  void Clear() { text_[0] = '\0'; length_ = 0; }
  ErrorMessage& operator<<(const char* s);
  ErrorMessage& operator<<(int64_t v);
  // Every other integer type (int, int32_t, which is `long` on arm-none-eabi,
  // size_t, uint64_t, ...) without ambiguous overloads.
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  ErrorMessage& operator<<(T v) { return *this << static_cast<int64_t>(v); }
  const char* c_str() const { return text_; }

 private:
  char text_[EA_ERROR_MESSAGE_BYTES] = {0};
  size_t length_ = 0;
};

// A verified view of a model file. Holds no copy of the bytes.
class Model {
 public:
  // Verifies `data` (see edgeattn.h). On failure the model stays unloaded.
  Status Load(const void* data, size_t size);
  bool loaded() const { return model_ != nullptr; }
  const char* error() const { return error_.c_str(); }

  int num_layers() const;
  int FindLayer(const char* name) const;  // -1 if absent
  Status GetLayerInfo(int layer, LayerInfo* info) const;
  // The whole model as one call (format 6, the file's Graph; Interpreter::
  // Invoke). Without a graph: has_graph() false, GetGraphInfo kUnsupported.
  bool has_graph() const { return num_steps_ > 0; }
  // The decoder part's first step (a generating graph, Interpreter::
  // Generate), 0 when the graph has none.
  int decoder_start() const { return decoder_start_; }
  int num_steps() const { return num_steps_; }
  const fb::GraphStep* step(int index) const;  // null outside 0..num_steps()-1
  Status GetGraphInfo(GraphInfo* info) const;
  // Output rows of a graph run over num_rows input rows (0 without a graph).
  int GraphOutputRows(int num_rows) const;
  // Both in one pass over the steps (what Invoke needs before it runs).
  Status GetGraphInfo(GraphInfo* info, int num_rows, int* output_rows) const;
  // Whole model at every layer's maxima (equals what the converter recorded).
  size_t arena_bytes() const { return arena_bytes_; }
  // Arena bytes each thread-pool worker beyond the first adds (recorded in
  // the file), and the arena for `workers` >= 1 workers under length caps.
  size_t worker_bytes() const { return worker_bytes_; }
  size_t ArenaBytesForWorkers(int workers, int max_q_len = 0, int max_kv_len = 0) const;
  // Whole model when every run stays within q_len <= max_q_len and
  // kv_len <= max_kv_len (each capped by the layer's own maxima); 0 = no cap.
  size_t ArenaBytesFor(int max_q_len, int max_kv_len) const;
  // A layer's maximum lengths under such caps.
  int CappedQLen(int layer, int cap) const;
  int CappedKvLen(int layer, int cap) const;
  // One layer's plan at the given lengths.
  LayerPlan PlanLayer(int layer, int q_len, int kv_len) const;
  // The arena at these length caps (lay_out_arena over every layer's plan
  // and the graph's activations); cache_offsets (num_layers() entries) and
  // activation_offsets (num_steps(), from the activations region; the last
  // step's is 0, its output is the caller's) may be null.
  ArenaLayout LayOutArena(int max_q_len, int max_kv_len, uint64_t* cache_offsets,
                          uint64_t* activation_offsets = nullptr) const;
  // The same with 32-bit offsets (a loaded model's arena is below 2^31):
  // Interpreter::Init writes them into its own tables, with no arrays on the
  // stack.
  ArenaLayout LayOutArena(int max_q_len, int max_kv_len, uint32_t* cache_offsets,
                          uint32_t* activation_offsets) const;
  LayerShape ShapeOf(int layer) const;
  // Extra arena bytes range-mode runs need under these caps (ea_model_range_bytes).
  size_t RangeBytes(int max_q_len, int max_kv_len) const;

  const fb::Model* flatbuffer() const { return model_; }
  const fb::Layer* layer(int index) const;

 private:
  Status Fail(Status status);
  template <typename Offset>
  ArenaLayout LayOut(int max_q_len, int max_kv_len, Offset* cache_offsets, Offset* activation_offsets) const;
  Status VerifyLayer(int index);
  Status VerifyGraph();

  const fb::Model* model_ = nullptr;
  const uint8_t* data_ = nullptr;  // Model.data
  size_t data_size_ = 0;
  size_t arena_bytes_ = 0;
  size_t worker_bytes_ = 0;
  int num_steps_ = 0;
  int decoder_start_ = 0;
  mutable ErrorMessage error_;
};

// Runs layers of a loaded model inside one caller-owned arena.
//
// Arena layout: [cache of layer 0 | cache of layer 1 | ... | scratch]
//               [| workers 1..T-1's scratch, with UseExecutor()]
//               [| XNNPACK operators and packed weights, with UseXnnpack()]
// Each cacheable layer owns a persistent region sized for its max_kv_len;
// the scratch region (the largest layer's need) is reused by every call.
class Interpreter {
 public:
  // Binds the arena. With max_q_len / max_kv_len > 0 the plan is made for
  // those lengths (see Model::ArenaBytesFor) and longer runs are refused.
  Status Init(const Model* model, void* arena, size_t arena_bytes, int max_q_len = 0,
              int max_kv_len = 0);
  // Projects and stores the keys/values of a memory sequence once, for
  // cross-attention MHA, additive and decoder-block layers (decoder steps then
  // pass use_cached_keys; a decoder block's Step reads them).
  Status CacheKeys(int layer, const void* key, const void* value, int kv_len, int kv_valid_len);
  Status Run(int layer, const RunArgs& args);

  // Range mode (edgeattn.h, docs/quantization.md): int8 inputs quantized at
  // range R = range_q16 / kRangeOne, output at range R.
  Status RunScaled(int layer, const RunArgs& args, uint32_t range_q16);
  // Float inputs and output for an int8 layer, R picked per call by `policy`,
  // an ea_range_policy value (ea_interpreter_run_float; an int, so that any
  // value a caller holds is refused with a message rather than read as an
  // enum it is not); *range_q16 (may be null) receives R.
  Status RunFloat(int layer, const RunArgs& args, int policy, uint32_t* range_q16);
  // The whole model in one call (ea_interpreter_invoke): its graph's steps
  // in order, each intermediate output in the arena, the last step's into
  // outputs->rows (outputs->num_rows receives its row count).
  Status Invoke(const ModelInputs& inputs, ModelOutputs* outputs);
  // Generation (ea_interpreter_generate): a graph with a decoder part
  // (GraphInfo.decoder_start > 0) writes up to options.max_tokens token ids
  // into tokens[0..capacity), stopping after EOS; *num_tokens the count.
  Status Generate(const ModelInputs& inputs, const GenerateOptions& options, int32_t* tokens, int capacity,
                  int* num_tokens);
  static constexpr uint32_t kRangeOne = EA_RANGE_ONE;
  static constexpr uint32_t kRangeMax = EA_RANGE_MAX;

  // Decoding with a KV cache (causal self-attention layers converted with
  // "kv_cache": true). BeginSequence empties the layer's cache; a full Run
  // over q_len tokens fills positions 0..q_len-1 (prefill); Step runs one
  // token: query [1][embed_dim] in, output [1][embed_dim] out, optional
  // attn_weights [num_heads][1][position + 1]; its output is bit-identical
  // (int8) to the last row of a full causal run over the same tokens.
  // kLengthExceedsPlan when the cache is full (max_kv_len positions, or the
  // Init cap). CachedLength: positions cached, -1 if the layer has no KV cache.
  // Decoder blocks decode the same way: their self-attention's positions are
  // bounded by max_q_len, and each Step attends over the memory of the last
  // CacheKeys (or uncached Run), returning the cross-attention's weights
  // [num_heads][1][memory rows].
  //
  // Coverage (additive layers converted with "coverage": true): the layer
  // keeps c_j, the sum of key j's attention weights over the sequence so far,
  // and every query row of a Run is one decoding step (row r sees the weights
  // of all earlier steps, then adds its own). A sequence is the memory given
  // to CacheKeys: CacheKeys and BeginSequence zero c, and each Run with
  // use_cached_keys continues it (typically q_len = 1 per decoded token). A
  // Run without cached keys is a whole sequence of its own (c starts at 0),
  // so it equals CacheKeys followed by q_len one-row cached runs. Step is for
  // KV-cache layers only (kInvalidArgument on a coverage layer).
  Status BeginSequence(int layer);
  Status Step(int layer, const void* query, void* output, void* attn_weights = nullptr);
  int CachedLength(int layer) const;

  const char* error() const { return error_.c_str(); }

  // Runs the int8 projections whose in_features is a multiple of 16 through
  // XNNPACK from now on (until the next Init). XNNPACK's operators and packed
  // weights are placed in the arena after the plan's bytes, so the arena must
  // be larger than ArenaBytesFor(); kArenaTooSmall otherwise. XNNPACK rounds
  // differently (float requantization, ties to even): projection outputs may
  // differ from the reference by 1 (docs/performance.md).
  Status UseXnnpack();
  // Runs from now on (until the next Init; null: the caller's thread) on the
  // caller's thread pool (ea_executor in edgeattn.h): call after Init and
  // before UseXnnpack. The arena must hold Model::ArenaBytesForWorkers(
  // executor.num_threads(), Init's caps): kArenaTooSmall saying that size
  // otherwise. Outputs are the same bytes for any worker count.
  Status UseExecutor(const ea_executor* executor);
  int workers() const { return workers_; }
  // A part of a run (a projection, the attention core, LayerNorm rows) is
  // split into at most work / min_task_work tasks (multiply-adds or element
  // operations), so small shapes stay on one thread. 0: split as far as the
  // workers allow (the thread-count tests use it). Any value gives the same bytes.
  static constexpr uint64_t kMinTaskWork = uint64_t{1} << 17;
  void SetMinTaskWork(uint64_t work) { min_task_work_ = work; }
  // Arena bytes XNNPACK took (0 when not in use), and its operator count.
  size_t xnnpack_bytes() const { return xnn_bytes_; }
  int xnnpack_ops() const { return xnn_ops_; }

  static constexpr int kMaxLayers = kMaxGraphSteps;

 private:
  Status CheckLayer(int layer);
  Status CheckKvCacheLayer(int layer);
  // Graph steps 0..end-1 over checked inputs (Invoke: all of them, the
  // last into last_output; Generate: the encoder part, last_output null:
  // every output in the arena); rows / valid receive each step's.
  Status RunGraphSteps(const ModelInputs& in, int end, void* last_output, int32_t* rows, int32_t* valid);
  // Generate's loop body: the decoder part over one token at `position`,
  // the argmax's index into *next.
  Status RunDecoderToken(const int32_t* token, int position, int32_t* next);
  // CacheKeys and Step after their checks (Generate's buffers are the
  // arena's own, which the caller-buffer checks refuse).
  void FillKeyCache(int layer, const void* key, const void* value, int kv_len, int kv_valid_len);
  // The checks of the caller's buffers of one layer call (alignment,
  // overlaps), which Run, Step and range mode pass to RunWith / StepWith.
  // Invoke's and Generate's steps pass null (their buffers are the arena's
  // own; Invoke checks the caller's once), so firmware that calls neither
  // Run nor Step links none of it.
  static Status CheckBuffers(const Call& c, const LayerKindModule& kind, const LayerInfo& info,
                             const uint8_t* arena_base, size_t arena_bytes, ErrorMessage& error);
  using BufferCheck = decltype(&CheckBuffers);
  Status StepWith(int layer, const void* query, void* output, void* attn_weights, BufferCheck check_buffers);
  // Run, optionally in range mode; caller buffers must not overlap the first
  // checked_arena_bytes of the arena.
  Status RunWith(int layer, const RunArgs& args, const RangeScale* range,
                 size_t checked_arena_bytes, BufferCheck check_buffers = CheckBuffers);
  static constexpr int kKvCacheRescaled = -2;  // position_: filled at range > 1
  // Range mode (range_mode.cc): the arena after the plan and XNNPACK's
  // bytes, and the checks and derived parameters of one run at range_q16.
  uint8_t* RangeWorkspace(size_t* bytes) const;
  Status PrepareRange(int layer, const RunArgs& args, uint32_t range_q16, uint64_t workspace_bytes,
                      RangeScale* rs);
  bool ShapeIsS8(int layer) const;
  // The pool as the layers see it; null without one.
  const Pool* MakePool(Pool* storage) const;

  const Model* model_ = nullptr;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  uint8_t* scratch_ = nullptr;
  size_t plan_bytes_ = 0;               // the plan, then the pool workers' scratch
  ea_executor executor_ = {};
  int workers_ = 1;
  size_t worker_bytes_ = 0;            // per worker 1..workers_-1, after the plan
  uint8_t* worker_scratch_ = nullptr;
  uint64_t min_task_work_ = kMinTaskWork;
  const void* xnn_table_ = nullptr;  // in the arena, after plan_bytes_
  size_t xnn_bytes_ = 0;
  int xnn_ops_ = 0;
  int q_cap_ = 0;
  int kv_cap_ = 0;
  uint32_t cache_offset_[kMaxLayers] = {};  // < kMaxArenaBytes (keeps Interpreter in ea_interpreter)
  int cached_kv_len_[kMaxLayers] = {};      // key-cache layers: cached key rows, -1: none
  int cached_kv_valid_len_[kMaxLayers] = {};
  int position_[kMaxLayers] = {};           // KV-cache layers: positions filled (next step's)
  uint32_t activation_offset_[kMaxLayers] = {};  // graph step s's output, from arena_ (< kMaxArenaBytes)
  ErrorMessage error_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_EDGEATTN_HPP_
