/* One golden case of the firmware's whole-model run: the int8 input rows and
 * the output bytes the host's Invoke produced on the reference path
 * (targets/cortex-m/golden/golden_graph.cc). */
#ifndef EA_GOLDEN_GRAPH_CASE_H_
#define EA_GOLDEN_GRAPH_CASE_H_

#include <stdint.h>

typedef struct ea_golden_graph_case {
  int32_t num_rows;      /* input rows (all valid) */
  const int8_t* input;   /* [num_rows][input_dim] at the graph's input quantization */
  const int8_t* output;  /* expected [output rows][output_dim] */
  uint32_t output_len;
} ea_golden_graph_case;

#endif /* EA_GOLDEN_GRAPH_CASE_H_ */
