#include "crc32.h"

#include <cstring>

#if defined(EA_CRC32_HAVE_ARMV8)
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgeattn {
namespace {

constexpr uint32_t kPoly = 0xEDB88320u;  // IEEE 802.3, reflected

// Byte tables computed by the compiler: t[0] is the classic byte table,
// t[k][i] = CRC of byte i followed by k zero bytes (slicing-by-N).
template <int N>
struct Tables {
  uint32_t t[N][256] = {};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (kPoly & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (int k = 1; k < N; ++k) {
      for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 255u];
    }
  }
};

struct NibbleTable {
  uint32_t t[16] = {};
  constexpr NibbleTable() {
    for (uint32_t i = 0; i < 16; ++i) {
      uint32_t c = i;
      for (int b = 0; b < 4; ++b) c = (c >> 1) ^ (kPoly & (0u - (c & 1u)));
      t[i] = c;
    }
  }
};

}  // namespace

namespace crc32_impl {

uint32_t bitwise(uint32_t crc, const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (kPoly & (0u - (crc & 1u)));
  }
  return crc;
}

uint32_t nibble(uint32_t crc, const uint8_t* data, size_t size) {
  static constexpr NibbleTable kTable;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    crc = (crc >> 4) ^ kTable.t[crc & 15u];
    crc = (crc >> 4) ^ kTable.t[crc & 15u];
  }
  return crc;
}

uint32_t bytewise(uint32_t crc, const uint8_t* data, size_t size) {
  static constexpr Tables<1> kTables;
  for (size_t i = 0; i < size; ++i) crc = (crc >> 8) ^ kTables.t[0][(crc ^ data[i]) & 255u];
  return crc;
}

uint32_t slice4(uint32_t crc, const uint8_t* data, size_t size) {
  static constexpr Tables<4> kTables;
  const auto& t = kTables.t;
  for (; size >= 4; size -= 4, data += 4) {
    uint32_t w;
    std::memcpy(&w, data, 4);  // little-endian (checked where crc32() picks it)
    crc ^= w;
    crc = t[3][crc & 255u] ^ t[2][(crc >> 8) & 255u] ^ t[1][(crc >> 16) & 255u] ^ t[0][crc >> 24];
  }
  for (; size > 0; --size, ++data) crc = (crc >> 8) ^ t[0][(crc ^ *data) & 255u];
  return crc;
}

#if defined(EA_CRC32_HAVE_ARMV8)
// GCC compiles the CRC instructions for this function only (the rest of the
// build stays plain Armv8.0); it runs only where the CPU reports them.
#if !defined(__ARM_FEATURE_CRC32)
__attribute__((target("arch=armv8-a+crc")))
#endif
uint32_t armv8(uint32_t crc, const uint8_t* data, size_t size) {
  for (; size >= 8; size -= 8, data += 8) {
    uint64_t w;
    std::memcpy(&w, data, 8);
    crc = __crc32d(crc, w);
  }
  for (; size > 0; --size, ++data) crc = __crc32b(crc, *data);
  return crc;
}

bool armv8_available() { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#endif

}  // namespace crc32_impl

// Which implementation (a file is checked once, at load; measured
// instructions per byte and flash in docs/security.md): Cortex-M, where flash
// is scarce and there is no CRC instruction, the nibble table (11
// instructions per byte, 64 bytes of table); aarch64 Linux the CRC
// instructions when the CPU has them; elsewhere slicing-by-4 (5.25 per byte
// on the same core, 4 KB of tables). -DEA_CRC32_IMPL=0..3 (bitwise, nibble,
// bytewise, slice4) overrides it, e.g. firmware with 4 KB to spare.
#ifndef EA_CRC32_IMPL
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define EA_CRC32_IMPL 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define EA_CRC32_IMPL 2
#else
#define EA_CRC32_IMPL 3
#endif
#endif
#if EA_CRC32_IMPL == 3 && defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "EA_CRC32_IMPL 3 (slice4) reads little-endian words"
#endif

uint32_t crc32(const uint8_t* data, size_t size) {
#if EA_CRC32_IMPL == 0
  return ~crc32_impl::bitwise(0xFFFFFFFFu, data, size);
#elif EA_CRC32_IMPL == 1
  return ~crc32_impl::nibble(0xFFFFFFFFu, data, size);
#elif EA_CRC32_IMPL == 2
  return ~crc32_impl::bytewise(0xFFFFFFFFu, data, size);
#else
#if defined(EA_CRC32_HAVE_ARMV8)
  if (crc32_impl::armv8_available()) return ~crc32_impl::armv8(0xFFFFFFFFu, data, size);
#endif
  return ~crc32_impl::slice4(0xFFFFFFFFu, data, size);
#endif
}

}  // namespace edgeattn
