// fuzz_paths' limits on one input, shared with the Cortex-M replay generator
// (targets/cortex-m/golden/paths_cases.cc): the length caps decide the run
// lengths, so both must decode an input with the same values.
#ifndef EDGEATTN_TESTS_FUZZ_PATHS_LIMITS_H_
#define EDGEATTN_TESTS_FUZZ_PATHS_LIMITS_H_

#include <cstddef>

#include "edgeattn/edgeattn.hpp"
#include "model_input.h"

namespace eafuzz {
namespace paths {

constexpr size_t kMaxArena = 8u << 20;  // skip models needing more at the capped lengths
constexpr size_t kMaxIo = 2u << 20;     // bytes of inputs + outputs + scores per run
constexpr double kMaxMacs = 4.0e6;      // estimated multiply-accumulates per run
constexpr int kMaxLen = 72;             // run lengths are 1..kMaxLen

// Estimated multiply-accumulates of one run (projections + scores + sums).
inline double Macs(const edgeattn::Model& model, int i, const LayerInput& in) {
  const edgeattn::LayerShape sh = model.ShapeOf(i);
  const edgeattn::LayerInfo& f = in.info;
  double w = 1.0;
  for (int d : {sh.embed_dim, sh.attn_dim, sh.key_dim, f.key_dim}) w = d > w ? d : w;
  const double q = in.q_len, kv = in.kv_len;
  return (q * (f.query_dim + f.output_dim) + kv * (f.key_dim + f.value_dim)) * w +
         q * kv * (w + f.value_dim + f.output_dim);
}

}  // namespace paths
}  // namespace eafuzz

#endif  // EDGEATTN_TESTS_FUZZ_PATHS_LIMITS_H_
