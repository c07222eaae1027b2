// The row_pool kind (a sequence to its first row or the mean of its valid
// rows): its round trips (tests/kinds/round_trip.h), the row-mean contract
// against the test's own 64-bit integers, "first" as an exact copy, the
// valid rows of a call, and what a bad spec says.
#include <gtest/gtest.h>

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
namespace row_pool_test {  // tests/CMakeLists.txt: unity builds

using kindtest::check_case;
using kindtest::convert_case;
namespace fb = edgeattn::fb;

TEST(RowPool, RoundTripFirst) { check_case(fixtures::row_pool_case("first", 61)); }
TEST(RowPool, RoundTripMean) { check_case(fixtures::row_pool_case("mean", 62)); }

// floor((2^16 s + floor(n / 2)) / n) in 64 bits, the contract's definition.
int64_t mean_q16_64(int64_t s, int64_t n) {
  const int64_t num = s * 65536 + n / 2;
  int64_t q = num / n;
  if (num % n != 0 && num < 0) --q;  // C++ truncates: make it a floor
  return q;
}

// The 32-bit form in requant.h equals the definition on every sum of every
// tested length (all sums for short rows, the ends and a stride for long ones).
TEST(RowPool, MeanQ16EqualsTheDefinition) {
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(5, 2), 163840);     // 2.5 exactly
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(1, 3), 21845);      // 21845.33
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(2, 3), 43691);      // 43690.67
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(-1, 3), -21845);    // -21845.33
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(-2, 3), -43691);    // -43690.67
  EXPECT_EQ(edgeattn::kernels::row_mean_q16(-255, 1), -255 * 65536);
  for (const int n : {1, 2, 3, 7, 64, 197, 1000, 4099, 65534, 65535}) {
    const int64_t top = int64_t{255} * n;
    const int64_t step = n <= 64 ? 1 : top / 20011 + 1;
    for (int64_t s = -top; s <= top; s += step) {
      ASSERT_EQ(edgeattn::kernels::row_mean_q16(static_cast<int32_t>(s), n), mean_q16_64(s, n)) << s << " / " << n;
    }
    for (const int64_t s : {-top, -top + 1, int64_t{-1}, int64_t{0}, int64_t{1}, top - 1, top}) {
      ASSERT_EQ(edgeattn::kernels::row_mean_q16(static_cast<int32_t>(s), n), mean_q16_64(s, n)) << s << " / " << n;
    }
  }
}

// Row-mean contract 16 (int16 rows of the residual stream, the mean in 2^-8
// input steps): row_mean_q(s, n, 8) against floor((2^8 s + floor(n / 2)) / n)
// in 64 bits, over sums up to 2^15 n in magnitude (n up to 65535: |s| < 2^31).
int64_t mean_q8_64(int64_t s, int64_t n) {
  const int64_t num = s * 256 + n / 2;
  int64_t q = num / n;
  if (num % n != 0 && num < 0) --q;
  return q;
}

TEST(RowPool, MeanQ8OfInt16RowsEqualsTheDefinition) {
  using edgeattn::kernels::row_mean_q;
  EXPECT_EQ(row_mean_q(5, 2, 8), 640);        // 2.5 * 256
  EXPECT_EQ(row_mean_q(-1, 3, 8), -85);       // -85.33
  EXPECT_EQ(row_mean_q(-32768, 1, 8), -32768 * 256);
  for (const int n : {1, 2, 3, 7, 64, 197, 1000, 4099, 65534, 65535}) {
    const int64_t top = int64_t{32768} * n - (n == 65535 ? 1 : 0);  // |sum| <= 2^15 n, inside int32
    const int64_t step = n <= 2 ? 1 : top / 30011 + 1;
    for (int64_t s = -top; s <= top; s += step) {
      ASSERT_EQ(row_mean_q(static_cast<int32_t>(s), n, 8), mean_q8_64(s, n)) << s << " / " << n;
    }
    for (const int64_t s : {-top, -top + 1, int64_t{-1}, int64_t{0}, int64_t{1}, top - 1, top}) {
      ASSERT_EQ(row_mean_q(static_cast<int32_t>(s), n, 8), mean_q8_64(s, n)) << s << " / " << n;
    }
  }
}

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
  const fb::RowPool* options() const { return fb::GetModel(words.data())->layers()->Get(0)->options_as_RowPool(); }
};

// "first" keeps its input's quantization: the output bytes are row 0's.
TEST(RowPool, FirstIsAnExactCopyOfTheClassRow) {
  Loaded m(convert_case(fixtures::row_pool_case("first", 63), "int8"));
  edgeattn::LayerInfo info;
  ASSERT_EQ(m.model.GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.query_dim, 0);
  EXPECT_EQ(info.cross, 1);
  EXPECT_EQ(info.num_heads, 0);
  EXPECT_EQ(info.added_rows, 0);
  EXPECT_EQ(std::memcmp(&info.key_quant, &info.output_quant, sizeof(info.key_quant)), 0);
  std::vector<int8_t> x(9 * 10), y(10);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<int8_t>(static_cast<int>(k * 37 % 256) - 128);
  edgeattn::RunArgs a = {};
  a.key = x.data();
  a.kv_len = 9;
  a.kv_valid_len = 4;
  a.output = y.data();
  ASSERT_EQ(m.interp.Run(0, a), edgeattn::Status::kOk) << m.interp.error();
  EXPECT_EQ(std::memcmp(x.data(), y.data(), 10), 0);
  // No attention weights to give.
  std::vector<uint16_t> w(9);
  a.attn_weights = w.data();
  EXPECT_EQ(m.interp.Run(0, a), edgeattn::Status::kInvalidArgument);
}

// "mean" over the call's valid rows, against the contract in the test's own
// 64-bit integers (kv_valid_len <= 0: every row).
TEST(RowPool, MeanOverTheValidRowsIsTheContract) {
  Loaded m(convert_case(fixtures::row_pool_case("mean", 64), "int8"));
  const fb::RowPool* p = m.options();
  ASSERT_EQ(p->mode(), fb::RowPoolMode::Mean);
  const int64_t zp_in = p->input()->zero_point(), zp_out = p->output()->zero_point();
  const int64_t mult = p->requant()->multiplier()->Get(0);
  const int shift = 31 - p->requant()->shift()->Get(0);
  std::vector<int8_t> x(9 * 10), y(10);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<int8_t>(static_cast<int>(k * 53 % 256) - 128);
  for (const int valid : {0, 1, 2, 5, 9}) {
    edgeattn::RunArgs a = {};
    a.key = x.data();
    a.kv_len = 9;
    a.kv_valid_len = valid;
    a.output = y.data();
    ASSERT_EQ(m.interp.Run(0, a), edgeattn::Status::kOk) << m.interp.error();
    const int n = valid <= 0 ? 9 : valid;
    for (int c = 0; c < 10; ++c) {
      int64_t s = 0;
      for (int j = 0; j < n; ++j) s += x[static_cast<size_t>(j) * 10 + c] - zp_in;
      const int64_t q = mean_q16_64(s, n);
      int64_t want = ((q * mult + (int64_t{1} << (shift - 1))) >> shift) + zp_out;
      want = want < -128 ? -128 : (want > 127 ? 127 : want);
      EXPECT_EQ(y[static_cast<size_t>(c)], want) << "valid " << valid << " column " << c;
    }
  }
}

TEST(RowPool, BadModeIsASpecError) {
  fixtures::LayerCase c = fixtures::row_pool_case("first", 65);
  c.spec_json = R"({"model": "m", "layers": [{"name": "pool", "kind": "row_pool", "mode": "max", "dim": 10,
    "max_kv_len": 9}]})";
  try {
    convert_case(c, "f32");
    ADD_FAILURE() << "converted";
  } catch (const edgeattn::convert::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'mode' must be \"first\" (the class row) or \"mean\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace row_pool_test
}  // namespace
