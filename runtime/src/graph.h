// A whole-model run's steps (format 6, the file's Graph): where a step reads
// and what it writes, shared by the load-time checks and the planning
// (graph.cc) and Interpreter::Invoke (interpreter.cc).
#ifndef EDGEATTN_RUNTIME_GRAPH_H_
#define EDGEATTN_RUNTIME_GRAPH_H_

#include <cstddef>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"

namespace edgeattn {

constexpr int kModelInput = -1;   // GraphStep source: the model's input rows
constexpr int kModelMemory = -2;  // the model's memory rows
constexpr int kGeneratedToken = -3;  // a generating graph's decoder part: the last token (BOS first)

// How a decoder-part step of a generating graph runs one new row of the
// sequence (Interpreter::Generate); kNone: it cannot (it needs all rows).
enum class TokenStep {
  kNone,
  kRow,          // each output row depends on its input row alone: a run over the one row
  kPosition,     // positions: the row plus the table's row at the token's position (kind step)
  kKvCache,      // causal self-attention on its KV cache (Interpreter::Step)
  kCachedMemory  // cross-attention over keys cached once from the encoder part, one-row runs
};
TokenStep token_step(const fb::Layer& layer);

// What one step reads and writes, from its layer's public description.
struct StepIo {
  bool learned_query;  // the primary input is the sequence it pools (pooling)
  bool cross;          // reads memory rows as its keys and values
  int input_dim;
  ea_quant input_quant;
  int max_input_rows;
  int memory_dim;
  ea_quant memory_quant;
  int max_memory_rows;
  int output_dim;
  ea_quant output_quant;
  int added_rows;       // output rows = input rows + added_rows (class tokens), unless learned_query
  int max_output_rows;  // 1 after pooling, else the layer's max_q_len under the cap + added_rows
  ea_dtype dtype;       // the layer's (S8 or F32)
  ea_dtype input_dtype; // its primary input's elements (S32: token ids)
  int input_range;      // S32 input: ids in 0..input_range-1
  ea_dtype output_dtype;
};

// Output rows of a step that reads in_rows rows.
inline int step_output_rows(const StepIo& io, int in_rows) {
  return io.learned_query ? 1 : in_rows + io.added_rows;
}

// A step's inputs and output for a verified layer, rows capped at q_cap (0: none).
StepIo step_io(const fb::Layer& layer, int q_cap);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_GRAPH_H_
