// The linear (projection) kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(Linear, RoundTrip) { check_case(fixtures::linear_case(21)); }

}  // namespace
