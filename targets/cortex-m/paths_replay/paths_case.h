/* One replayed fuzz_paths input of the Cortex-M paths replay: the model bytes,
 * and per int8 layer the inputs fuzz_paths derives from the trailer and the
 * outputs the host reference path produced for them (edgeattn-paths-cases,
 * targets/cortex-m/golden/paths_cases.cc). */
#ifndef EA_PATHS_CASE_H_
#define EA_PATHS_CASE_H_

#include <stdint.h>

typedef struct ea_paths_layer {
  int32_t layer, q_len, kv_len, kv_valid_len;
  int32_t cached;              /* 1: then CacheKeys + use_cached_keys, same expected outputs */
  int32_t step;                /* 1: then one KV-cache step (step_* expected) */
  const int8_t* query;         /* NULL: none (pooling) */
  const int8_t* key;           /* NULL: self-attention */
  const int8_t* value;
  const int8_t* output;        /* expected, [q_len][output_dim] */
  uint32_t output_len;
  const uint16_t* weights;     /* expected Q15 weights; NULL: not requested */
  uint32_t weights_len;
  const int8_t* step_output;   /* expected step output [output_dim] */
  uint32_t step_output_len;
  const uint16_t* step_weights; /* [num_heads][position + 1] (decoder block: [num_heads][kv_len]); NULL: not requested */
  uint32_t step_weights_len;
} ea_paths_layer;

typedef struct ea_paths_input {
  const char* name;            /* "paths/<file>" (committed corpus) or "paths_seeds/<file>" */
  const uint8_t* model;        /* 16-byte aligned; the bytes fuzz_paths loads */
  uint32_t model_size;
  int32_t q_cap, kv_cap;       /* ea_interpreter_init_for_lengths */
  uint32_t arena_bytes;        /* ea_model_arena_bytes_for(q_cap, kv_cap) */
  const ea_paths_layer* layers;
  int32_t num_layers;
} ea_paths_input;

#endif /* EA_PATHS_CASE_H_ */
