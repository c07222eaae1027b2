// The positions kind (class tokens prepended, positional table added): its
// round trips (tests/kinds/round_trip.h), the int8 contract on chosen values
// and against the real formula, shorter calls, and files and specs whose
// table does not cover max_q_len + num_cls.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "converter/base/error.h"
#include "converter/cli/commands.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/write/writer.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/requant.h"
#include "round_trip.h"

namespace {

using kindtest::check_case;
using kindtest::convert_case;
namespace fb = edgeattn::fb;

TEST(Positions, RoundTripLearnedTimm) { check_case(fixtures::positions_case("learned", 51)); }
TEST(Positions, RoundTripSinusoidalTwoClassRows) { check_case(fixtures::positions_case("sinusoidal", 52)); }

// The contract on values worked out by hand (requant.h, the positions contract).
TEST(Positions, ContractOnChosenValues) {
  using edgeattn::kernels::positions_s8;
  // s_in = s_out (A = 2^16), P = 5 output steps at b = 8: 13 + 5 + zp 2 = 20.
  EXPECT_EQ(positions_s8(10, -3, 65536, 5 * 256, 8, 2), 20);
  // A = 2^15 (s_in = s_out / 2): -7 / 2 = -3.5 rounds half up to -3.
  EXPECT_EQ(positions_s8(-7, 0, 32768, 0, 16, 0), -3);
  EXPECT_EQ(positions_s8(7, 0, 32768, 0, 16, 0), 4);  // 3.5 -> 4
  // P = -0.75 step at b = 2^4 = 16 (-12 / 16) plus x - zp = 1: 0.25 -> 0, + zp -5.
  EXPECT_EQ(positions_s8(1, 0, 65536, -12, 4, -5), -5);
  // The extremes of every operand stay inside int32 and saturate.
  EXPECT_EQ(positions_s8(127, -128, edgeattn::kernels::kPositionsMaxMultiplier, 32767, 3, 127), 127);
  EXPECT_EQ(positions_s8(-128, 127, edgeattn::kernels::kPositionsMaxMultiplier, -32768, 3, -128), -128);
}

// The positions16 contract (int16 output, the residual stream): its scalar
// form against the definition in 64-bit integers (no int32 step to overflow)
// over every int8 input, at the ends of A and P for every shift n and every
// allowed b, and values worked out by hand.
int16_t positions16_64(int64_t x, int64_t zp, int64_t a, int64_t p, int b, int n) {
  const int64_t v = a * (x - zp) + p * (int64_t{1} << (n - b)) + (int64_t{1} << (n - 1));
  const int64_t y = v >= 0 ? v >> n : -((-v + (int64_t{1} << n) - 1) >> n);  // floor, spelled out
  return static_cast<int16_t>(std::clamp<int64_t>(y, -32768, 32767));
}

TEST(Positions, Contract16EqualsTheDefinition) {
  using edgeattn::kernels::positions_s16;
  // s_in = 256 s_out (A = 2^21 at n = 13), P = 100.5 steps at b = 1: 3 * 256 + 100.5 -> 869 (half up).
  EXPECT_EQ(positions_s16(3, 0, 1 << 21, 201, 1, 13), 869);
  EXPECT_EQ(positions_s16(-3, 0, 1 << 21, -201, 1, 13), -868);  // -868.5 rounds half up
  EXPECT_EQ(positions_s16(127, -128, (1 << 22) - 1, 32767, 0, 13), 32767);    // saturates
  EXPECT_EQ(positions_s16(-128, 127, (1 << 22) - 1, -32768, 0, 13), -32768);  // saturates
  const int32_t as[] = {0, 1, 4097, 1 << 20, (1 << 22) - 1};
  const int32_t ps[] = {-32768, -32767, -1, 0, 1, 12345, 32767};
  for (int n = edgeattn::kernels::kPositions16MinShift; n <= edgeattn::kernels::kPositions16MaxShift; ++n) {
    for (int b = std::max(0, n - edgeattn::kernels::kPositions16MaxTableShift); b <= n; ++b) {
      for (const int32_t a : as) {
        for (const int32_t p : ps) {
          for (const int32_t zp : {-128, 0, 127}) {
            for (int x = -128; x <= 127; ++x) {
              ASSERT_EQ(positions_s16(x, zp, a, p, b, n), positions16_64(x, zp, a, p, b, n))
                  << "x " << x << " zp " << zp << " A " << a << " P " << p << " b " << b << " n " << n;
            }
          }
        }
      }
    }
  }
}

// The positions16-in contract (int16 input rows, Positions.input16): its
// scalar form against the definition computed in double, where every term is
// an exact integer below 2^53 (|A x| < 2^37, |P 2^(n-b)| <= 2^45) and the
// division by 2^n and the floor are exact: the int16 ends of x and P, the
// ends of A, every shift n in 1..30 and b at 0, n / 2 and n, every int16 x
// on a stride plus the ends, and values worked out by hand.
int16_t positions16_in16_double(int x, int a, int p, int b, int n) {
  const double v = static_cast<double>(a) * x + p * std::ldexp(1.0, n - b) + std::ldexp(1.0, n - 1);
  return static_cast<int16_t>(std::clamp(std::floor(std::ldexp(v, -n)), -32768.0, 32767.0));
}

TEST(Positions, Contract16In16EqualsTheDefinition) {
  using edgeattn::kernels::positions_s16_in16;
  // s_in = s_out (A = 2^21 at n = 21), P = 2.5 steps at b = 1: x + 2.5 rounds half up.
  EXPECT_EQ(positions_s16_in16(1000, 1 << 21, 5, 1, 21), 1003);
  EXPECT_EQ(positions_s16_in16(-1000, 1 << 21, -5, 1, 21), -1002);  // -1002.5 -> -1002
  // s_in = s_out / 2: 32767 / 2 = 16383.5 -> 16384; -32768 / 2 exactly.
  EXPECT_EQ(positions_s16_in16(32767, 1 << 20, 0, 21, 21), 16384);
  EXPECT_EQ(positions_s16_in16(-32768, 1 << 20, 0, 21, 21), -16384);
  // The largest A at the int16 ends (A x = +-2^37 about): saturates, never wraps.
  EXPECT_EQ(positions_s16_in16(32767, (1 << 22) - 1, 32767, 0, 30), 32767);
  EXPECT_EQ(positions_s16_in16(-32768, (1 << 22) - 1, -32768, 0, 30), -32768);
  EXPECT_EQ(positions_s16_in16(-32768, (1 << 22) - 1, 0, 0, 1), -32768);
  const int32_t as[] = {0, 1, 4097, 1 << 20, 1 << 21, (1 << 22) - 1};
  const int32_t ps[] = {-32768, -32767, -1, 0, 1, 12345, 32767};
  long compared = 0;
  for (int n = edgeattn::kernels::kPositions16MinShift; n <= edgeattn::kernels::kPositions16InMaxShift; ++n) {
    for (const int b : {0, n / 2, n}) {
      for (const int32_t a : as) {
        for (const int32_t p : ps) {
          for (int x = -32768; x <= 32767; x += (x < -32760 || x > 32760) ? 1 : 251) {
            ASSERT_EQ(positions_s16_in16(x, a, p, b, n), positions16_in16_double(x, a, p, b, n))
                << "x " << x << " A " << a << " P " << p << " b " << b << " n " << n;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 30L * 3 * 6 * 7 * 260);
}

// Aligned copy of a model file for Model::Load.
struct Bytes {
  std::vector<uint64_t> words;
  size_t size;
  explicit Bytes(const std::vector<uint8_t>& b) : words((b.size() + 7) / 8), size(b.size()) {
    std::memcpy(words.data(), b.data(), b.size());
  }
};

// Every int8 input value through a 1-row call: the runtime's output is the
// real (s_in (x - zp_in) + pos) / s_out + zp_out rounded, within the
// contract's bound of A's and P's roundings (0.5 + 255 2^-17 + 2^-(b+1)
// output steps), wherever it does not saturate; class rows are the converter's
// rounding of cls + pos.
TEST(Positions, Int8WithinTheContractsBoundOfTheRealSum) {
  const fixtures::LayerCase c = fixtures::positions_case("learned", 53);
  const std::vector<uint8_t> file = edgeattn::convert::read_file(convert_case(c, "int8"));
  const Bytes b(file);
  edgeattn::Model model;
  ASSERT_EQ(model.Load(b.words.data(), b.size), edgeattn::Status::kOk) << model.error();
  edgeattn::LayerInfo info;
  ASSERT_EQ(model.GetLayerInfo(0, &info), edgeattn::Status::kOk);
  EXPECT_EQ(info.added_rows, 1);
  EXPECT_EQ(info.kind, EA_LAYER_POSITIONS);
  const fb::Positions* p = fb::GetModel(b.words.data())->layers()->Get(0)->options_as_Positions();
  const int bits = p->pos_bits();
  const double s_in = info.query_quant.scale, s_out = info.output_quant.scale;
  const int zp_in = info.query_quant.zero_point, zp_out = info.output_quant.zero_point;
  // (+1e-6: the converter's A and P come from the float64 scales, this from the file's float32 ones.)
  const double bound = 0.5 + 255.0 / 131072.0 + std::ldexp(1.0, -(bits + 1)) + 1e-6;
  const int D = 12;
  const fixtures::Array& cls = c.weights[0].second;
  const fixtures::Array& pos = c.weights[1].second;
  std::vector<uint8_t> arena(model.arena_bytes() + 64);
  edgeattn::Interpreter interp;
  void* a = arena.data() + (64 - reinterpret_cast<uintptr_t>(arena.data()) % 64) % 64;
  ASSERT_EQ(interp.Init(&model, a, model.arena_bytes()), edgeattn::Status::kOk) << interp.error();
  int checked = 0;
  for (int v = -128; v <= 127; v += 1) {
    std::vector<int8_t> x(static_cast<size_t>(7) * D), y(static_cast<size_t>(8) * D);
    for (size_t k = 0; k < x.size(); ++k) {  // v and its neighbours, so every value meets every column
      const int q = v + static_cast<int>(k % 3) - 1;
      x[k] = static_cast<int8_t>(q < -128 ? -128 : (q > 127 ? 127 : q));
    }
    edgeattn::RunArgs r = {};
    r.query = x.data();
    r.q_len = 7;
    r.output = y.data();
    ASSERT_EQ(interp.Run(0, r), edgeattn::Status::kOk) << interp.error();
    for (int row = 0; row < 8; ++row) {
      for (int k = 0; k < D; ++k) {
        const double px = pos.data[static_cast<size_t>(row) * D + k];
        const double src = row == 0 ? cls.data[static_cast<size_t>(k)] : s_in * (x[static_cast<size_t>(row - 1) * D + k] - zp_in);
        const double real = (src + px) / s_out + zp_out;
        const int got = y[static_cast<size_t>(row) * D + k];
        if (real <= -128.0 - bound || real >= 127.0 + bound) continue;  // saturates (checked below)
        const double allowed = row == 0 ? 0.5 + 1e-6 : bound;  // class rows: one rounding in float64
        ASSERT_LE(std::fabs(got - (real < -128.0 ? -128.0 : real > 127.0 ? 127.0 : real)), allowed)
            << "v " << v << " row " << row << " col " << k;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 256 * 7 * D / 2);
  // Beyond the output range: saturated, never wrapped.
  std::vector<int8_t> hi(static_cast<size_t>(7) * D, 127), y(static_cast<size_t>(8) * D);
  edgeattn::RunArgs r = {};
  r.query = hi.data();
  r.q_len = 7;
  r.output = y.data();
  ASSERT_EQ(interp.Run(0, r), edgeattn::Status::kOk) << interp.error();
  for (int row = 1; row < 8; ++row) {
    for (int k = 0; k < D; ++k) {
      const double real = (s_in * (127 - zp_in) + pos.data[static_cast<size_t>(row) * D + k]) / s_out + zp_out;
      if (real > 127.5 + bound) {
        EXPECT_EQ(y[static_cast<size_t>(row) * D + k], 127);
      }
    }
  }
}

// A call with fewer rows than max_q_len: q_len + num_cls rows, the same as
// the first rows of a full call (positions depend on the row, not the length).
TEST(Positions, ShorterCallsGiveTheSameLeadingRows) {
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(dtype);
    const fixtures::LayerCase c = fixtures::positions_case("sinusoidal", 54);
    const std::vector<uint8_t> file = edgeattn::convert::read_file(convert_case(c, dtype));
    const Bytes b(file);
    edgeattn::Model model;
    ASSERT_EQ(model.Load(b.words.data(), b.size), edgeattn::Status::kOk) << model.error();
    const size_t es = dtype == "int8" ? 1 : 4, D = 12;
    std::vector<uint8_t> arena(model.arena_bytes() + 64);
    void* a = arena.data() + (64 - reinterpret_cast<uintptr_t>(arena.data()) % 64) % 64;
    edgeattn::Interpreter interp;
    ASSERT_EQ(interp.Init(&model, a, model.arena_bytes()), edgeattn::Status::kOk) << interp.error();
    std::vector<float> x(7 * D);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k % 11) - 5);
    std::vector<float> full(9 * D), part(9 * D, -7.0f);  // float storage, int8 uses the first bytes
    edgeattn::RunArgs r = {};
    r.query = x.data();
    r.q_len = 7;
    r.output = full.data();
    ASSERT_EQ(interp.Run(0, r), edgeattn::Status::kOk) << interp.error();
    r.q_len = 3;
    r.output = part.data();
    ASSERT_EQ(interp.Run(0, r), edgeattn::Status::kOk) << interp.error();
    EXPECT_EQ(std::memcmp(full.data(), part.data(), 5 * D * es), 0);  // 2 class rows + 3
    // Past them the call wrote nothing.
    std::vector<float> untouched(9 * D, -7.0f);
    EXPECT_EQ(std::memcmp(reinterpret_cast<uint8_t*>(part.data()) + 5 * D * es,
                          reinterpret_cast<uint8_t*>(untouched.data()) + 5 * D * es, 9 * D * 4 - 5 * D * es), 0);
  }
}

// A file whose table has fewer rows than max_q_len + num_cls is refused at
// load, naming both counts (its max_q_len raised by one after conversion).
TEST(Positions, TableShorterThanTheRowsIsRefusedAtLoad) {
  for (const std::string dtype : {"int8", "f32"}) {
    SCOPED_TRACE(dtype);
    const fixtures::LayerCase c = fixtures::positions_case("learned", 55);
    const std::vector<uint8_t> good = edgeattn::convert::read_file(convert_case(c, dtype));
    std::vector<uint8_t> bad(good.begin(), good.end() - 4);
    auto* m = flatbuffers::GetMutableRoot<fb::Model>(bad.data());
    auto* layer = const_cast<fb::Layer*>(m->layers()->Get(0));
    ASSERT_TRUE(layer->mutate_max_q_len(8));
    edgeattn::convert::append_file_crc32(&bad);
    const Bytes b(bad);
    edgeattn::Model model;
    EXPECT_EQ(model.Load(b.words.data(), b.size), edgeattn::Status::kInvalidModel);
    const std::string msg = model.error();
    EXPECT_NE(msg.find("layer 'tok'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("positional table has 8 rows, max_q_len 8 + num_cls 1 output rows need 9"), std::string::npos)
        << msg;
    // The good file loads.
    const Bytes g(good);
    edgeattn::Model ok;
    EXPECT_EQ(ok.Load(g.words.data(), g.size), edgeattn::Status::kOk) << ok.error();
  }
}

// The converter says the same before writing: max_q_len 8 needs 9 table rows.
TEST(Positions, SpecBeyondTheTableIsAConvertError) {
  fixtures::LayerCase c = fixtures::positions_case("learned", 56);
  c.spec_json = R"({"model": "m", "layers": [{"name": "tok", "kind": "positions", "max_q_len": 8}]})";
  try {
    convert_case(c, "f32");
    ADD_FAILURE() << "converted";
  } catch (const edgeattn::convert::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("'pos_embed' has 8 rows, 8 input rows + 1 class rows need 9"),
              std::string::npos)
        << e.what();
  }
}

// Spec errors name the field: an unknown table, num_cls against the tensor.
TEST(Positions, SpecErrorsNameTheField) {
  const auto error_of = [](const std::string& layer_fields) {
    fixtures::LayerCase c = fixtures::positions_case("learned", 57);
    c.spec_json = R"({"model": "m", "layers": [{"name": "tok", "kind": "positions", "max_q_len": 7, )" +
                  layer_fields + "}]}";
    try {
      convert_case(c, "f32");
    } catch (const edgeattn::convert::ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("converted");
  };
  std::string msg = error_of(R"("table": "rotary")");
  EXPECT_NE(msg.find("field 'table' must be \"learned\""), std::string::npos) << msg;
  msg = error_of(R"("num_cls": 2)");
  EXPECT_NE(msg.find("tensor 'cls_token' holds 1 class token, the spec's num_cls is 2"), std::string::npos) << msg;
  msg = error_of(R"("num_cls": -1)");
  EXPECT_NE(msg.find("field 'num_cls' must be an integer in 0..65535"), std::string::npos) << msg;
  msg = error_of(R"("num_cls": 0)");  // the class token is then unused
  EXPECT_NE(msg.find("cls_token"), std::string::npos) << msg;
}

}  // namespace
