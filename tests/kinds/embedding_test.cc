// The embedding kind (token ids -> rows of a table): its round trip
// (tests/kinds/round_trip.h), the int8 table's bytes against the test's own
// rounding of the float table, ids out of range (runtime and converter), and
// the spec's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

TEST(Embedding, RoundTrip) { check_case(fixtures::embedding_case(51)); }

// Converts the fixture (int8 or f32) and returns the model file's path.
std::string convert_case(const fixtures::LayerCase& c, const std::string& dtype, const std::string& dir,
                         const std::string& spec = "") {
  return fixtures::convert_files(dir, c.weights, spec.empty() ? c.spec_json : spec, c.calib, dtype);
}

// The int8 table is the float table (times "scale") rounded once at the
// output's quantization, whose range is the whole table's (not only the rows
// the calibration ids used: they are 0..9 of 23); every id's row comes out
// as those bytes.
TEST(Embedding, Int8RowsAreTheTableRoundedOnce) {
  const fixtures::LayerCase c = fixtures::embedding_case(52);
  const LoadedModel lm(read_file(convert_case(c, "int8", fixtures::temp_dir("emb_bytes"))), "emb");
  edgeattn::LayerInfo info = {};
  ASSERT_EQ(lm.model().GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.kind, EA_LAYER_EMBEDDING);
  EXPECT_EQ(info.input_dtype, EA_S32);
  EXPECT_EQ(info.output_dtype, EA_S8);
  EXPECT_EQ(info.query_dim, 1);
  EXPECT_EQ(info.output_dim, 12);
  EXPECT_EQ(info.input_range, 23);
  EXPECT_EQ(info.num_heads, 0);
  const std::vector<double>& t = c.weights[0].second.data;
  double lo = 0, hi = 0;  // the range includes 0 (act_quant)
  for (double v : t) {
    lo = std::min(lo, 2.0 * v);
    hi = std::max(hi, 2.0 * v);
  }
  const float scale = static_cast<float>((hi - lo) / 255.0);
  EXPECT_EQ(info.output_quant.scale, scale);
  EXPECT_EQ(info.output_quant.zero_point, static_cast<int>(std::round(-128.0 - lo / static_cast<double>(scale))));
  edgeattn::Interpreter interp;
  std::vector<uint64_t> arena(lm.model().arena_bytes() / 8 + 2);
  ASSERT_EQ(interp.Init(&lm.model(), arena.data(), lm.model().arena_bytes()), edgeattn::Status::kOk);
  std::vector<int32_t> ids(23);
  for (int i = 0; i < 23; ++i) ids[static_cast<size_t>(i)] = 22 - i;
  std::vector<int8_t> out(23 * 12);
  edgeattn::RunArgs a = {};
  a.query = ids.data();
  a.q_len = 23;
  a.output = out.data();
  // max_q_len is 7: the whole vocab in four calls of up to 7 ids.
  for (int r0 = 0; r0 < 23; r0 += 7) {
    a.query = ids.data() + r0;
    a.q_len = std::min(7, 23 - r0);
    a.output = out.data() + r0 * 12;
    ASSERT_EQ(interp.Run(0, a), edgeattn::Status::kOk) << interp.error();
  }
  for (int r = 0; r < 23; ++r) {
    for (int k = 0; k < 12; ++k) {
      const double x = 2.0 * t[static_cast<size_t>(ids[static_cast<size_t>(r)]) * 12 + k];
      const double q = std::round(x / static_cast<double>(scale)) + info.output_quant.zero_point;
      ASSERT_EQ(out[static_cast<size_t>(r) * 12 + k], static_cast<int8_t>(std::clamp(q, -128.0, 127.0)))
          << "id " << ids[static_cast<size_t>(r)] << " column " << k;
    }
  }
}

// An id outside 0..vocab-1 is refused before the run, naming the id; the
// output is not touched.
TEST(Embedding, IdOutOfRangeIsAnError) {
  const fixtures::LayerCase c = fixtures::embedding_case(53);
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(dtype);
    const LoadedModel lm(read_file(convert_case(c, dtype, fixtures::temp_dir("emb_range"))), "emb");
    edgeattn::Interpreter interp;
    std::vector<uint64_t> arena(lm.model().arena_bytes() / 8 + 2);
    ASSERT_EQ(interp.Init(&lm.model(), arena.data(), lm.model().arena_bytes()), edgeattn::Status::kOk);
    for (const int32_t bad : {23, -1, 1000000}) {
      std::vector<int32_t> ids = {0, 5, 22, bad, 1};
      std::vector<float> out(5 * 12, 7.0f);
      edgeattn::RunArgs a = {};
      a.query = ids.data();
      a.q_len = 5;
      a.output = out.data();
      EXPECT_EQ(interp.Run(0, a), edgeattn::Status::kInvalidArgument) << bad;
      const std::string msg = interp.error();
      EXPECT_NE(msg.find("token id " + std::to_string(bad) + " at 3 is outside 0..22"), std::string::npos) << msg;
      EXPECT_EQ(out, std::vector<float>(5 * 12, 7.0f));
    }
  }
}

// The converter refuses ids outside the table in the calibration data, and
// float arrays where ids belong.
TEST(Embedding, CalibrationIdsAreChecked) {
  fixtures::LayerCase c = fixtures::embedding_case(54);
  c.calib[0].second.data[9] = 23;
  try {
    convert_case(c, "int8", fixtures::temp_dir("emb_calib_range"));
    ADD_FAILURE() << "converted";
  } catch (const ConvertError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("token id 23 (sample 1, row 2) is outside 0..22"), std::string::npos) << msg;
  }
  c = fixtures::embedding_case(54);
  c.calib[0].second = fixtures::make("<f4", {16, 7, 1}, c.calib[0].second.data);
  try {
    convert_case(c, "int8", fixtures::temp_dir("emb_calib_float"));
    ADD_FAILURE() << "converted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("token ids must be an integer array"), std::string::npos) << e.what();
  }
}

// "vocab" and "dim", when given, must be the weight's.
TEST(Embedding, SpecWidthsMustMatchTheWeight) {
  const fixtures::LayerCase c = fixtures::embedding_case(55);
  const std::string spec = R"({"layers": [{"name": "emb", "kind": "embedding", "prefix": "tok.", "vocab": 24,
    "max_q_len": 7}]})";
  try {
    convert_case(c, "f32", fixtures::temp_dir("emb_spec"), spec);
    ADD_FAILURE() << "converted";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'vocab' is 24, tensor 'tok.weight' has 23 rows"), std::string::npos)
        << e.what();
  }
}

}  // namespace
