// Accuracy figures of a runtime result against a float reference.
#ifndef EDGEATTN_CONVERTER_EVAL_METRICS_H_
#define EDGEATTN_CONVERTER_EVAL_METRICS_H_

#include <cstddef>
#include <vector>

#include "converter/base/array.h"
#include "converter/model/dataset.h"
#include "converter/model/float_reference.h"

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
  // A layer whose outputs are class indices (KindModule::index_output,
  // argmax): the error figures above are meaningless for them; `agreement`
  // is the fraction of compared rows whose indices all equal the
  // reference's, and the report gives it instead.
  bool indices = false;
  double agreement = 1.0;
  size_t agreeing_rows = 0;
};

// Compares [n][q_len][output_dim] outputs and [n][heads][q_len][kv_len] weights.
// Self-attention with key padding: only query rows < kv_valid_len count.
Metrics compare(const FloatLayer& layer, const LayerData& data, const std::vector<double>& out,
                const std::vector<double>& ref_out, const std::vector<double>& weights,
                const std::vector<double>& ref_weights);

// forward(sample, out_row, weights_row) on every sample of `data`, into out
// and weights laid out as above (sized for `layer`).
template <class Forward>
void forward_samples(const FloatLayer& layer, const LayerData& data, std::vector<double>* out,
                     std::vector<double>* weights, Forward forward) {
  if (data.n == 0) {
    out->clear();
    weights->clear();
    return;
  }
  const SampleInput first = data.sample(layer, 0);
  const size_t out_n = output_size(layer, first), w_n = weights_size(layer, first);
  resize_large(out, out_n * static_cast<size_t>(data.n));
  resize_large(weights, w_n * static_cast<size_t>(data.n));
  for (int i = 0; i < data.n; ++i) {
    const size_t si = static_cast<size_t>(i);
    forward(data.sample(layer, i), out->data() + si * out_n, weights->data() + si * w_n);
  }
}

// Float64 forward of every sample (outputs and weights laid out as above).
void reference_forward(const FloatLayer& layer, const LayerData& data, std::vector<double>* out,
                       std::vector<double>* weights);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_EVAL_METRICS_H_
