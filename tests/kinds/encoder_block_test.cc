// The encoder block kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "converter/cli/commands.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "round_trip.h"

namespace {

using namespace edgeattn::convert;
using kindtest::check_case;

TEST(EncoderBlock, RoundTripPostNorm) { check_case(fixtures::encoder_block_case(24, false)); }
TEST(EncoderBlock, RoundTripPreNorm) { check_case(fixtures::encoder_block_case(25, true)); }

// The 16-bit residual stream (issue 37): the same fixture converted with
// --residual int8 and int16, each run through the runtime on the test
// inputs and compared with the fixture's own float64 block. The int16
// stream's file reads and writes int16 rows, and its error on the output
// and on the block's change (output - input) is at most half the int8
// stream's (the target).
struct StreamRun {
  edgeattn::LayerInfo info;
  double rel_l2 = 0, change_rel_l2 = 0;
};

StreamRun run_stream(const fixtures::LayerCase& c, const std::string& residual) {
  const std::string dir = fixtures::temp_dir(c.name + "_res_" + residual);
  save_safetensors(dir + "/weights.safetensors", c.weights);
  fixtures::write_text(dir + "/spec.json", c.spec_json);
  save_npz(dir + "/calib.npz", c.calib);
  ConvertOptions o;
  o.weights = dir + "/weights.safetensors";
  o.spec = dir + "/spec.json";
  o.calib = dir + "/calib.npz";
  o.dtype = "int8";
  o.residual = residual;
  o.output = dir + "/model.eatn";
  std::ostringstream report;
  run_convert(o, report);
  const LoadedModel lm(read_file(o.output), o.output);
  StreamRun s;
  EXPECT_EQ(lm.model().GetLayerInfo(0, &s.info), edgeattn::Status::kOk);
  const FloatLayer shell = layer_shell(lm.model(), 0);
  const LayerData d = load_layer_data(c.test, "test", shell, false);
  const RunResult run = run_layer(lm, 0, d, 1);
  std::vector<double> ref, ref_w;
  c.reference(c.test, &ref, &ref_w);
  // Valid rows only (key padding), as the fixture's round trip compares them.
  const int dim = shell.output_dim;
  double e2 = 0, r2 = 0, c2 = 0;
  for (int i = 0; i < d.n; ++i) {
    const int rows = d.valid[static_cast<size_t>(i)] >= 0 ? d.valid[static_cast<size_t>(i)] : d.lq;
    for (size_t x = static_cast<size_t>(i) * d.lq * dim; x < (static_cast<size_t>(i) * d.lq + rows) * dim; ++x) {
      const double err = run.output[x] - ref[x], change = ref[x] - d.query[x];
      e2 += err * err;
      r2 += ref[x] * ref[x];
      c2 += change * change;
    }
  }
  s.rel_l2 = std::sqrt(e2 / r2);
  s.change_rel_l2 = std::sqrt(e2 / c2);
  std::printf("  %-10s residual %-5s relL2 %.4f  change relL2 %.4f\n", c.name.c_str(), residual.c_str(), s.rel_l2,
              s.change_rel_l2);
  return s;
}

void check_streams(const fixtures::LayerCase& c) {
  const StreamRun s8 = run_stream(c, "int8"), s16 = run_stream(c, "int16");
  EXPECT_EQ(s8.info.input_dtype, EA_S8);
  EXPECT_EQ(s8.info.output_dtype, EA_S8);
  EXPECT_EQ(s16.info.input_dtype, EA_S16);
  EXPECT_EQ(s16.info.output_dtype, EA_S16);
  EXPECT_EQ(s16.info.query_quant.zero_point, 0);
  EXPECT_EQ(s16.info.output_quant.zero_point, 0);
  EXPECT_LE(s16.rel_l2, 0.5 * s8.rel_l2);
  EXPECT_LE(s16.change_rel_l2, 0.5 * s8.change_rel_l2);
}

TEST(EncoderBlock, Residual16PreNormHalvesTheError) { check_streams(fixtures::encoder_block_case(25, true)); }
TEST(EncoderBlock, Residual16PostNormHalvesTheError) { check_streams(fixtures::encoder_block_case(24, false)); }

}  // namespace
