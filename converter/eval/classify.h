// Task accuracy of a classifier whose attention pooling runs in the runtime:
// held-out sequences -> the model's pooling layer (int8 or f32) -> the
// trained linear head in float64 -> argmax vs the labels.
#ifndef EDGEATTN_CONVERTER_EVAL_CLASSIFY_H_
#define EDGEATTN_CONVERTER_EVAL_CLASSIFY_H_

#include <ostream>
#include <string>

namespace edgeattn {
namespace convert {

struct ClassifyOptions {
  std::string model;    // .eatn holding the pooling layer
  std::string layer;    // pooling layer name (default: the first pooling layer)
  std::string data;     // .npz with `key` [N, L, D], `kv_valid_len` [N], `labels` [N]
  std::string weights;  // weights holding `<head>.weight` [C, D] and `<head>.bias` [C]
  std::string head = "head";
};

// Prints "accuracy A (k of N)" and returns the accuracy.
double run_classify(const ClassifyOptions& o, std::ostream& out);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_CLASSIFY_H_
