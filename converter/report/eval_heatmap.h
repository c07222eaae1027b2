// eval --svg: the heatmap of one layer's attention weights as the runtime
// computed them, for one sample and head, with its masks, token labels and
// captions (drawn by svg.h).
#ifndef EDGEATTN_CONVERTER_REPORT_EVAL_HEATMAP_H_
#define EDGEATTN_CONVERTER_REPORT_EVAL_HEATMAP_H_

#include <string>
#include <vector>

#include "converter/base/array.h"
#include "converter/eval/runner.h"
#include "converter/model/dataset.h"
#include "converter/report/svg.h"

namespace edgeattn {
namespace convert {

// Where the heatmap's data came from, for its captions and token labels.
struct HeatmapSource {
  std::string model_path, reference_path, producer;
  std::string tokens_path, ids_path;             // --tokens, and the file of the ids
  const std::vector<std::string>* vocab = nullptr;  // empty: no token labels
  const ArrayMap* ids = nullptr;                  // L.query_ids / L.key_ids
};

// `run`: the runtime's results on `d` for layer `shell`. Throws naming the
// option for a sample or head outside the data.
Heatmap eval_heatmap(const HeatmapSource& src, const FloatLayer& shell, const std::string& dtype,
                     const LayerData& d, const RunResult& run, int sample_index, int head);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_EVAL_HEATMAP_H_
