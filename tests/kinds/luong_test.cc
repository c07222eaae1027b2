// The Luong attention kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(Luong, RoundTripDot) { check_case(fixtures::luong_case("dot", 15)); }
TEST(Luong, RoundTripGeneral) { check_case(fixtures::luong_case("general", 16)); }
TEST(Luong, RoundTripScaledDot) { check_case(fixtures::luong_case("scaled_dot", 17)); }

}  // namespace
