// The activation table (requant.h contract 6) with AVX512_VBMI's VPERMI2B:
// y = table[x + 128], two 128-byte lookups and one blend per 64 bytes.
// Compiled with -mavx512vbmi; called only by qs8_lut__avx512vnni
// (qs8-lut-avx512vnni.cc) after cpu_has_avx512vbmi() (cpu_features_x86.cc).
#include <immintrin.h>

#include "isa/x86/lut_rows_avx512.h"
#include "isa/x86/x86.h"

namespace edgeattn {
namespace kernels {

// VPERMI2B indexes 128 bytes by the low 7 bits of each index byte, which x's
// byte and x + 128 share: lo = table[0, 128)[x & 127] is the answer for
// x < 0 (x + 128 < 128), hi = table[128, 256)[x & 127] for x >= 0; x's sign
// bit (VPMOVB2M) picks between them.
void qs8_lut__avx512vbmi(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                         int y_stride) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  auto lut64 = [&](__m512i xv) {
    const __m512i lo = _mm512_permutex2var_epi8(t0, xv, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, xv, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(xv), hi, lo);
  };
  avx512::lut_rows(rows, n, x, x_stride, y, y_stride, lut64);
}

}  // namespace kernels
}  // namespace edgeattn
