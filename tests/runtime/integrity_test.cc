// Whole-file integrity (format 3): a model file ends in the CRC-32 of every
// byte before it, and Model::Load checks it before reading anything else.
// Every single-bit flip of a small model file, and of every byte outside the
// weight blob of every converted model (the weight blob sampled), must be
// refused with a message naming the checksum; none may load. A file of the
// previous format (no checksum; integrity_v2_pooling_int8.eatn, written by
// the format-2 converter) must still get EA_VERSION_MISMATCH.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.h"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "flatbuffers/flatbuffers.h"
#include "runtime/src/crc32.h"
#include "test_models.h"

namespace fb = edgeattn::fb;
using edgeattn::Model;
using edgeattn::Status;
using eatest::AlignedBuffer;

namespace {

AlignedBuffer ReadModel(const std::string& name) {
  AlignedBuffer b;
  EXPECT_TRUE(eatest::ReadFile(eatest::ModelPath(name), &b)) << eatest::ModelPath(name);
  return b;
}

uint32_t Tail32(const AlignedBuffer& b) {
  const uint8_t* p = b.data() + b.size() - 4;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// Byte offset of Model.format_version in the file.
size_t VersionOffset(const AlignedBuffer& b) {
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(fb::GetModel(b.data()));
  const uint8_t* p = table->GetAddressOf(fb::Model::VT_FORMAT_VERSION);
  EXPECT_NE(p, nullptr);
  return static_cast<size_t>(p - b.data());
}

struct SweepStats {
  long flips = 0, crc = 0, identifier = 0, in_version = 0;
};

// Flips bit `bit` of byte `pos` in `b` (restored afterwards) and expects a
// refusal naming the checksum: EA_CRC_MISMATCH, except bytes 4..7 (the
// identifier: EA_INVALID_MODEL, "not an edgeattn model ... checksum"). A
// version turned into 1 or 2 is not taken for an old file (format 3 writes
// no data_crc32, which an intact old file has).
void ExpectRefused(AlignedBuffer& b, size_t pos, int bit, size_t version_at, const std::string& name,
                   SweepStats* stats, int* failures) {
  b.data()[pos] ^= static_cast<uint8_t>(1u << bit);
  Model m;
  const Status s = m.Load(b.data(), b.size());
  const std::string msg = m.error();
  b.data()[pos] ^= static_cast<uint8_t>(1u << bit);
  ++stats->flips;
  const Status want = pos >= 4 && pos < 8 ? Status::kInvalidModel : Status::kCrcMismatch;
  stats->in_version += pos >= version_at && pos < version_at + 4;
  const bool ok = s == want && !m.loaded() && msg.find("checksum") != std::string::npos;
  if (!ok && ++*failures <= 10) {
    ADD_FAILURE() << name << ": bit " << bit << " of byte " << pos << " / " << b.size() << " -> "
                  << edgeattn::status_string(s) << " (" << msg << "), want " << edgeattn::status_string(want)
                  << " and a message naming the checksum";
  }
  stats->crc += s == Status::kCrcMismatch;
  stats->identifier += s == Status::kInvalidModel;
}

// Every bit of every byte for which `all(pos)` holds, one bit (pos % 8) of
// the others for which `some(pos)` holds.
template <typename AllBits, typename SomeBits>
SweepStats Sweep(const std::string& name, AllBits all, SomeBits some) {
  AlignedBuffer b = ReadModel(name);
  SweepStats stats;
  if (b.size() == 0) return stats;
  Model intact;
  EXPECT_EQ(intact.Load(b.data(), b.size()), Status::kOk) << name << ": " << intact.error();
  const size_t version_at = VersionOffset(b);
  int failures = 0;
  for (size_t pos = 0; pos < b.size() && failures <= 10; ++pos) {
    if (all(pos)) {
      for (int bit = 0; bit < 8; ++bit) ExpectRefused(b, pos, bit, version_at, name, &stats, &failures);
    } else if (some(pos)) {
      ExpectRefused(b, pos, static_cast<int>(pos % 8), version_at, name, &stats, &failures);
    }
  }
  std::printf("%s: %zu bytes, %ld flips refused (%ld checksum mismatch, %ld identifier; %ld in the version)\n",
              name.c_str(), b.size(), stats.flips, stats.crc, stats.identifier, stats.in_version);
  return stats;
}

// The whole of a small file: every bit of every byte, padding included.
TEST(Integrity, EveryBitFlipOfASmallModelIsRefused) {
  for (const char* name : {"pooling_int8", "pooling_f32"}) {
    const std::string path = eatest::ModelPath(name);
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
    } else {
      GTEST_SKIP() << path << " not built (models/pooling absent)";
    }
    const SweepStats s = Sweep(name, [](size_t) { return true; }, [](size_t) { return true; });
    const AlignedBuffer b = ReadModel(name);
    EXPECT_EQ(s.flips, static_cast<long>(8 * b.size())) << name;
    EXPECT_EQ(s.identifier, 32) << name;  // 4 identifier bytes x 8 bits
    EXPECT_EQ(s.in_version, 32) << name;
  }
}

// Every converted model (bundled and fixtures; the _notile twin differs from
// transformer_int8 in one flag): every bit of every byte outside the weight
// blob (the FlatBuffer tables, strings, padding and the checksum itself), and
// one bit of every 61st weight byte (the CRC treats every position alike; a
// full sweep of the 190 KB transformer_f32 would CRC 290 GB). Each flip
// re-checksums the whole file, so a model whose sweep would checksum more
// than kSweepBudget bytes (models/encoder_block: 300 KB of weights and 50
// tables) is swept at a stride: one bit (rotating) of every s-th byte
// outside the weights and of every 61 s-th weight byte. That keeps the sweep
// seconds long under ASan and qemu; it loses nothing a CRC could miss, since
// CRC-32 detects every single-bit error wherever it is (its polynomial has
// more than one term), and the small models above are swept whole.
constexpr double kSweepBudget = 2e9;
class IntegrityOf : public ::testing::TestWithParam<std::string> {};

TEST_P(IntegrityOf, EveryBitFlipOutsideTheWeightsIsRefused) {
  const std::string& name = GetParam();
  const AlignedBuffer b = ReadModel(name);
  ASSERT_GT(b.size(), 64u) << name;
  const auto* blob = fb::GetModel(b.data())->data();
  ASSERT_NE(blob, nullptr) << name;
  const size_t begin = static_cast<size_t>(blob->data() - b.data()), end = begin + blob->size();
  const size_t meta = b.size() - (end - begin);
  const double full = (8.0 * static_cast<double>(meta) + static_cast<double>(end - begin) / 61) *
                      static_cast<double>(b.size());
  if (full <= kSweepBudget) {
    long want = 0;
    for (size_t pos = 0; pos < b.size(); ++pos) want += pos < begin || pos >= end ? 8 : (pos - begin) % 61 == 0;
    const SweepStats s = Sweep(name, [begin, end](size_t pos) { return pos < begin || pos >= end; },
                               [begin](size_t pos) { return (pos - begin) % 61 == 0; });
    EXPECT_EQ(s.flips, want) << name;
    EXPECT_EQ(s.identifier, 32) << name;
  } else {
    // Stride s: about kSweepBudget bytes checksummed; the identifier bytes
    // (4..7) are always among the flipped ones (they give a different status).
    const double positions = static_cast<double>(meta) + static_cast<double>(end - begin) / 61;
    const size_t stride = static_cast<size_t>(positions * static_cast<double>(b.size()) / kSweepBudget) + 1;
    auto picked = [begin, end, stride](size_t pos) {
      if (pos >= 4 && pos < 8) return true;
      return pos < begin || pos >= end ? pos % stride == 0 : (pos - begin) % (61 * stride) == 0;
    };
    long want = 0;
    for (size_t pos = 0; pos < b.size(); ++pos) want += picked(pos);
    const SweepStats s = Sweep(name, [](size_t) { return false; }, picked);
    EXPECT_EQ(s.flips, want) << name << " (stride " << stride << ")";
    EXPECT_EQ(s.identifier, 4) << name;  // one bit of each identifier byte
    EXPECT_GT(s.flips, 500) << name;
  }
}

std::vector<std::string> SweptModels() {
  std::vector<std::string> names;
  for (const std::string& n : eatest::AllModels()) {
    if (n.find("_notile") == std::string::npos) names.push_back(n);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Models, IntegrityOf, ::testing::ValuesIn(SweptModels()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// What the converter writes: the last 4 bytes are the little-endian CRC-32
// (computed by the test's own eatest::Crc32) of all bytes before them.
TEST(Integrity, FileEndsInTheCrcOfEveryByteBeforeIt) {
  for (const std::string& name : eatest::AllModels()) {
    const AlignedBuffer b = ReadModel(name);
    ASSERT_GT(b.size(), 4u) << name;
    EXPECT_EQ(Tail32(b), eatest::Crc32(b.data(), b.size() - 4)) << name;
    EXPECT_EQ(fb::GetModel(b.data())->format_version(), 6u) << name;
  }
}

// A version-2 file (the format-2 converter's pooling_int8.eatn: the
// FlatBuffer alone, with data_crc32) is refused as an old format, not as a
// corrupted file.
TEST(Integrity, PreviousFormatIsAVersionMismatch) {
  AlignedBuffer v2;
  ASSERT_TRUE(eatest::ReadFile(EA_INTEGRITY_V2_FILE, &v2)) << EA_INTEGRITY_V2_FILE;
  ASSERT_EQ(fb::GetModel(v2.data())->format_version(), 2u);
  Model m;
  EXPECT_EQ(m.Load(v2.data(), v2.size()), Status::kVersionMismatch) << m.error();
  const std::string msg = m.error();
  EXPECT_NE(msg.find("format version 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reads version 6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("re-convert"), std::string::npos) << msg;
  // Its weights no longer matching its data_crc32: not an intact old file.
  AlignedBuffer bad = v2;
  bad.data()[fb::GetModel(v2.data())->data()->data() - v2.data()] ^= 0x10;
  EXPECT_EQ(m.Load(bad.data(), bad.size()), Status::kCrcMismatch) << m.error();
  // A format-3 to 6 file without its checksum, claiming version 2, has no
  // data_crc32: a truncated or corrupted file, not an old one.
  const AlignedBuffer v3 = ReadModel("fixture_int8");
  ASSERT_GT(v3.size(), 4u);
  AlignedBuffer cut(v3.size() - 4);
  std::memcpy(cut.data(), v3.data(), cut.size());
  auto* table = reinterpret_cast<flatbuffers::Table*>(flatbuffers::GetMutableRoot<fb::Model>(cut.data()));
  ASSERT_TRUE(table->SetField<uint32_t>(fb::Model::VT_FORMAT_VERSION, 2u, 0u));
  EXPECT_EQ(m.Load(cut.data(), cut.size()), Status::kCrcMismatch) << m.error();
  // An intact file of another checksummed version (3: before the per-worker
  // scratch; 4: the blocks' separate int8 adds; 5: no graph; 7: later) is a
  // version mismatch that says to re-convert.
  for (const uint32_t version : {3u, 4u, 5u, 7u}) {
    AlignedBuffer other = v3;
    table = reinterpret_cast<flatbuffers::Table*>(flatbuffers::GetMutableRoot<fb::Model>(other.data()));
    ASSERT_TRUE(table->SetField<uint32_t>(fb::Model::VT_FORMAT_VERSION, version, 0u));
    eatest::SealModel(&other);
    EXPECT_EQ(m.Load(other.data(), other.size()), Status::kVersionMismatch) << m.error();
    const std::string text = m.error();
    EXPECT_NE(text.find("format version " + std::to_string(version) + ", this runtime reads version 6"),
              std::string::npos) << text;
  }
}

// The size must be the file's: a larger buffer size (bytes after the file)
// or a shorter one fails the checksum and says so.
TEST(Integrity, SizeMustBeTheFilesSize) {
  const AlignedBuffer file = ReadModel("fixture_int8");
  AlignedBuffer longer(file.size() + 16);
  std::memcpy(longer.data(), file.data(), file.size());
  Model m;
  EXPECT_EQ(m.Load(longer.data(), longer.size()), Status::kCrcMismatch);
  EXPECT_NE(std::string(m.error()).find("size " + std::to_string(longer.size())), std::string::npos) << m.error();
  EXPECT_EQ(m.Load(file.data(), file.size() - 1), Status::kCrcMismatch);
  EXPECT_EQ(m.Load(file.data(), file.size()), Status::kOk) << m.error();
  // Too short to hold an identifier and a checksum.
  EXPECT_EQ(m.Load(file.data(), 11), Status::kInvalidModel);
  EXPECT_STRNE(m.error(), "");
}

// The runtime's CRC-32 (whichever implementation this target builds) equals
// the test's (eatest::Crc32, from the bitwise definition) for every length
// 0..300 at every start offset 0..7, and on a long buffer.
TEST(Integrity, RuntimeCrc32MatchesTheDefinition) {
  std::vector<uint8_t> buf(70000 + 8);
  eatest::Rng rng(0xC3C);
  for (auto& x : buf) x = static_cast<uint8_t>(rng.next());
  for (size_t start = 0; start < 8; ++start) {
    for (size_t n = 0; n <= 300; ++n) {
      ASSERT_EQ(edgeattn::crc32(buf.data() + start, n), eatest::Crc32(buf.data() + start, n))
          << "length " << n << " at offset " << start;
    }
  }
  EXPECT_EQ(edgeattn::crc32(buf.data() + 3, 70000), eatest::Crc32(buf.data() + 3, 70000));
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(edgeattn::crc32(check, 9), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(eatest::Crc32(check, 9), 0xCBF43926u);
}

// Every implementation (the other targets' choices too), from any running value.
TEST(Integrity, EveryCrc32ImplementationMatchesTheDefinition) {
  namespace impl = edgeattn::crc32_impl;
  std::vector<uint8_t> buf(4096 + 8);
  eatest::Rng rng(0xC3D);
  for (auto& x : buf) x = static_cast<uint8_t>(rng.next());
  using Fn = uint32_t (*)(uint32_t, const uint8_t*, size_t);
  struct Named {
    const char* name;
    Fn fn;
  };
  std::vector<Named> impls = {
      {"bitwise", impl::bitwise}, {"nibble", impl::nibble}, {"bytewise", impl::bytewise}, {"slice4", impl::slice4}};
#if defined(EA_CRC32_HAVE_ARMV8)
  if (impl::armv8_available()) impls.push_back({"armv8", impl::armv8});
  std::printf("armv8 CRC instructions: %s\n", impl::armv8_available() ? "available, compared" : "absent");
#endif
  for (const auto& f : impls) {
    for (size_t start = 0; start < 8; ++start) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{5}, size_t{7}, size_t{64}, size_t{4093}}) {
        const uint8_t* p = buf.data() + start;
        EXPECT_EQ(~f.fn(0xFFFFFFFFu, p, n), eatest::Crc32(p, n)) << f.name << " length " << n << " at " << start;
        // Split in two calls: the running value carries over.
        EXPECT_EQ(~f.fn(f.fn(0xFFFFFFFFu, p, n / 3), p + n / 3, n - n / 3), eatest::Crc32(p, n)) << f.name;
      }
    }
  }
}

}  // namespace
