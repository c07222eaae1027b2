// Helpers shared by the Cortex-M DSP-extension kernels (isa/cortex-m/linear_dsp.h,
// kernels/<family>/*-dsp.cc). Include only inside their __ARM_FEATURE_DSP sections.
#ifndef EDGEATTN_KERNELS_CORTEX_M_DSP_COMMON_H_
#define EDGEATTN_KERNELS_CORTEX_M_DSP_COMMON_H_

#include <cstdint>
#include <cstring>

namespace edgeattn {
namespace kernels {
namespace dsp {

// Four bytes as one word: one LDR (rows may be unaligned; Armv7E-M allows it).
inline uint32_t load4(const int8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Single instructions ACLE has no intrinsic for (GCC builds them from a
// separate rotate, or from shifts and ORs, at -Os): SXTB16 of the word
// rotated right by 8 (bytes 1,3), PKHBT (low half of a, low half of b on
// top) and PKHTB (high half of a, high half of b below).
inline uint32_t sxtb16_ror8(uint32_t v) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
inline uint32_t pkhbt(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline uint32_t pkhtb(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

}  // namespace dsp
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CORTEX_M_DSP_COMMON_H_
