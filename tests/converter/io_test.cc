// .npy/.npz and .safetensors readers and writers.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <functional>

#include "converter/model/dataset.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/formats.h"
#include "converter/io/half.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/kinds/mha.h"
#include "fixtures.h"

namespace {

using namespace edgeattn::convert;

// Expects `f` to throw ConvertError (not any other exception) whose message
// contains every one of `parts`.
void expect_convert_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const ConvertError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ConvertError: " << e.what();
  }
}

// A .safetensors file with a raw JSON header and `data_bytes` zero bytes of data.
std::string write_raw_safetensors(const std::string& dir, const std::string& header, size_t data_bytes) {
  std::string h = header;
  while (h.size() % 8 != 0) h += ' ';
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(uint64_t{h.size()} >> (8 * i));
  out.insert(out.end(), h.begin(), h.end());
  out.resize(out.size() + data_bytes, 0);
  const std::string path = dir + "/raw.safetensors";
  write_file_atomic(path, out.data(), out.size());
  return path;
}

// A .npy image of dtype <f4 with a raw shape text and `values` float32 zeros.
std::vector<uint8_t> raw_npy(const std::string& shape, size_t values) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(h.size() & 0xFF),
                              static_cast<uint8_t>(h.size() >> 8)};
  out.insert(out.end(), h.begin(), h.end());
  out.resize(out.size() + 4 * values, 0);
  return out;
}

TEST(ConverterIo, HalfAndBfloat16) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  for (float f : {0.0f, 1.0f, -0.333251953125f, 65504.0f, 6.103515625e-05f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), f);
  }
}

TEST(ConverterIo, NpzRoundTripEveryDtype) {
  const std::string dir = fixtures::temp_dir("npz");
  const std::vector<double> v = {0.0, 1.5, -2.25, 1024.0, -7.0, 3.0};
  std::vector<std::pair<std::string, Array>> entries;
  const std::vector<double> iv = {0.0, 1.0, -2.0, 1024.0, -7.0, 2147483647.0};
  for (const char* dt : {"<f2", "<f4", "<f8", "<i4", "<i8"}) {
    entries.emplace_back(std::string("x") + dt, fixtures::make(dt, {2, 3}, dt[1] == 'i' ? iv : v));
  }
  entries.emplace_back("scalar_vec", fixtures::make("<f4", {1}, {4.0}));
  save_npz(dir + "/a.npz", entries);
  const ArrayMap m = load_npz(dir + "/a.npz");
  ASSERT_EQ(m.size(), entries.size());
  for (const auto& [k, a] : entries) {
    ASSERT_TRUE(m.count(k)) << k;
    EXPECT_EQ(m.at(k).shape, a.shape) << k;
    EXPECT_EQ(m.at(k).data, a.data) << k;
    EXPECT_EQ(m.at(k).is_float, a.dtype[1] == 'f') << k;
  }
}

TEST(ConverterIo, NpyRejectsFortranOrderAndUnknownDtype) {
  Array a = fixtures::make("<f4", {2, 2}, {1, 2, 3, 4});
  std::vector<uint8_t> b = make_npy(a);
  std::string s(b.begin(), b.end());
  const size_t p = s.find("False");
  std::memcpy(b.data() + p, "True ", 5);
  EXPECT_THROW(parse_npy(b.data(), b.size(), "x"), ConvertError);
  b = make_npy(a);
  s.assign(b.begin(), b.end());
  std::memcpy(b.data() + s.find("<f4"), "<u2", 3);
  try {
    parse_npy(b.data(), b.size(), "f.npz: key 'k'");
    FAIL();
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported dtype '<u2'"), std::string::npos) << e.what();
  }
  b = make_npy(a);
  b.resize(b.size() - 3);
  EXPECT_THROW(parse_npy(b.data(), b.size(), "x"), ConvertError);
}

TEST(ConverterIo, SafetensorsRoundTripFloatTypes) {
  const std::string dir = fixtures::temp_dir("st");
  const std::vector<double> v = {0.5, -1.0, 2.0, 0.25, -0.125, 8.0};
  std::vector<std::pair<std::string, Array>> t;
  for (const char* dt : {"F32", "F16", "BF16", "F64", "I64"}) t.emplace_back(dt, fixtures::make(dt, {3, 2}, v));
  save_safetensors(dir + "/w.safetensors", t);
  const ArrayMap m = load_safetensors(dir + "/w.safetensors");
  for (const char* dt : {"F32", "F16", "BF16", "F64"}) {
    EXPECT_TRUE(m.at(dt).is_float);
    EXPECT_EQ(m.at(dt).data, v) << dt;
    EXPECT_EQ(m.at(dt).shape, (std::vector<size_t>{3, 2}));
  }
  EXPECT_FALSE(m.at("I64").is_float);
}

TEST(ConverterIo, SafetensorsTruncatedAndMissing) {
  const std::string dir = fixtures::temp_dir("st_bad");
  save_safetensors(dir + "/w.safetensors", {{"a", fixtures::make("F32", {64}, std::vector<double>(64, 1.0))}});
  std::vector<uint8_t> b = read_file(dir + "/w.safetensors");
  for (size_t keep : {size_t{4}, size_t{20}, b.size() - 1}) {
    std::vector<uint8_t> part(b.begin(), b.begin() + static_cast<long>(keep));
    write_file_atomic(dir + "/t.safetensors", part.data(), part.size());
    try {
      load_safetensors(dir + "/t.safetensors");
      FAIL() << keep;
    } catch (const ConvertError& e) {
      EXPECT_NE(std::string(e.what()).find("truncated safetensors"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(load_safetensors(dir + "/nope.safetensors"), ConvertError);
}

// F2: numel() * dtype_size wrapped (2^61 * 4 * 4 bytes = 2^65 -> 0) and the
// tensor was accepted with empty data, or died in vector::resize.
TEST(ConverterIoRegression, SafetensorsShapeOverflowIsRejected) {
  const std::string dir = fixtures::temp_dir("st_overflow");
  for (const char* dtype : {"F32", "I32", "F64", "I64"}) {
    SCOPED_TRACE(dtype);
    const std::string path = write_raw_safetensors(
        dir, std::string("{\"w\":{\"dtype\":\"") + dtype +
                 "\",\"shape\":[2305843009213693952,4],\"data_offsets\":[0,0]}}", 0);
    expect_convert_error([&] { load_safetensors(path); }, {path, "tensor 'w'", "0 bytes for"});
  }
  // The product of the dimensions overflows on its own (2^32 * 2^32).
  const std::string path = write_raw_safetensors(
      dir, "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", 0);
  expect_convert_error([&] { load_safetensors(path); }, {path, "tensor 'w'", "too large"});
  // A byte count that is not a multiple of the element size.
  const std::string odd = write_raw_safetensors(
      dir, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,5]}}", 5);
  expect_convert_error([&] { load_safetensors(odd); }, {odd, "tensor 'w'"});
  // Empty tensors stay valid.
  const std::string empty = write_raw_safetensors(
      dir, "{\"w\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[0,0]}}", 0);
  const ArrayMap m = load_safetensors(empty);
  EXPECT_EQ(m.at("w").shape, (std::vector<size_t>{0, 4}));
  EXPECT_TRUE(m.at("w").data.empty());
}

// F5: shape / data_offsets entries that are not unsigned integers went
// through a float->integer (or signed->unsigned) conversion (UB when out of
// range), e.g. 461168601842731409784 which nlohmann parses as a double.
TEST(ConverterIoRegression, SafetensorsNonUnsignedHeaderNumbersAreRejected) {
  const std::string dir = fixtures::temp_dir("st_float");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[461168601842731409784,4]", "[0,0]"}, {"[-1]", "[0,4]"},  {"[1.5]", "[0,4]"},
      {"[1e3]", "[0,4000]"},                  {"[1]", "[0,4.0]"}, {"[1]", "[-4,0]"},
      {"[1]", "[0,1e30]"},                    {"[\"1\"]", "[0,4]"}, {"4", "[0,4]"},
      {"[1]", "{\"a\":4}"},                   {"[true]", "[0,4]"}};
  for (const auto& [shape, off] : bad) {
    SCOPED_TRACE(shape + " " + off);
    const std::string path = write_raw_safetensors(
        dir, "{\"t\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + off + "}}", 4000);
    expect_convert_error([&] { load_safetensors(path); }, {path, "tensor 't'", "malformed header entry"});
  }
  const std::string missing = write_raw_safetensors(dir, "{\"t\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4);
  expect_convert_error([&] { load_safetensors(missing); }, {missing, "tensor 't'", "malformed header entry"});
}

// F3: the .npy element count wrapped (6148914691236517206 * 3 = 2 mod 2^64),
// so 2 values were accepted for a [6148914691236517206, 1, 3] array and
// calibration read far past them (heap-buffer-overflow).
TEST(ConverterIoRegression, NpyShapeOverflowIsRejected) {
  for (const char* shape : {"(6148914691236517206, 1, 3)", "(4294967296, 4294967296)",
                            "(4294967296, 0, 4294967296)", "(18446744073709551615, 2)"}) {
    SCOPED_TRACE(shape);
    const std::vector<uint8_t> b = raw_npy(shape, 2);
    expect_convert_error([&] { parse_npy(b.data(), b.size(), "c.npz: key 'p.key'"); },
                         {"c.npz: key 'p.key'", "too large"});
  }
  // Through load_npz, as in tests/fuzz/repro/npy-shape-overflow.
  const std::string dir = fixtures::temp_dir("npz_overflow");
  save_npz(dir + "/calib.npz", {{"p.key", fixtures::make("<f4", {6148914691236517206u, 1, 3}, {1.0, 2.0})}});
  expect_convert_error([&] { load_npz(dir + "/calib.npz"); }, {dir + "/calib.npz", "key 'p.key'", "too large"});
  // Largest single entry parses (then the data is too short).
  const std::vector<uint8_t> b = raw_npy("(18446744073709551615,)", 2);
  expect_convert_error([&] { parse_npy(b.data(), b.size(), "c.npz: key 'k'"); }, {"c.npz: key 'k'", "truncated"});
}

// F4: a shape entry with more than 20 digits made std::stoull throw
// std::out_of_range (CLI printed just "error: stoull").
TEST(ConverterIoRegression, NpyHugeShapeEntryIsRejected) {
  for (const char* shape : {"(18446744073709551616,)", "(123456789012345678901234567890, 2)",
                            "(1, 99999999999999999999999999999999999999999)"}) {
    SCOPED_TRACE(shape);
    const std::vector<uint8_t> b = raw_npy(shape, 2);
    expect_convert_error([&] { parse_npy(b.data(), b.size(), "c.npz: key 'x'"); },
                         {"c.npz: key 'x'", "shape entry", "too large"});
  }
}

// load_layer_data cast dimensions to int without a range check.
TEST(ConverterIoRegression, LayerDataRejectsDimensionsAboveIntMax) {
  FloatLayer L;
  L.name = "p";
  L.kind = &kinds::kind_mha;
  L.params.emplace<MhaParams>();
  L.max_q_len = L.max_kv_len = INT_MAX;
  L.query_dim = L.key_dim = L.value_dim = L.output_dim = 0;  // empty arrays, huge N / L
  const size_t big = size_t{INT_MAX} + 1;
  for (const std::vector<size_t>& shape : {std::vector<size_t>{big, 1, 0}, std::vector<size_t>{1, big, 0},
                                           std::vector<size_t>{size_t{1} << 40, 1, 0}}) {
    SCOPED_TRACE(shape_string(shape));
    ArrayMap npz;
    npz["p.query"] = fixtures::make("<f4", shape, {});
    expect_convert_error([&] { load_layer_data(npz, "calib.npz", L, false); },
                         {"calib.npz", "p.query", "too large"});
  }
  // Cross attention: the key array is checked too.
  L.as<MhaParams>().cross = true;
  L.query_dim = 1;
  ArrayMap npz;
  npz["p.query"] = fixtures::make("<f4", {1, 1, 1}, {0.5});
  npz["p.key"] = fixtures::make("<f4", {1, big, 0}, {});
  expect_convert_error([&] { load_layer_data(npz, "calib.npz", L, false); }, {"calib.npz", "p.key", "too large"});
}

TEST(ConverterIo, AtomicWriteLeavesNoTempOnFailure) {
  EXPECT_THROW(write_file_atomic("/nonexistent_dir_ea/x.eatn", "x", 1), ConvertError);
  const std::string dir = fixtures::temp_dir("atomic");
  write_file_atomic(dir + "/f", "abc", 3);
  EXPECT_EQ(read_file(dir + "/f").size(), 3u);
}

// Formats by their bytes (issue 12): the 8 bytes of a zip's local header read
// as a safetensors header length gave "header of 85966670672 bytes".
TEST(Formats, DetectedByBytes) {
  const auto detect = [](std::vector<uint8_t> b, const std::string& members = "") {
    return detect_format(b.data(), b.size(), members);
  };
  std::vector<uint8_t> st = {0x10, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
  EXPECT_EQ(detect(st), FileFormat::kSafetensors);
  const std::vector<uint8_t> pk = {'P', 'K', 3, 4, 20, 0, 0, 0, 0, 0};
  EXPECT_EQ(detect(pk, "a.npy\nb.npy\n"), FileFormat::kNpz);
  EXPECT_EQ(detect(pk, "archive/data.pkl\narchive/data/0\narchive/version\n"), FileFormat::kTorchZip);
  EXPECT_EQ(detect(pk, "model/data.pkl\n"), FileFormat::kTorchZip);
  EXPECT_EQ(detect(pk, "readme.txt\n"), FileFormat::kZip);
  EXPECT_EQ(detect({'P', 'K', 5, 6, 0, 0}), FileFormat::kNpz);  // numpy.savez() with no arrays
  // No central directory (cut short): the first local header's name decides.
  std::vector<uint8_t> local(30, 0);
  std::memcpy(local.data(), "PK\x03\x04", 4);
  const std::string name = "archive/data.pkl";
  local[26] = static_cast<uint8_t>(name.size());
  local.insert(local.end(), name.begin(), name.end());
  EXPECT_EQ(detect(local), FileFormat::kTorchZip);
  EXPECT_EQ(detect({0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'}),
            FileFormat::kTorchLegacy);
  EXPECT_EQ(detect({0x80, 0x04, 0x95, 14, 0, 0, 0, 0, 0, 0, 0, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a,
                    0xa8, 0x50, 0x19, '.'}),
            FileFormat::kTorchLegacy);  // protocol 4: FRAME before the magic
  EXPECT_EQ(detect({0x80, 0x05, '}', '.'}), FileFormat::kPickle);
  EXPECT_EQ(detect({0x80, 0x06, '}', '.'}), FileFormat::kUnknown);  // no such pickle protocol
  EXPECT_EQ(detect({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}), FileFormat::kNpy);
  EXPECT_EQ(detect({'h', 'e', 'l', 'l', 'o'}), FileFormat::kUnknown);
  EXPECT_EQ(detect({'P'}), FileFormat::kUnknown);
}

}  // namespace
