/* One golden case of the firmware's generation: a source's token ids and
 * the tokens the host's Generate produced on the reference path
 * (targets/cortex-m/golden/golden_generate.cc). */
#ifndef EA_GOLDEN_GENERATE_CASE_H_
#define EA_GOLDEN_GENERATE_CASE_H_

#include <stdint.h>

typedef struct ea_golden_generate_case {
  int32_t num_rows;       /* source rows, padded */
  int32_t valid_rows;     /* the source's length; the rows after it are padding */
  const int32_t* source;  /* [num_rows] token ids */
  const int32_t* tokens;  /* the expected tokens, the last EOS unless max_tokens ran out */
  int32_t num_tokens;
} ea_golden_generate_case;

#endif /* EA_GOLDEN_GENERATE_CASE_H_ */
