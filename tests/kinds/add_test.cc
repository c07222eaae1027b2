// The add kind (y = x + r, row by row, the residual rows as keys): its round
// trip (tests/kinds/round_trip.h), the add contract against the test's own
// 64-bit arithmetic for every pair of int8 inputs, the multipliers the
// converter chose, and what a bad call or spec says.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/requant.h"
#include "round_trip.h"

namespace {
namespace add_test {  // tests/CMakeLists.txt: unity builds

using kindtest::check_case;
using kindtest::convert_case;
namespace fb = edgeattn::fb;

TEST(Add, RoundTrip) { check_case(fixtures::add_case(71)); }

struct Loaded {
  std::vector<uint64_t> words, arena;
  edgeattn::Model model;
  edgeattn::Interpreter interp;
  explicit Loaded(const std::string& path) {
    const std::vector<uint8_t> b = edgeattn::convert::read_file(path);
    words.assign((b.size() + 7) / 8, 0);
    std::memcpy(words.data(), b.data(), b.size());
    EXPECT_EQ(model.Load(words.data(), b.size()), edgeattn::Status::kOk) << model.error();
    arena.assign(model.arena_bytes() / 8 + 2, 0);
    EXPECT_EQ(interp.Init(&model, arena.data(), model.arena_bytes()), edgeattn::Status::kOk) << interp.error();
  }
  const fb::Add* options() const { return fb::GetModel(words.data())->layers()->Get(0)->options_as_Add(); }
};

// floor(v / 2^n) of an int64, the contract's arithmetic shift written out.
int64_t floor_shift(int64_t v, int n) {
  const int64_t d = int64_t{1} << n;
  return v >= 0 ? v / d : -((-v + d - 1) / d);
}

// Every (x, r) byte pair through the runtime equals
// sat8(floor((A (x - zp_x) + B (r - zp_r) + 2^(n-1)) / 2^n) + zp_y), and
// A, B, n are what the contract says the converter writes for the file's scales.
TEST(Add, EveryPairOfBytesIsTheContract) {
  Loaded m(convert_case(fixtures::add_case(72), "int8"));
  const fb::Add* p = m.options();
  const double sx = p->input()->scale(), sr = p->residual()->scale(), sy = p->output()->scale();
  const int n = p->shift();
  ASSERT_GE(n, 1);
  ASSERT_LE(n, 16);
  const int64_t a = p->input_multiplier(), b = p->residual_multiplier();
  EXPECT_EQ(a, std::llround(std::nearbyint(sx / sy * std::ldexp(1.0, n))));
  EXPECT_EQ(b, std::llround(std::nearbyint(sr / sy * std::ldexp(1.0, n))));
  EXPECT_LT(a, int64_t{1} << 21);
  EXPECT_LT(b, int64_t{1} << 21);
  if (n < 16) {  // the largest n: one more bit would not fit
    EXPECT_GE(std::max(sx, sr) / sy * std::ldexp(1.0, n + 1), (1 << 21) - 1.5);
  }
  const int64_t zx = p->input()->zero_point(), zr = p->residual()->zero_point(), zy = p->output()->zero_point();
  const int per_call = 7 * 12;
  std::vector<int8_t> x(per_call), r(per_call), y(per_call);
  int saturated = 0;
  for (int first = 0; first < 65536; first += per_call) {
    for (int i = 0; i < per_call; ++i) {
      const int v = (first + i) % 65536;
      x[static_cast<size_t>(i)] = static_cast<int8_t>(v % 256 - 128);
      r[static_cast<size_t>(i)] = static_cast<int8_t>(v / 256 - 128);
    }
    edgeattn::RunArgs args = {};
    args.query = x.data();
    args.q_len = 7;
    args.key = r.data();
    args.kv_len = 7;
    args.output = y.data();
    ASSERT_EQ(m.interp.Run(0, args), edgeattn::Status::kOk) << m.interp.error();
    for (int i = 0; i < per_call; ++i) {
      const int64_t sum = a * (x[static_cast<size_t>(i)] - zx) + b * (r[static_cast<size_t>(i)] - zr) +
                          (int64_t{1} << (n - 1));
      int64_t want = floor_shift(sum, n) + zy;
      if (want > 127 || want < -128) ++saturated;
      want = want > 127 ? 127 : (want < -128 ? -128 : want);
      ASSERT_EQ(y[static_cast<size_t>(i)], want) << "x " << int{x[static_cast<size_t>(i)]} << " r "
                                                 << int{r[static_cast<size_t>(i)]};
    }
  }
  EXPECT_GT(saturated, 0);  // the pairs reach both ends
}

// The add16 contract (a branch-norm block's adds on the 16-bit stream):
// add_s16 against floor((A (x - zp_x) + B r + 2^(n-1)) / 2^n) written out
// in the test, for every int8 x, int16 r across the range (both ends), and
// multipliers and shifts at their ends.
TEST(Add, Add16IsItsDefinition) {
  struct Case {
    int32_t a, b, n, zp_x;
  };
  const Case cases[] = {{(1 << 21) - 1, (1 << 21) - 1, 30, -128}, {1 << 20, 1 << 13, 13, 5}, {37, 8191, 13, 0},
                        {0, 1, 1, 127},                          {2097151, 0, 21, -3},    {300000, 1500000, 22, 64}};
  int saturated = 0;
  for (const Case& k : cases) {
    for (int x = -128; x <= 127; ++x) {
      for (int r = -32768; r <= 32767; r += (r > -32700 && r < 32700) ? 97 : 1) {
        const int64_t sum = int64_t{k.a} * (x - k.zp_x) + int64_t{k.b} * r + (int64_t{1} << (k.n - 1));
        int64_t want = floor_shift(sum, k.n);
        if (want > 32767 || want < -32768) ++saturated;
        want = want > 32767 ? 32767 : (want < -32768 ? -32768 : want);
        ASSERT_EQ(edgeattn::kernels::add_s16(x, k.zp_x, k.a, r, k.b, k.n), want)
            << "x " << x << " r " << r << " A " << k.a << " B " << k.b << " n " << k.n;
      }
    }
  }
  EXPECT_GT(saturated, 0);
}

TEST(Add, InfoNamesTheResidualAsItsKeys) {
  Loaded m(convert_case(fixtures::add_case(73), "int8"));
  edgeattn::LayerInfo info;
  ASSERT_EQ(m.model.GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.kind, EA_LAYER_ADD);
  EXPECT_EQ(info.cross, 1);
  EXPECT_EQ(info.num_heads, 0);
  EXPECT_EQ(info.max_kv_len, info.max_q_len);
  EXPECT_EQ(info.key_quant.scale, m.options()->residual()->scale());
  EXPECT_EQ(info.query_quant.scale, m.options()->input()->scale());
}

TEST(Add, UnpairedRowsAreRefused) {
  Loaded m(convert_case(fixtures::add_case(74), "f32"));
  std::vector<float> x(7 * 12, 1.0f), r(7 * 12, 2.0f), y(7 * 12);
  edgeattn::RunArgs args = {};
  args.query = x.data();
  args.q_len = 5;
  args.key = r.data();
  args.kv_len = 6;
  args.output = y.data();
  EXPECT_EQ(m.interp.Run(0, args), edgeattn::Status::kInvalidArgument);
  EXPECT_NE(std::string(m.interp.error()).find("pairs its 5 query rows with 6 key rows"), std::string::npos)
      << m.interp.error();
  args.kv_len = 5;
  ASSERT_EQ(m.interp.Run(0, args), edgeattn::Status::kOk) << m.interp.error();
  for (int i = 0; i < 5 * 12; ++i) EXPECT_EQ(y[static_cast<size_t>(i)], 3.0f);
}

TEST(Add, ASpecWithOtherResidualRowsIsRefused) {
  fixtures::LayerCase c = fixtures::add_case(75);
  c.spec_json = R"({"layers": [{"name": "res", "kind": "add", "dim": 12, "max_q_len": 7, "max_kv_len": 8}]})";
  try {
    convert_case(c, "int8");
    FAIL() << "converted";
  } catch (const edgeattn::convert::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("max_kv_len 8 (the add's residual rows) must equal max_q_len 7"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace add_test
}  // namespace
