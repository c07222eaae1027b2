// qs8_qk_row on zmm (AVX-512 F/BW/VL + VNNI), and the two-row step of the
// avx512vnni attention below the tiles.
//
// Q.K (R query rows against 16 keys at a time, lanes = keys): VPDPBUSD
// multiplies unsigned by signed bytes; the keys are the unsigned operand,
// k' = k ^ 0x80 = k + 128, and the query's 4 bytes, broadcast, the signed one:
//   sum_i (q_i - zq)(k_i - zk) = sum_i (q_i - zq) k'_i - (128 + zk) B,
//   sum_i (q_i - zq) k'_i = P - zq T,  P = sum_i q_i k'_i,  T = sum_i k'_i,
// with B = sum_i (q_i - zq) one constant per query row and T one more
// VPDPBUSD against bytes of 1, shared by the R rows. Key bytes past the head
// dim are loaded as 0 (masked loads) and stay 0 (the 0x80 flip is masked
// too), so they add nothing whatever the query bytes there. Everything wraps
// in 32 bits like the reference, whose sum fits int32. The 16 key rows are
// transposed to 4-byte columns in registers (load_keys_t); keys past n alias
// the last key and their lanes are not stored.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {

namespace {

using avx512::lanes16;
using avx512::load_keys_t;

// Query bytes [i, i + 4) as one word; bytes past dim read as 0 (never read).
inline int32_t q_word(const int8_t* q, int i, int dim) {
  int32_t w = 0;
  if (__builtin_expect(dim - i >= 4, 1)) {
    std::memcpy(&w, q + i, 4);
  } else {
    for (int b = 0; b < dim - i; ++b) w |= static_cast<int32_t>(static_cast<uint8_t>(q[i + b])) << (8 * b);
  }
  return w;
}

template <int R>
void qk_rows_zmm(int n, int dim, const int8_t* const* q, int32_t q_zp, const int8_t* k,
                 int k_stride, int32_t k_zp, int32_t* const* scores) {
  __m512i c[R];  // -(128 + zk) B per row
  for (int r = 0; r < R; ++r) {
    uint32_t b = 0;
    for (int i = 0; i < dim; ++i) b += static_cast<uint32_t>(static_cast<int32_t>(q[r][i]) - q_zp);
    c[r] = _mm512_set1_epi32(static_cast<int32_t>(0u - (128u + static_cast<uint32_t>(k_zp)) * b));
  }
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i zq = _mm512_set1_epi32(q_zp);
  for (int j = 0; j < n; j += 16) {
    const int nk = n - j < 16 ? n - j : 16;
    const int8_t* kj = k + static_cast<ptrdiff_t>(j) * k_stride;
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = c[r];
    __m512i t = _mm512_setzero_si512();
    for (int off = 0; off < dim; off += 32) {
      const int m = dim - off < 32 ? dim - off : 32;
      __m512i g[8];
      if (nk == 16) {  // a constant last row: plain strided addresses
        load_keys_t(kj, k_stride, 15, off, m, g);
      } else {
        load_keys_t(kj, k_stride, nk - 1, off, m, g);
      }
      for (int w = 0; w < 8; ++w) {
        if (4 * w >= m) break;
        t = _mm512_dpbusd_epi32(t, g[w], ones);
        for (int r = 0; r < R; ++r) {
          acc[r] = _mm512_dpbusd_epi32(acc[r], g[w], _mm512_set1_epi32(q_word(q[r], off + 4 * w, dim)));
        }
      }
    }
    const __m512i zt = _mm512_mullo_epi32(t, zq);
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_epi32(scores[r] + j, lanes16(nk), _mm512_sub_epi32(acc[r], zt));
  }
}

// Steps 1-2 of the softmax (requant.h) for 32 scores in 32-bit lanes,
// narrowed to 16-bit z. kPre: the pre-shift p is not 0 (one score unit is
// worth less than 2^-16 in log2, c log2(e) < 2^-16); without it the shift
// is skipped.
struct ExpParams16 {
  __m512i limit, mult;
  __m128i pre, post;
};

}  // namespace

void qs8_qk_row__avx512vnni(int n, int dim, const int8_t* q, int32_t q_zp, const int8_t* k,
                            int k_stride, int32_t k_zp, int32_t* scores) {
  qk_rows_zmm<1>(n, dim, &q, q_zp, k, k_stride, k_zp, &scores);
}

void qs8_qk_rows2_zmm__avx512vnni(int n, int dim, const int8_t* q0, const int8_t* q1,
                                  int32_t q_zp, const int8_t* k, int k_stride, int32_t k_zp,
                                  int32_t* scores0, int32_t* scores1) {
  const int8_t* q[2] = {q0, q1};
  int32_t* s[2] = {scores0, scores1};
  qk_rows_zmm<2>(n, dim, q, q_zp, k, k_stride, k_zp, s);
}

}  // namespace kernels
}  // namespace edgeattn
