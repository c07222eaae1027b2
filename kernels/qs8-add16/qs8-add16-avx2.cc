// qs8_add16 (requant.h's add16 contract) with AVX2, bit-identical to
// kernels/ref/elementwise.cc.
#include <immintrin.h>

#include <cstring>

#include "isa/x86/avx2_common.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace avx2;  // NOLINT(build/namespaces)

namespace {

// The contract's sum v = A (x - zp_x) + B r + 2^(n-1) needs 37 bits, and
// AVX2 has no 64-bit arithmetic shift; it is split so that int32 lanes give
// the same integers. With r = 2^8 rh + rl (rh = r >> 8, rl = r & 255):
//   v = 2^8 H + L,  H = B rh (|H| < 2^28),
//   L = A (x - zp_x) + B rl + 2^(n-1) (-2^29 < L < 3 2^29, int32).
// n >= 8: floor(v / 2^n) = (H + (L >> 8)) >> (n - 8) by nested floors
//   (H is an integer), the sum below 2^29.
// n < 8: floor(v / 2^n) = H 2^(8-n) + (L >> n) exactly (L < 2^30 here);
//   H clamped to +-2^23 first keeps the sum in int32 (below 3 2^29) and
//   changes no int16 result: for |H| >= 2^23, |H 2^(8-n)| >= 2^(31-n) and
//   |L >> n| <= 2^(30-n), so the sum has H's sign and a magnitude of at
//   least 2^(30-n) >= 2^23: saturated, clamped or not.
// The saturating pack to int16 is the contract's sat16.
struct Add16x8 {
  __m256i zp_x, a, b, rnd, low8, hmax, hmin;
  __m128i n_hi, n_lo, up;  // shift counts: n - 8, n, 8 - n
  bool wide;               // n >= 8
  __m256i operator()(const int8_t* x, const int16_t* r) const {
    const __m256i dx = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))), zp_x);
    const __m256i r32 = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r)));
    const __m256i h = _mm256_mullo_epi32(_mm256_srai_epi32(r32, 8), b);
    const __m256i l = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(dx, a),
                                                        _mm256_mullo_epi32(_mm256_and_si256(r32, low8), b)), rnd);
    if (wide) return _mm256_sra_epi32(_mm256_add_epi32(h, _mm256_srai_epi32(l, 8)), n_hi);
    const __m256i hc = _mm256_max_epi32(_mm256_min_epi32(h, hmax), hmin);
    return _mm256_add_epi32(_mm256_sll_epi32(hc, up), _mm256_sra_epi32(l, n_lo));
  }
};

// 16 values in order (the pack interleaves 128-bit lanes; VPERMQ restores).
inline __m256i add16x16(const Add16x8& f, const int8_t* x, const int16_t* r) {
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(f(x, r), f(x + 8, r + 8)), 0xD8);
}

}  // namespace

void qs8_add16__avx2(size_t n, const int8_t* x, const int16_t* r, const QS8AddParams& p, int16_t* y) {
  Add16x8 f;
  f.zp_x = _mm256_set1_epi32(p.zp_x);
  f.a = _mm256_set1_epi32(p.a);
  f.b = _mm256_set1_epi32(p.b);
  f.rnd = _mm256_set1_epi32(int32_t{1} << (p.shift - 1));
  f.low8 = _mm256_set1_epi32(0xFF);
  f.hmax = _mm256_set1_epi32(int32_t{1} << 23);
  f.hmin = _mm256_set1_epi32(-(int32_t{1} << 23));
  f.wide = p.shift >= 8;
  f.n_hi = _mm_cvtsi32_si128(f.wide ? p.shift - 8 : 0);
  f.n_lo = _mm_cvtsi32_si128(p.shift);
  f.up = _mm_cvtsi32_si128(f.wide ? 0 : 8 - p.shift);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), add16x16(f, x + i, r + i));
  if (i < n) {
    alignas(32) int8_t xb[16] = {};
    alignas(32) int16_t rb[16] = {}, yb[16];
    std::memcpy(xb, x + i, n - i);
    std::memcpy(rb, r + i, (n - i) * sizeof(int16_t));
    _mm256_store_si256(reinterpret_cast<__m256i*>(yb), add16x16(f, xb, rb));
    std::memcpy(y + i, yb, (n - i) * sizeof(int16_t));
  }
}

}  // namespace kernels
}  // namespace edgeattn
