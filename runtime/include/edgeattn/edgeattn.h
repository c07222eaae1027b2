/* edgeattn C API: load a .eatn model from a caller-owned buffer, bind a
 * caller-owned arena, run attention layers. No function allocates memory.
 *
 * Lifetimes: the model bytes must outlive the ea_model; the ea_model and the
 * arena must outlive the ea_interpreter. Objects are plain storage the caller
 * places anywhere (static, stack); they hold no pointers to the heap.
 */
#ifndef EDGEATTN_EDGEATTN_H_
#define EDGEATTN_EDGEATTN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ea_status {
  EA_OK = 0,
  EA_INVALID_ARGUMENT = 1,   /* a caller argument is wrong (null, misaligned, overlapping, bad index) */
  EA_INVALID_MODEL = 2,      /* the file fails verification or a semantic check */
  EA_VERSION_MISMATCH = 3,   /* format version this runtime cannot read */
  EA_CRC_MISMATCH = 4,       /* the file does not match its CRC-32 (corrupted, truncated, wrong size) */
  EA_UNSUPPORTED = 5,        /* valid file, feature not supported by this build */
  EA_ARENA_TOO_SMALL = 6,    /* arena smaller than the plan needs */
  EA_LENGTH_EXCEEDS_PLAN = 7,/* a run length exceeds the layer's declared maximum */
  EA_NOT_READY = 8           /* call order: no model loaded / no keys cached */
} ea_status;

/* Static description of a status (never null). */
const char* ea_status_string(ea_status status);

/* Kernel path ("ref", "avx2", "avxvnni", "avx512vnni", "amx", "neon", "neondot", "cmsis-dsp",
 * "helium"): the best one the CPU supports is chosen at first use; the
 * environment variable EA_KERNEL_PATH or this call forces one. Returns
 * EA_UNSUPPORTED if this build or CPU lacks it. On a Linux CPU with AMX-INT8,
 * choosing "amx" (also as the best path) asks the OS for the tile state, which
 * enlarges signal frames (alternate signal stacks: sysconf(_SC_MINSIGSTKSZ));
 * forcing another path before the first model loads never asks. On
 * "cmsis-dsp" (Cortex-M4/M7/M33), projections of 7 rows or more take 32 bytes
 * of stack per input while they run, at most EA_CM_DSP_WIDE_BYTES (a build
 * option of the kernels, default 8192; docs/footprint.md, RAM). */
ea_status ea_set_kernel_path(const char* name);
const char* ea_kernel_path(void);

/* Model format version this runtime reads. */
#define EA_FORMAT_VERSION 6u
/* Arena and model buffers must be aligned to this many bytes. */
#define EA_ALIGNMENT 16u
#define EA_ERROR_MESSAGE_BYTES 160

/* Layer kinds, from the one list in layer_kinds.def: EA_LAYER_MULTI_HEAD_ATTENTION,
 * EA_LAYER_ADDITIVE, EA_LAYER_LUONG, EA_LAYER_POOLING, EA_LAYER_LAYERNORM,
 * EA_LAYER_FEED_FORWARD, EA_LAYER_ENCODER_BLOCK, EA_LAYER_DECODER_BLOCK, EA_LAYER_LINEAR.
 * layernorm, ffn and linear give one output row per input row and no attention
 * weights; an encoder block is LayerNorms, self-attention, FFN and residual
 * adds; a decoder block is causal self-attention (KV cache), cross-attention
 * over the memory (key = memory), FFN, LayerNorms and residual adds, its
 * attn_weights are the cross-attention's, info.cross = 1, info.causal = 0
 * (kv_valid_len pads the memory; the self-attention is always causal). */
typedef enum ea_layer_kind {
#define EA_LAYER_KIND(name, ENUM, value, options, description) EA_LAYER_##ENUM = value,
#include "edgeattn/layer_kinds.def"
#undef EA_LAYER_KIND
  EA_LAYER_KIND_COUNT /* one past the largest value */
} ea_layer_kind;

/* A kind's name as the spec and the bench write it ("mha", "encoder_block",
 * ...), or "?" for a value that is no kind. */
const char* ea_layer_kind_name(ea_layer_kind kind);

/* Element types. A layer is F32 or S8; a kind at a model's ends may read or
 * write another type (ea_layer_info.input_dtype / output_dtype): S32 for
 * token ids and class indices, F32 for the float features a quantizing kind
 * reads, S16 for the 16-bit residual stream of int8 transformer blocks
 * (int16 rows, real = scale * q, zero point 0; 2-byte aligned). */
typedef enum ea_dtype { EA_F32 = 0, EA_S8 = 1, EA_S32 = 2, EA_S16 = 3 } ea_dtype;

/* Quantization of an int8 input or output: real = scale * (q - zero_point). */
typedef struct ea_quant {
  float scale;
  int32_t zero_point;
} ea_quant;

typedef struct ea_layer_info {
  const char* name;        /* points into the model bytes */
  ea_layer_kind kind;
  ea_dtype dtype;          /* element type of inputs and outputs */
  int32_t query_dim;       /* 0 for pooling (its query is learned) */
  int32_t key_dim;
  int32_t value_dim;
  int32_t output_dim;
  int32_t num_heads;       /* rows of attention weights per query row (1 except MHA) */
  int32_t cross;           /* 1: key/value come from a separate sequence */
  int32_t causal;
  int32_t max_q_len;
  int32_t max_kv_len;
  size_t arena_bytes;      /* this layer alone at its maxima */
  ea_quant query_quant;    /* S8 only: how to quantize each input / read the output */
  ea_quant key_quant;
  ea_quant value_quant;
  ea_quant output_quant;
  int32_t kv_cache;        /* 1: decodes token by token (ea_interpreter_step) */
  size_t kv_cache_bytes;   /* arena bytes of its K and V cache at max_kv_len (decoder block: the
                              self-attention's at max_q_len; 0 if none) */
  int32_t num_kv_heads;    /* MHA: K/V heads (grouped-query attention when < num_heads); else 1 */
  int32_t coverage;        /* 1: additive layer with coverage (begin_sequence resets it) */
  size_t coverage_bytes;   /* arena bytes of its coverage vector at max_kv_len (0 if none) */
  int32_t key_cache;       /* 1: its keys can be cached once and reused (ea_interpreter_cache_keys:
                              cross-attention, additive, a decoder block's memory) */
  ea_dtype input_dtype;    /* element type of its query (or pooled rows): dtype, or S32 token ids, or F32 */
  ea_dtype output_dtype;   /* element type of its output: dtype, or S32 class indices, or F32 */
  int32_t input_range;     /* S32 inputs: every value must be in 0..input_range-1 (EA_INVALID_ARGUMENT) */
  int32_t added_rows;      /* output rows = q_len + added_rows (class tokens prepended); else 0 */
} ea_layer_info;

/* One inference of one layer. Buffers are row-major and dense:
 *   query  [q_len][query_dim]     (unused by pooling)
 *   key    [kv_len][key_dim]      (self-attention: NULL, keys = query;
 *                                  pooling: the sequence to pool)
 *   value  [kv_len][value_dim]    (NULL: value = key)
 *   output [q_len][output_dim]    (pooling: q_len is 1)
 *   attn_weights, optional: [num_heads][q_len][kv_len], float for F32 layers,
 *                uint16 Q15 (32768 = 1.0) for S8 layers.
 * kv_valid_len <= 0 means all keys are valid (so a zero-initialized ea_run_args
 * masks nothing); otherwise keys >= kv_valid_len are masked (key padding).
 * use_cached_keys != 0 uses the projections stored by ea_interpreter_cache_keys()
 * (cross-attention MHA and decoder blocks: key and value may be NULL; additive:
 * key may be NULL, value must point at the sequence the keys came from) and
 * ignores kv_len. A decoder block's key is its memory; an uncached run leaves
 * the memory's projections cached as ea_interpreter_cache_keys would.
 * Checked by ea_interpreter_run (EA_INVALID_ARGUMENT otherwise): buffers of
 * EA_F32 layers must be 4-byte aligned, and attn_weights 2-byte aligned for
 * EA_S8 layers (int8 inputs and outputs may have any alignment); output and
 * attn_weights must not overlap each other, an input the call reads, or the
 * arena; inputs must not overlap the arena (inputs may alias each other,
 * e.g. key == value). */
typedef struct ea_run_args {
  const void* query;
  const void* key;
  const void* value;
  int32_t q_len;
  int32_t kv_len;
  int32_t kv_valid_len;
  int32_t use_cached_keys;
  void* output;
  void* attn_weights;
} ea_run_args;

/* A thread pool the caller owns (ea_interpreter_use_executor). edgeattn
 * splits a run into tasks and hands them to parallel_for, which must run
 * task(arg, i) exactly once for every i in 0..n_tasks-1, in any order and on
 * any threads, and return when all have finished. n_tasks never exceeds the
 * num_threads() the executor reported when it was set, and task i uses
 * worker i's scratch in the arena, so two tasks of one call may run at the
 * same time. Every output byte is written by one task, so the results are the
 * same bytes for any thread count and any order. Neither edgeattn nor the
 * adapters it ships allocate after setup (a pool may block, spin or run the
 * tasks on the calling thread). */
typedef void (*ea_task_fn)(void* arg, int32_t task);
typedef struct ea_executor {
  void* context;
  int32_t (*num_threads)(void* context); /* workers, >= 1 (the caller's thread counts) */
  void (*parallel_for)(void* context, ea_task_fn task, void* arg, int32_t n_tasks);
} ea_executor;

/* The whole model as one call (format 6): a file converted from a spec whose
 * layers are chained ("input") holds a graph, the layers in order, each
 * reading the model's input, its memory or an earlier step's output. Invoke
 * runs it from the model's input rows to the last step's output rows; every
 * intermediate output lives in the arena (the converter's exact arena counts
 * them, reusing a region once no later step reads it).
 *   input  [num_rows][input_dim]            the first step's query (or the
 *                                           rows a pooling step pools)
 *   memory [memory_rows][memory_dim]        cross-attention keys and values,
 *                                           a decoder block's memory (NULL if
 *                                           memory_dim is 0)
 *   output [output rows][output_dim]        output rows: num_rows plus the
 *                                           rows steps add (class tokens), or
 *                                           1 after a step that pools
 * Elements: input_dtype / output_dtype (S8 or F32 as the layers, S32 token
 * ids in or class indices out).
 * valid_rows / memory_valid_rows <= 0: every row is valid; otherwise the rows
 * after it are padding that self-attention steps mask (the key padding of
 * ea_run_args, passed from step to step). int8 models read and write bytes at
 * input_quant / memory_quant / output_quant; each hand-over inside passes the
 * bytes on as they are (the file is refused when a step's input quantization
 * is not its source's output quantization). Buffers as for ea_interpreter_run:
 * float buffers 4-byte aligned, none overlapping the arena, the output
 * overlapping no input. */
typedef struct ea_graph_info {
  int32_t num_steps;
  ea_dtype dtype;          /* the layers' (F32 or S8) */
  ea_dtype input_dtype;    /* element types of the input rows and of the output */
  ea_dtype output_dtype;
  int32_t input_range;     /* S32 input: token ids in 0..input_range-1 */
  int32_t input_dim;
  int32_t max_input_rows;
  ea_quant input_quant;    /* S8 only */
  int32_t memory_dim;      /* 0: no step reads the memory */
  int32_t max_memory_rows;
  ea_quant memory_quant;
  int32_t output_dim;
  int32_t max_output_rows;
  ea_quant output_quant;
  int32_t output_layer;    /* the last step's layer */
  /* Generation (ea_interpreter_generate): the first step of the per-token
   * decoder part, 0 when the graph does not generate (then Invoke runs it);
   * the most tokens one generation can write (the decoder part's positions,
   * at the model's maxima; an init length cap may lower it); the token ids
   * the decoder reads and its argmax writes: 0..token_range-1. */
  int32_t decoder_start;
  int32_t max_tokens;
  int32_t token_range;
} ea_graph_info;

typedef struct ea_model_inputs {
  const void* rows;
  int32_t num_rows;
  int32_t valid_rows;
  const void* memory;
  int32_t memory_rows;
  int32_t memory_valid_rows;
} ea_model_inputs;

typedef struct ea_model_outputs {
  void* rows;
  int32_t num_rows;        /* set by ea_interpreter_invoke */
} ea_model_outputs;

/* Opaque storage; sizes are checked at compile time by the implementation. */
typedef struct ea_model {
  union { uint64_t align_; unsigned char bytes[256]; } opaque;
} ea_model;
typedef struct ea_interpreter {
  union { uint64_t align_; unsigned char bytes[1024]; } opaque;
} ea_interpreter;

/* Verifies the file (whole-file CRC-32, identifier, FlatBuffers verifier,
 * version, shapes, quantization parameters, arena plan). data must be
 * EA_ALIGNMENT-aligned and size the file's exact size. */
ea_status ea_model_load(ea_model* model, const void* data, size_t size);
const char* ea_model_error(const ea_model* model);
int32_t ea_model_num_layers(const ea_model* model);
int32_t ea_model_find_layer(const ea_model* model, const char* name); /* -1 if absent */
ea_status ea_model_layer_info(const ea_model* model, int32_t layer, ea_layer_info* info);
/* EA_UNSUPPORTED (and a message) for a model without a graph. */
ea_status ea_model_graph_info(const ea_model* model, ea_graph_info* info);
/* Output rows of a run of the graph over num_rows input rows. */
int32_t ea_model_graph_output_rows(const ea_model* model, int32_t num_rows);
/* Arena bytes for the whole model at every layer's declared maxima. */
size_t ea_model_arena_bytes(const ea_model* model);
/* Arena bytes when runs never exceed max_q_len / max_kv_len (each capped by
 * the layer's own maxima; 0 = no cap). */
size_t ea_model_arena_bytes_for(const ea_model* model, int32_t max_q_len, int32_t max_kv_len);
/* Arena bytes each pool worker beyond the first adds at the declared maxima
 * (recorded in the file), and the arena for a pool of `workers` >= 1 under
 * length caps as in ea_model_arena_bytes_for (0 = no cap); at the maxima it is
 * ea_model_arena_bytes + (workers - 1) * ea_model_worker_bytes. */
size_t ea_model_worker_bytes(const ea_model* model);
size_t ea_model_arena_bytes_for_workers(const ea_model* model, int32_t workers, int32_t max_q_len,
                                        int32_t max_kv_len);

ea_status ea_interpreter_init(ea_interpreter* interp, const ea_model* model, void* arena,
                              size_t arena_bytes);
/* As ea_interpreter_init, planned for runs of at most max_q_len / max_kv_len. */
ea_status ea_interpreter_init_for_lengths(ea_interpreter* interp, const ea_model* model,
                                          void* arena, size_t arena_bytes, int32_t max_q_len,
                                          int32_t max_kv_len);
/* key and value must not overlap the arena and, for EA_F32 layers, must be
 * 4-byte aligned (EA_INVALID_ARGUMENT). */
ea_status ea_interpreter_cache_keys(ea_interpreter* interp, int32_t layer, const void* key,
                                    const void* value, int32_t kv_len, int32_t kv_valid_len);
ea_status ea_interpreter_run(ea_interpreter* interp, int32_t layer, const ea_run_args* args);
/* The whole model (ea_graph_info above); EA_UNSUPPORTED without a graph. */
ea_status ea_interpreter_invoke(ea_interpreter* interp, const ea_model_inputs* inputs,
                                ea_model_outputs* outputs);
/* Runs the layers on the caller's thread pool from now on (until the next
 * init; NULL: the caller's thread again). Call it after init and before
 * ea_interpreter_use_xnnpack. Asks executor->num_threads once; the arena
 * passed to init must hold the plan plus (num_threads - 1) per-worker
 * scratch regions (ea_model_arena_bytes_for_workers with init's length caps): EA_ARENA_TOO_SMALL with the size to use otherwise. The
 * executor struct is copied; its context must outlive the interpreter.
 * XNNPACK projections still run on the caller's thread. */
ea_status ea_interpreter_use_executor(ea_interpreter* interp, const ea_executor* executor);
const char* ea_interpreter_error(const ea_interpreter* interp);

/* Generation (format 6, a graph with a decoder part: ea_graph_info.
 * decoder_start > 0). Runs the encoder part once over inputs->rows (token
 * ids or rows, as Invoke's input; valid_rows pads them; no memory), caches
 * the memory its decoder part's cross-attention reads, then runs the decoder
 * part once per token on one row: the first reads options->bos, each later
 * one the token before it, and the last step's argmax is the next token,
 * written to tokens[n]. Stops after EOS (written too; eos < 0: none) or
 * options->max_tokens tokens; *num_tokens receives the count. Everything
 * runs in the arena: nothing is allocated. EA_LENGTH_EXCEEDS_PLAN when
 * max_tokens exceeds the plan (graph info max_tokens, or the init cap);
 * EA_INVALID_ARGUMENT for max_tokens < 1, capacity < max_tokens, a bos
 * outside 0..token_range-1, a tokens buffer that is unaligned or overlaps
 * the arena or the input; EA_UNSUPPORTED for a graph without a decoder part.
 * int8 tokens are the same on every kernel path and for any thread count. */
typedef struct ea_generate_options {
  int32_t bos;         /* the first decoder step's token */
  int32_t eos;         /* stop after this token (< 0: run to max_tokens) */
  int32_t max_tokens;  /* 1..ea_graph_info.max_tokens */
} ea_generate_options;
ea_status ea_interpreter_generate(ea_interpreter* interp, const ea_model_inputs* inputs,
                                  const ea_generate_options* options, int32_t* tokens, int32_t capacity,
                                  int32_t* num_tokens);

/* Decoding with a KV cache (info.kv_cache != 0: a causal self-attention layer
 * converted with "kv_cache": true, or a decoder block; EA_INVALID_ARGUMENT for
 * other layers).
 * begin_sequence empties the cache; ea_interpreter_run over q_len tokens
 * fills positions 0..q_len-1 (prefill); step runs one token: query
 * [1][query_dim] in, output [1][output_dim] out, attn_weights optional
 * [num_heads][1][position + 1]. int8 step outputs are bit-identical to the
 * last row of a full causal run over the same tokens. EA_LENGTH_EXCEEDS_PLAN
 * when max_kv_len positions (or the init cap) are cached. cached_len: the
 * positions cached, -1 if the layer has no KV cache. A decoder block's step
 * attends over the memory cached by ea_interpreter_cache_keys (or its last
 * uncached run; EA_NOT_READY without), its attn_weights are the
 * cross-attention's [num_heads][1][memory rows], and its positions are
 * bounded by max_q_len. */
ea_status ea_interpreter_begin_sequence(ea_interpreter* interp, int32_t layer);
ea_status ea_interpreter_step(ea_interpreter* interp, int32_t layer, const void* query,
                              void* output, void* attn_weights);
int32_t ea_interpreter_cached_len(const ea_interpreter* interp, int32_t layer);
/* Coverage (info.coverage != 0: an additive layer converted with
 * "coverage": true): each query row of a run is one decoding step that sees
 * the attention weights of all earlier steps of the sequence and then adds
 * its own. ea_interpreter_cache_keys and ea_interpreter_begin_sequence start
 * a sequence (coverage 0); runs with use_cached_keys continue it; a run
 * without cached keys is a sequence of its own. ea_interpreter_step refuses
 * coverage layers (EA_INVALID_ARGUMENT). */

/* Range mode (docs/quantization.md, "Beyond the calibrated range"): int8
 * layers on inputs beyond the range calibration saw. A run at range R
 * (EA_RANGE_ONE = 1.0, Q16 fixed point, 1.0 <= R <= EA_RANGE_MAX) computes the
 * layer as if every activation scale that follows from its inputs (inputs,
 * q/k/v projections, context, output) were R times the model's: the same
 * int8 kernels, every requantization multiplier derived in integer arithmetic
 * (projection biases divided by R, the softmax score multiplier times R^2, or
 * R for pooling, additive's pre-tanh multiplier times R), bit-identical on
 * every kernel path. Inputs are quantized with scale R * info.*_quant.scale
 * and the output reads as R * output_quant.scale * (q - zero_point). Cached
 * keys and KV-cache steps are not supported in range mode (EA_UNSUPPORTED); a KV-cache
 * layer run at R > 1 needs ea_interpreter_begin_sequence before its next step.
 * The mode needs ea_model_range_bytes() more arena bytes after the plan (and
 * after XNNPACK's, which range runs do not use): EA_ARENA_TOO_SMALL otherwise. */
#define EA_RANGE_ONE 65536u
#define EA_RANGE_MAX (256u * 65536u)
typedef enum ea_range_policy {
  EA_RANGE_STATIC = 0,       /* R = 1: the calibrated scales; beyond them values saturate */
  EA_RANGE_DYNAMIC = 1,      /* R = the inputs' absmax over the calibrated range (>= 1), Q16 rounded up */
  EA_RANGE_DYNAMIC_POW2 = 2  /* the same rounded up to a power of two */
} ea_range_policy;
/* Extra arena bytes range runs need (ea_interpreter_run_scaled and, with its
 * float staging buffers, ea_interpreter_run_float) under these length caps. */
size_t ea_model_range_bytes(const ea_model* model, int32_t max_q_len, int32_t max_kv_len);
/* int8 inputs already quantized at range R (see above); the output is at range R. */
ea_status ea_interpreter_run_scaled(ea_interpreter* interp, int32_t layer, const ea_run_args* args,
                                    uint32_t range_q16);
/* Float in / float out for int8 layers (query, key, value, output are float*,
 * 4-byte aligned; attn_weights stays uint16 Q15): picks R by `policy` from the
 * inputs the layer reads (keys and values: the first kv_valid_len rows),
 * quantizes them into the arena, runs at R and dequantizes the output.
 * range_q16_out (may be NULL) receives R. F32 layers run as ea_interpreter_run. */
ea_status ea_interpreter_run_float(ea_interpreter* interp, int32_t layer, const ea_run_args* args,
                                   ea_range_policy policy, uint32_t* range_q16_out);

/* Optional XNNPACK backend for int8 projections (builds with EA_WITH_XNNPACK;
 * EA_UNSUPPORTED otherwise). ea_xnnpack_initialize: once per process, before
 * loading (XNNPACK's CPU detection mallocs there, never later).
 * ea_interpreter_use_xnnpack: after init; XNNPACK's operators and packed
 * weights go in the arena after the plan's bytes (EA_ARENA_TOO_SMALL if they
 * do not fit); ea_interpreter_xnnpack_bytes says how many it took. */
int32_t ea_xnnpack_built(void);
ea_status ea_xnnpack_initialize(void);
ea_status ea_interpreter_use_xnnpack(ea_interpreter* interp);
size_t ea_interpreter_xnnpack_bytes(const ea_interpreter* interp);

#ifdef __cplusplus
}
#endif

#endif /* EDGEATTN_EDGEATTN_H_ */
