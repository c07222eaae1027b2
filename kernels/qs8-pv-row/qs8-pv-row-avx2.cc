// qs8_pv_row with AVX2.
//
//  - P.V: sum p (v - zp) = sum p v - zp sum p, two keys per vpmaddwd (the
//    softmax's p <= 32767 is an int16).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/requant.h"
#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "ref/f32_row.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

void qs8_pv_row__avx2(int n, int v_dim, const uint16_t* probs, const int8_t* v, int v_stride,
                      int32_t v_zp, int32_t pv_mult, int32_t pv_shift, int32_t out_zp,
                      int8_t* out) {
  uint32_t psum = 0;
  for (int j = 0; j < n; ++j) psum += probs[j];
  const __m256i corr = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(v_zp) * psum));
  const Rq8 rq = rq8_uniform(pv_mult, pv_shift);
  const __m128i zp16 = _mm_set1_epi16(static_cast<int16_t>(out_zp));
  int c = 0;
  for (; c + 16 <= v_dim; c += 16) {
    __m256i acc_lo = _mm256_setzero_si256(), acc_hi = acc_lo;  // cols 0-3,8-11 / 4-7,12-15
    const int8_t* vp = v + c;
    int j = 0;
    for (; j + 2 <= n; j += 2, vp += 2 * static_cast<ptrdiff_t>(v_stride)) {
      const __m256i r0 = load16_s16(vp);
      const __m256i r1 = load16_s16(vp + v_stride);
      uint32_t pair;  // (p_j, p_j+1) as the int16 pair vpmaddwd wants (little endian)
      std::memcpy(&pair, probs + j, sizeof(pair));
      const __m256i pp = _mm256_set1_epi32(static_cast<int32_t>(pair));
      acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(r0, r1), pp));
      acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(r0, r1), pp));
    }
    if (j < n) pv_add_one(load16_s16(vp), probs[j], &acc_lo, &acc_hi);
    const __m256i s0 = _mm256_sub_epi32(_mm256_permute2x128_si256(acc_lo, acc_hi, 0x20), corr);
    const __m256i s1 = _mm256_sub_epi32(_mm256_permute2x128_si256(acc_lo, acc_hi, 0x31), corr);
    store8(out + c, add_zp_sat8(requantize_x8(s0, rq), zp16));
    store8(out + c + 8, add_zp_sat8(requantize_x8(s1, rq), zp16));
  }
  for (; c + 8 <= v_dim; c += 8) {
    __m256i acc = _mm256_setzero_si256();
    const int8_t* vp = v + c;
    for (int j = 0; j < n; ++j, vp += v_stride) {
      const __m256i row = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(vp)));
      acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(row, _mm256_set1_epi32(probs[j])));
    }
    store8(out + c, add_zp_sat8(requantize_x8(_mm256_sub_epi32(acc, corr), rq), zp16));
  }
  for (; c < v_dim; ++c) {
    int32_t acc = 0;
    for (int j = 0; j < n; ++j) {
      acc += static_cast<int32_t>(probs[j]) * (v[static_cast<ptrdiff_t>(j) * v_stride + c] - v_zp);
    }
    out[c] = requantize_s8(acc, pv_mult, pv_shift, out_zp);
  }
}

// Two query rows at a time: the same key (value) row loads and int16
// widenings serve both rows. Same arithmetic per row as the one-row kernels.

}  // namespace kernels
}  // namespace edgeattn
