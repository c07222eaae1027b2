// Accuracy figures of a runtime result against a float reference.
#ifndef EDGEATTN_CONVERTER_METRICS_H_
#define EDGEATTN_CONVERTER_METRICS_H_

#include <cstddef>
#include <vector>

#include "converter/dataset.h"
#include "converter/float_reference.h"

namespace edgeattn {
namespace convert {

struct Metrics {
  double max_abs = 0.0;          // max |y - ref|
  double rel_l2 = 0.0;           // ||y - ref|| / ||ref||
  double cosine = 1.0;           // <y, ref> / (||y|| ||ref||)
  double weights_max_abs = 0.0;  // max |a - a_ref| over attention weights
  double ref_max_abs = 0.0;      // max |ref|, for scale
  size_t rows = 0;               // compared query rows (over all samples)
  // The sample with the largest relative L2 error, and its own figures.
  int worst_sample = 0;
  double worst_rel_l2 = 0.0, worst_cosine = 1.0, worst_max_abs = 0.0;
};

// Compares [n][q_len][output_dim] outputs and [n][heads][q_len][kv_len] weights.
// Self-attention with key padding: only query rows < kv_valid_len count.
Metrics compare(const FloatLayer& layer, const LayerData& data, const std::vector<double>& out,
                const std::vector<double>& ref_out, const std::vector<double>& weights,
                const std::vector<double>& ref_weights);

// Float64 forward of every sample (outputs and weights laid out as above).
void reference_forward(const FloatLayer& layer, const LayerData& data, std::vector<double>* out,
                       std::vector<double>* weights);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_METRICS_H_
