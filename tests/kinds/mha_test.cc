// The multi-head attention kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;
using kindtest::run_stream;
using kindtest::StreamRun;

TEST(Mha, RoundTripSelfKeyPadding) { check_case(fixtures::mha_case("key_padding", false, "torch_mha", 11)); }
TEST(Mha, RoundTripCausalLinearPreset) { check_case(fixtures::mha_case("causal", false, "linear", 12)); }
TEST(Mha, RoundTripCrossSeparateKdimVdim) { check_case(fixtures::mha_case("key_padding", true, "torch_mha", 13)); }

// An int16 output (issue 37, contract 5c-out): the fixture's layer is the
// model's output, so --residual int16 gives it int16 rows (zero point 0) and
// --residual auto keeps them int8; against the fixture's float64 layer the
// int16 output's error is below the int8 output's (only the last rounding
// differs, so the gain is that rounding's share).
void check_output16(const fixtures::LayerCase& c) {
  const StreamRun s8 = run_stream(c, "auto"), s16 = run_stream(c, "int16");
  EXPECT_EQ(s8.info.output_dtype, EA_S8);
  EXPECT_EQ(s16.info.output_dtype, EA_S16);
  EXPECT_EQ(s16.info.input_dtype, EA_S8);
  EXPECT_EQ(s16.info.output_quant.zero_point, 0);
  EXPECT_LT(s16.rel_l2, s8.rel_l2);
}

TEST(Mha, Output16SelfKeyPadding) { check_output16(fixtures::mha_case("key_padding", false, "torch_mha", 11)); }
TEST(Mha, Output16Causal) { check_output16(fixtures::mha_case("causal", false, "linear", 12)); }
TEST(Mha, Output16Cross) { check_output16(fixtures::mha_case("key_padding", true, "torch_mha", 13)); }

}  // namespace
