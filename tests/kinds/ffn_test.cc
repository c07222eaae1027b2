// The feed-forward kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(Ffn, RoundTrip) { check_case(fixtures::ffn_case(23)); }

}  // namespace
