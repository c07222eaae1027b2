// The decoder block kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(DecoderBlock, RoundTrip) { check_case(fixtures::decoder_block_case(26)); }

}  // namespace
