// The multi-head attention kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(Mha, RoundTripSelfKeyPadding) { check_case(fixtures::mha_case("key_padding", false, "torch_mha", 11)); }
TEST(Mha, RoundTripCausalLinearPreset) { check_case(fixtures::mha_case("causal", false, "linear", 12)); }
TEST(Mha, RoundTripCrossSeparateKdimVdim) { check_case(fixtures::mha_case("key_padding", true, "torch_mha", 13)); }

}  // namespace
