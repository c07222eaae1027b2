// qs8_lut (requant.h contract 6) with AVX2, bit-identical to
// kernels/ref/elementwise.cc.
#include <immintrin.h>

#include <cstring>

#include "isa/x86/avx2_common.h"
#include "isa/x86/block_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

// y = table[x + 128] by VPSHUFB over 16-byte slices T_j = table[16 j ..
// 16 j + 15]. For v = x + 128 < 128 and j = 0..7 the index
// v +sat (112 - 16 j) has bit 7 set (VPSHUFB gives 0) exactly when v's high
// nibble h exceeds j, and v's low nibble l otherwise; with D_j = T_j ^ T_j+1
// (D_7 = T_7) the XOR of the eight lookups telescopes to T_h[l], and every
// lookup is 0 for v >= 128. The bytes of x read as unsigned are v ^ 128: the
// same steps over T_8..T_15 give the upper half, 0 for v < 128.
void qs8_lut__avx2(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                   int y_stride) {
  __m256i dt[16];
  for (int j = 0; j < 16; ++j) {
    __m128i t = load16(table + 16 * j);
    if (j % 8 != 7) t = _mm_xor_si128(t, load16(table + 16 * (j + 1)));
    dt[j] = _mm256_broadcastsi128_si256(t);
  }
  auto lut32 = [&](__m256i xv) {
    const __m256i v = _mm256_xor_si256(xv, _mm256_set1_epi8(static_cast<char>(0x80)));
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    for (int j = 0; j < 8; ++j) {
      const __m256i c = _mm256_set1_epi8(static_cast<char>(112 - 16 * j));
      lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(dt[j], _mm256_adds_epu8(v, c)));
      hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(dt[8 + j], _mm256_adds_epu8(xv, c)));
    }
    return _mm256_xor_si256(lo, hi);
  };
  for (int r = 0; r < rows; ++r) {
    const int8_t* xr = x + static_cast<ptrdiff_t>(r) * x_stride;
    int8_t* yr = y + static_cast<ptrdiff_t>(r) * y_stride;
    int i = 0;
    for (; i + 32 <= n; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(yr + i), lut32(avx2::load32(xr + i)));
    if (i < n) {
      alignas(32) int8_t xb[32] = {}, yb[32];
      std::memcpy(xb, xr + i, n - i);
      _mm256_store_si256(reinterpret_cast<__m256i*>(yb), lut32(_mm256_load_si256(reinterpret_cast<const __m256i*>(xb))));
      std::memcpy(yr + i, yb, n - i);
    }
  }
}

}  // namespace kernels
}  // namespace edgeattn
