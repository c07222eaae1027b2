#include "whole_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "converter/io/file.h"

namespace fixtures {

using edgeattn::convert::read_file;

RunnableModel::RunnableModel(const std::string& path) : file(read_file(path), path), model(file.model()) {
  arena_words.assign(model.arena_bytes() / 8 + 2, 0);
  EXPECT_EQ(interp.Init(&model, arena_words.data(), model.arena_bytes()), edgeattn::Status::kOk) << interp.error();
}

edgeattn::LayerInfo RunnableModel::info(int layer) const {
  edgeattn::LayerInfo i = {};
  EXPECT_EQ(model.GetLayerInfo(layer, &i), edgeattn::Status::kOk) << model.error();
  return i;
}

edgeattn::GraphInfo RunnableModel::graph() const {
  edgeattn::GraphInfo g = {};
  EXPECT_EQ(model.GetGraphInfo(&g), edgeattn::Status::kOk) << model.error();
  return g;
}

std::vector<double> invoke_logits(RunnableModel& m, const double* x, int rows, int valid_rows) {
  const edgeattn::GraphInfo g = m.graph();
  const bool s8 = g.input_dtype == EA_S8;
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(g.input_dim);
  std::vector<int8_t> x8(n), y8(static_cast<size_t>(g.output_dim));
  std::vector<float> xf(n), yf(static_cast<size_t>(g.output_dim));
  for (size_t k = 0; k < n; ++k) {
    if (s8) {  // (a float model's input has no scale)
      const double q = std::nearbyint(x[k] / g.input_quant.scale) + g.input_quant.zero_point;
      x8[k] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
    }
    xf[k] = static_cast<float>(x[k]);
  }
  edgeattn::ModelInputs in = {s8 ? static_cast<const void*>(x8.data()) : xf.data(), rows, valid_rows, nullptr, 0, 0};
  edgeattn::ModelOutputs out = {s8 ? static_cast<void*>(y8.data()) : yf.data(), 0};
  EXPECT_EQ(m.interp.Invoke(in, &out), edgeattn::Status::kOk) << m.interp.error();
  EXPECT_EQ(out.num_rows, 1);
  std::vector<double> logits(static_cast<size_t>(g.output_dim));
  for (size_t c = 0; c < logits.size(); ++c) {
    logits[c] = s8 ? g.output_quant.scale * (y8[c] - g.output_quant.zero_point) : yf[c];
  }
  return logits;
}

void LogitErrors::add(const std::vector<double>& got, const std::vector<double>& want) {
  double se = 0, sr = 0;
  size_t got_top = 0, want_top = 0;
  for (size_t c = 0; c < want.size(); ++c) {
    se += (got[c] - want[c]) * (got[c] - want[c]);
    sr += want[c] * want[c];
    if (got[c] > got[got_top]) got_top = c;
    if (want[c] > want[want_top]) want_top = c;
  }
  err2 += se;
  ref2 += sr;
  worst_sample = std::max(worst_sample, std::sqrt(se / sr));
  top1_agree += got_top == want_top ? 1 : 0;
}

double LogitErrors::rel_l2() const { return std::sqrt(err2 / ref2); }

}  // namespace fixtures
