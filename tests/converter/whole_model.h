// For the converter tests that run a converted file's whole model against
// their own float64 model (the file from fixtures::convert_files): load it
// with an arena of exactly its size, and run one Invoke per sample with the
// logits' errors gathered.
#ifndef EDGEATTN_TESTS_CONVERTER_WHOLE_MODEL_H_
#define EDGEATTN_TESTS_CONVERTER_WHOLE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"

namespace fixtures {

// A file loaded by the converter's own loader (convert::LoadedModel: aligned
// bytes, verified; it throws, naming the file, when the runtime refuses
// them), with an interpreter on an arena of exactly arena_bytes().
struct RunnableModel {
  explicit RunnableModel(const std::string& path);
  edgeattn::LayerInfo info(int layer) const;
  edgeattn::GraphInfo graph() const;

  edgeattn::convert::LoadedModel file;
  const edgeattn::Model& model;
  std::vector<uint64_t> arena_words;
  edgeattn::Interpreter interp;
};

// One Invoke of a sample of `rows` input rows (float64, the graph's
// input_dim wide): quantized at the graph's input scale for an int8 file,
// as float for an f32 one; `valid_rows` as ModelInputs takes it (0: all).
// Returns the output row's logits as real numbers.
std::vector<double> invoke_logits(RunnableModel& m, const double* x, int rows, int valid_rows = 0);

// Logits against a float64 model's, sample by sample: relative L2 over all,
// the worst sample's, and how often the largest logit is the same class.
struct LogitErrors {
  void add(const std::vector<double>& got, const std::vector<double>& want);
  double rel_l2() const;

  double worst_sample = 0;
  int top1_agree = 0;
  double err2 = 0, ref2 = 0;
};

}  // namespace fixtures

#endif  // EDGEATTN_TESTS_CONVERTER_WHOLE_MODEL_H_
