/* One golden test case of the firmware example: int8 inputs and the outputs
 * the host reference path produced for them (targets/cortex-m/golden). */
#ifndef EA_GOLDEN_CASE_H_
#define EA_GOLDEN_CASE_H_

#include <stdint.h>

typedef struct ea_golden_case {
  int32_t layer, sample, q_len, kv_len, kv_valid_len;
  int32_t cached;              /* 1: CacheKeys first, then use_cached_keys */
  const int8_t* query;         /* NULL: none (pooling) */
  const int8_t* key;           /* NULL: self-attention */
  const int8_t* value;         /* NULL: value = key */
  const int8_t* output;        /* expected, [q_len][output_dim] */
  uint32_t output_len;
  const uint16_t* weights;     /* expected Q15 attention weights [heads][q_len][kv_len] */
  uint32_t weights_len;
} ea_golden_case;

#endif /* EA_GOLDEN_CASE_H_ */
