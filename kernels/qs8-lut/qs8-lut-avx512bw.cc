// qs8_lut (requant.h contract 6) with AVX-512 BW's VPSHUFB: every
// AVX512-VNNI CPU has it.
#include <immintrin.h>

#include <atomic>

#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "isa/x86/block_common.h"
#include "isa/x86/lut_rows_avx512.h"
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {

// y = table[x + 128]: VPSHUFB of each 16-byte slice T_j by the low nibble of
// v = x + 128, then a binary tree over v's high nibble: bit 4 picks between
// T_2k and T_2k+1 (a masked shuffle), bits 5-7 between the pairs' results
// (masked blends). Four bit tests make all the masks; the tree's levels are
// independent chains.
void qs8_lut__avx512bw(int rows, int n, const int8_t* x, int x_stride, const int8_t* table, int8_t* y,
                       int y_stride) {
  __m512i t[16];
  for (int j = 0; j < 16; ++j) t[j] = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * j)));
  auto lut64 = [&](__m512i xv) {
    const __m512i v = _mm512_xor_si512(xv, _mm512_set1_epi8(static_cast<char>(0x80)));
    const __m512i l = _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
    const __mmask64 b4 = _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x10));
    const __mmask64 b5 = _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x20));
    const __mmask64 b6 = _mm512_test_epi8_mask(v, _mm512_set1_epi8(0x40));
    const __mmask64 b7 = _mm512_test_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(0x80)));
    __m512i q[8];
    for (int k = 0; k < 8; ++k) q[k] = _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(t[2 * k], l), b4, t[2 * k + 1], l);
    for (int k = 0; k < 4; ++k) q[k] = _mm512_mask_blend_epi8(b5, q[2 * k], q[2 * k + 1]);
    for (int k = 0; k < 2; ++k) q[k] = _mm512_mask_blend_epi8(b6, q[2 * k], q[2 * k + 1]);
    return _mm512_mask_blend_epi8(b7, q[0], q[1]);
  };
  avx512::lut_rows(rows, n, x, x_stride, y, y_stride, lut64);
}

}  // namespace kernels
}  // namespace edgeattn
