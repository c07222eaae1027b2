// The encoder block kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

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
using kindtest::run_stream;
using kindtest::StreamRun;

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
