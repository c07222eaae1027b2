// The shared round trip of a layer kind's fixture (tests/converter/fixtures.h):
// its random weights -> edgeattn-convert (int8 and f32) -> runtime ->
// compared with the fixture's own float64 implementation.
#ifndef EDGEATTN_TESTS_KINDS_ROUND_TRIP_H_
#define EDGEATTN_TESTS_KINDS_ROUND_TRIP_H_

#include <string>
#include <vector>

#include "converter/model/dataset.h"
#include "edgeattn/edgeattn.hpp"
#include "fixtures.h"

namespace kindtest {

struct Figures {
  double max_abs = 0, rel_l2 = 0, cosine = 0, ref_range = 0, weights_max_abs = 0;
};

// Compares [n][lq][dout] (rows masked for self-attention padding) and weights.
Figures measure(const fixtures::LayerCase& c, const edgeattn::convert::LayerData& d, int lq, int dout, int heads,
                const std::vector<double>& out, const std::vector<double>& ref, const std::vector<double>& w,
                const std::vector<double>& ref_w);

// Converts c to int8 and f32, runs each in the runtime and checks it against
// c.reference: int8 within 3 % relative L2 (cosine >= 0.999, weights within
// 0.05), f32 within 1e-4 of the output range (weights within 1e-5).
void check_case(const fixtures::LayerCase& c);

// Converts c (its weights, spec and calibration set) to `dtype` ("int8" or
// "f32"; int8 with convert --residual `residual` when given) in a fresh
// directory and returns the model file's path.
std::string convert_case(const fixtures::LayerCase& c, const std::string& dtype, const std::string& residual = "");

// One fixture converted to int8 with `residual` (convert --residual: int8,
// int16, auto), run through the runtime on its test inputs and compared
// with its float64 reference: relative L2 of the output and of its change
// from the query rows (valid rows only), and the layer's info.
struct StreamRun {
  edgeattn::LayerInfo info;
  double rel_l2 = 0, change_rel_l2 = 0;
};

StreamRun run_stream(const fixtures::LayerCase& c, const std::string& residual);

}  // namespace kindtest

#endif  // EDGEATTN_TESTS_KINDS_ROUND_TRIP_H_
