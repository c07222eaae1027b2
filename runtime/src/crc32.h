#ifndef EDGEATTN_RUNTIME_CRC32_H_
#define EDGEATTN_RUNTIME_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace edgeattn {

// CRC-32 as zlib computes it (IEEE 802.3, reflected, init and final xor ~0):
// the format-3 file checksum. One of the implementations below, chosen per
// target at compile time (crc32.cc says which and why; docs/security.md has
// the measured cost).
uint32_t crc32(const uint8_t* data, size_t size);

// The implementations, each taking and returning the running (not inverted)
// register, for tests and for measuring them on a target. Unused ones are
// dropped by the linker (-ffunction-sections / --gc-sections).
namespace crc32_impl {
uint32_t bitwise(uint32_t crc, const uint8_t* data, size_t size);  // no table
uint32_t nibble(uint32_t crc, const uint8_t* data, size_t size);   // 16 entries, 64 B
uint32_t bytewise(uint32_t crc, const uint8_t* data, size_t size); // 256 entries, 1 KB
uint32_t slice4(uint32_t crc, const uint8_t* data, size_t size);   // 4 x 256 entries, 4 KB
#if defined(__aarch64__) && defined(__linux__) && \
    (defined(__ARM_FEATURE_CRC32) || (defined(__GNUC__) && !defined(__clang__)))
#define EA_CRC32_HAVE_ARMV8 1
// The Armv8 CRC32X/CRC32B instructions (this polynomial); only where
// armv8_available() (HWCAP_CRC32: optional in Armv8.0, mandatory from 8.1).
uint32_t armv8(uint32_t crc, const uint8_t* data, size_t size);
bool armv8_available();
#endif
}  // namespace crc32_impl

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_CRC32_H_
