// Helpers of the AVX-VNNI files (compiled with -mavxvnni): internal linkage
// (anonymous namespace), as every x86 helper header, so no copy can reach a
// file compiled with other flags.
#ifndef EDGEATTN_KERNELS_ISA_X86_AVXVNNI_COMMON_H_
#define EDGEATTN_KERNELS_ISA_X86_AVXVNNI_COMMON_H_

#include <immintrin.h>

#include <cstdint>

namespace edgeattn {
namespace kernels {
namespace {

inline __m256i load32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m128i vnni_hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

}  // namespace
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_X86_AVXVNNI_COMMON_H_
