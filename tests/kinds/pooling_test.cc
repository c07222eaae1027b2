// The attention pooling kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(Pooling, RoundTrip) { check_case(fixtures::pooling_case(18)); }

}  // namespace
