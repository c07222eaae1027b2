// The encoder block kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(EncoderBlock, RoundTripPostNorm) { check_case(fixtures::encoder_block_case(24, false)); }
TEST(EncoderBlock, RoundTripPreNorm) { check_case(fixtures::encoder_block_case(25, true)); }

}  // namespace
