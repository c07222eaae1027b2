// qs8_add (requant.h's add contract) with AVX2, bit-identical to
// kernels/ref/elementwise.cc.
#include <immintrin.h>

#include <cstring>

#include "isa/x86/avx2_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

namespace {

// The contract's int32 sum for 8 lanes, shifted: every term fits int32
// (requant.h), so VPMULLD and VPSRAD give the reference's integers.
struct Add8 {
  __m256i zp_x, a, zp_r, b, c;
  __m128i shift;
  __m256i operator()(const int8_t* x, const int8_t* r) const {
    const __m256i dx = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))), zp_x);
    const __m256i dr = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r))), zp_r);
    const __m256i v = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(dx, a), _mm256_mullo_epi32(dr, b)), c);
    return _mm256_sra_epi32(v, shift);
  }
};

// 32 values: the saturating packs (int32 -> int16 -> int8 saturates to int8
// as saturate_s8 does) interleave 128-bit lanes; the dword permute restores
// the order.
inline __m256i add32(const Add8& f, const int8_t* x, const int8_t* r) {
  const __m256i p01 = _mm256_packs_epi32(f(x, r), f(x + 8, r + 8));
  const __m256i p23 = _mm256_packs_epi32(f(x + 16, r + 16), f(x + 24, r + 24));
  return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace

void qs8_add__avx2(size_t n, const int8_t* x, const int8_t* r, const QS8AddParams& p, int8_t* y) {
  Add8 f;
  f.zp_x = _mm256_set1_epi32(p.zp_x);
  f.a = _mm256_set1_epi32(p.a);
  f.zp_r = _mm256_set1_epi32(p.zp_r);
  f.b = _mm256_set1_epi32(p.b);
  f.c = _mm256_set1_epi32((int32_t{1} << (p.shift - 1)) + p.zp_y * (int32_t{1} << p.shift));
  f.shift = _mm_cvtsi32_si128(p.shift);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), add32(f, x + i, r + i));
  if (i < n) {
    alignas(32) int8_t xb[32] = {}, rb[32] = {}, yb[32];
    std::memcpy(xb, x + i, n - i);
    std::memcpy(rb, r + i, n - i);
    _mm256_store_si256(reinterpret_cast<__m256i*>(yb), add32(f, xb, rb));
    std::memcpy(y + i, yb, n - i);
  }
}

}  // namespace kernels
}  // namespace edgeattn
