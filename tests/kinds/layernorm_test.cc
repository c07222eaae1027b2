// The LayerNorm kind: its round trips (tests/kinds/round_trip.h) and its
// own cases.
#include <gtest/gtest.h>

#include "round_trip.h"

namespace {

using kindtest::check_case;

TEST(LayerNorm, RoundTrip) { check_case(fixtures::layernorm_case(22)); }

}  // namespace
