// The argmax kind (rows -> int32 indices of the k largest): its round trip
// (tests/kinds/round_trip.h) and the same indices as the fixture's own
// reference, exactly, in int8 and f32; ties, top-k order and NaN on rows
// written out here with their expected indices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/eval/runner.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "round_trip.h"

namespace {

using namespace edgeattn::convert;
using kindtest::check_case;

TEST(Argmax, RoundTrip) { check_case(fixtures::argmax_case(61, 1)); }
TEST(Argmax, RoundTripTop3) { check_case(fixtures::argmax_case(62, 3)); }

std::string convert_spec(const std::string& spec, const fixtures::Entries& calib, const std::string& dtype,
                         const std::string& dir) {
  return fixtures::convert_files(dir, {}, spec, calib, dtype);
}

// On rows whose values are on a grid int8 keeps apart (the fixture), the
// int8 and f32 indices are the reference's exactly, ties included: the grid
// has 17 values for 13 columns, so most rows have equal values.
TEST(Argmax, IndicesEqualTheReferenceExactly) {
  for (const int k : {1, 4, 13}) {
    const fixtures::LayerCase c = fixtures::argmax_case(63, k);
    std::vector<double> ref, unused;
    c.reference(c.test, &ref, &unused);
    const std::string dir = fixtures::temp_dir("argmax_exact");
    for (const std::string dtype : {"int8", "f32"}) {
      SCOPED_TRACE(dtype + " k " + std::to_string(k));
      const LoadedModel lm(read_file(convert_spec(c.spec_json, c.calib, dtype, dir)), "argmax");
      edgeattn::LayerInfo info = {};
      ASSERT_EQ(lm.model().GetLayerInfo(0, &info), edgeattn::Status::kOk);
      EXPECT_EQ(info.output_dtype, EA_S32);
      EXPECT_EQ(info.output_dim, k);
      EXPECT_EQ(info.query_dim, 13);
      const FloatLayer shell = layer_shell(lm.model(), 0);
      const LayerData d = load_layer_data(c.test, "test", shell, false);
      const RunResult run = run_layer(lm, 0, d, 1);
      ASSERT_EQ(run.output.size(), ref.size());
      EXPECT_EQ(run.output, ref);
    }
  }
}

// Rows written out with their expected indices: ties go to the lower index,
// top-k is in descending order (equal values by increasing index), and in
// f32 a NaN counts as the largest value.
TEST(Argmax, TiesTopKAndNan) {
  const std::string dir = fixtures::temp_dir("argmax_rows");
  const std::string spec = R"({"layers": [{"name": "top", "kind": "argmax", "dim": 5, "k": 3, "max_q_len": 4}]})";
  // Calibration: the range [-2, 2].
  const fixtures::Entries calib = {
      {"top.query", fixtures::make("<f4", {1, 1, 5}, {-2.0, 2.0, 0.0, 1.0, -1.0})}};
  const std::vector<float> rows = {
      1.0f, 2.0f, 2.0f, 0.0f, 2.0f,    // three tied maxima: 1, 2, 4
      -1.0f, 0.5f, -1.0f, 0.5f, 1.5f,  // 4, then the tie 1, 3
      0.0f, 0.0f, 0.0f, 0.0f, 0.0f,    // all equal: 0, 1, 2
      -2.0f, -1.5f, -0.5f, -1.0f, 1.0f};
  const std::vector<int32_t> want = {1, 2, 4, 4, 1, 3, 0, 1, 2, 4, 2, 3};
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(dtype);
    const LoadedModel lm(read_file(convert_spec(spec, calib, dtype, dir)), "argmax");
    edgeattn::LayerInfo info = {};
    ASSERT_EQ(lm.model().GetLayerInfo(0, &info), edgeattn::Status::kOk);
    edgeattn::Interpreter interp;
    std::vector<uint64_t> arena(lm.model().arena_bytes() / 8 + 2);
    ASSERT_EQ(interp.Init(&lm.model(), arena.data(), lm.model().arena_bytes()), edgeattn::Status::kOk);
    std::vector<int8_t> q8(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const double v = std::round(rows[i] / info.query_quant.scale) + info.query_quant.zero_point;
      q8[i] = static_cast<int8_t>(std::fmin(127.0, std::fmax(-128.0, v)));
    }
    std::vector<int32_t> got(12, -7);
    edgeattn::RunArgs a = {};
    a.query = dtype == "int8" ? static_cast<const void*>(q8.data()) : static_cast<const void*>(rows.data());
    a.q_len = 4;
    a.output = got.data();
    ASSERT_EQ(interp.Run(0, a), edgeattn::Status::kOk) << interp.error();
    EXPECT_EQ(got, want);
    if (dtype == "f32") {
      std::vector<float> nan_rows = rows;
      nan_rows[3] = std::numeric_limits<float>::quiet_NaN();  // row 0: the NaN first, then the tied maxima
      nan_rows[10] = nan_rows[12] = std::numeric_limits<float>::quiet_NaN();  // row 2: NaNs by index, then 1
      a.query = nan_rows.data();
      ASSERT_EQ(interp.Run(0, a), edgeattn::Status::kOk) << interp.error();
      const std::vector<int32_t> want_nan = {3, 1, 2, 4, 1, 3, 0, 2, 1, 4, 2, 3};
      EXPECT_EQ(got, want_nan);
    }
    // attention weights: none
    std::vector<float> w(16);
    a.attn_weights = w.data();
    EXPECT_EQ(interp.Run(0, a), edgeattn::Status::kInvalidArgument);
  }
}

// "k" above "dim" is a spec error naming both.
TEST(Argmax, KAboveDimIsASpecError) {
  const std::string spec = R"({"layers": [{"name": "top", "kind": "argmax", "dim": 5, "k": 6, "max_q_len": 4}]})";
  const fixtures::Entries calib = {{"top.query", fixtures::make("<f4", {1, 1, 5}, {-2.0, 2.0, 0.0, 1.0, -1.0})}};
  try {
    convert_spec(spec, calib, "f32", fixtures::temp_dir("argmax_k"));
    ADD_FAILURE() << "converted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'k' is 6, more than the row's 5 values"), std::string::npos)
        << e.what();
  }
}

}  // namespace
