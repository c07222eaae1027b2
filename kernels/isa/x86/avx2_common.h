// Helpers shared by the AVX2 kernel files. Everything has internal linkage
// (static inline) so no copy compiled with wider flags (the *-avxvnni.cc files) can be
// picked by the linker for the AVX2 path.
//
// Exactness notes (requant.h defines the integers):
//  - requantize: _mm256_mul_epi32 gives the exact 64-bit acc * M for the even
//    lanes (odd lanes after a 32-bit shift). AVX2 has no 64-bit arithmetic
//    right shift, so x >> n (floor) is computed as ((x ^ s) >>> n) ^ s with
//    s = x < 0 ? ~0 : 0 (for x < 0, ~x >= 0 and ~(~x >>> n) == floor(x / 2^n)).
//    Saturation to int32 via 64-bit compares.
//  - Horner step floor(h * u / 2^31): bits 31..62 of the exact signed 64-bit
//    product; the result fits in int32 (|h| < 2^30, 0 <= u < 2^31), so a
//    logical 64-bit shift and truncation give the arithmetic-shift value.
#ifndef EDGEATTN_KERNELS_AVX2_AVX2_COMMON_H_
#define EDGEATTN_KERNELS_AVX2_AVX2_COMMON_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace avx2 {

static inline int32_t hsum_s32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

static inline int32_t hmax_s32(__m256i v) {
  __m128i s = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_max_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_max_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// {sum(a), sum(b), sum(c), sum(d)} (wrapping int32 adds).
static inline __m128i hsum4_s32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

static inline float hsum_f32(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline float hmax_f32(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline __m128 hsum4_f32(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

// Arithmetic (floor) right shift of signed 64-bit lanes by per-lane counts.
static inline __m256i sra_epi64(__m256i x, __m256i n) {
  const __m256i s = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
  return _mm256_xor_si256(_mm256_srlv_epi64(_mm256_xor_si256(x, s), n), s);
}

// Saturate signed 64-bit lanes to int32 (result in the low dword of each lane).
static inline __m256i sat_s64_to_s32(__m256i x) {
  const __m256i hi = _mm256_set1_epi64x(INT32_MAX);
  const __m256i lo = _mm256_set1_epi64x(INT32_MIN);
  x = _mm256_blendv_epi8(x, hi, _mm256_cmpgt_epi64(x, hi));
  return _mm256_blendv_epi8(x, lo, _mm256_cmpgt_epi64(lo, x));
}

// Per-lane requantization parameters: n = 31 - shift and 2^(n-1), as 64-bit
// lanes for the even (lanes 0,2,4,6) and odd (1,3,5,7) int32 positions.
struct Rq8 {
  __m256i mult;               // int32 x 8
  __m256i n_even, n_odd;      // int64 x 4
  __m256i rnd_even, rnd_odd;  // int64 x 4
  __m256i k;                  // n - 32, int32 x 8 (used when `high`)
  bool high;                  // every lane has n >= 32
};

static inline Rq8 rq8_uniform(int32_t mult, int32_t shift) {
  const int64_t n = 31 - shift;
  Rq8 r;
  r.mult = _mm256_set1_epi32(mult);
  r.n_even = r.n_odd = _mm256_set1_epi64x(n);
  r.rnd_even = r.rnd_odd = _mm256_set1_epi64x(int64_t{1} << (n - 1));
  r.k = _mm256_set1_epi32(static_cast<int32_t>(n - 32));
  r.high = n >= 32;
  return r;
}

static inline Rq8 rq8_per_lane(const int32_t* mult, const int32_t* shift) {
  Rq8 r;
  r.mult = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mult));
  const __m256i n = _mm256_sub_epi32(_mm256_set1_epi32(31),
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(shift)));
  r.n_even = _mm256_and_si256(n, _mm256_set1_epi64x(0xFFFFFFFF));
  r.n_odd = _mm256_srli_epi64(n, 32);
  const __m256i one = _mm256_set1_epi64x(1);
  r.rnd_even = _mm256_sllv_epi64(one, _mm256_sub_epi64(r.n_even, one));
  r.rnd_odd = _mm256_sllv_epi64(one, _mm256_sub_epi64(r.n_odd, one));
  r.k = _mm256_sub_epi32(n, _mm256_set1_epi32(32));
  r.high = _mm256_movemask_ps(_mm256_castsi256_ps(r.k)) == 0;  // no lane with n - 32 < 0
  return r;
}

// Exact requantize() of requant.h for 8 int32 lanes.
//
// With n >= 32 on every lane (a multiplier below 1/2: the projections and
// P.V of real models), (P + 2^(n-1)) >> n for P = acc M is
// ((P + 2^(n-1)) >> 32) >> (n - 32) by nested floors, and the first shift is
// the high dword of the 64-bit sum: already in the odd lanes' dword slots,
// one 64-bit shift away for the even lanes. |P| < 2^62, so the result is
// below 2^30 in magnitude and needs no saturation. Otherwise the shift and
// the saturation run on 64-bit lanes (emulated: AVX2 has no VPSRAQ).
static inline __m256i requantize_x8(__m256i acc, const Rq8& q) {
  const __m256i pe = _mm256_mul_epi32(acc, q.mult);
  const __m256i po = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(q.mult, 32));
  if (q.high) {
    const __m256i he = _mm256_srli_epi64(_mm256_add_epi64(pe, q.rnd_even), 32);
    const __m256i y = _mm256_blend_epi32(he, _mm256_add_epi64(po, q.rnd_odd), 0xAA);
    return _mm256_srav_epi32(y, q.k);
  }
  const __m256i re = sat_s64_to_s32(sra_epi64(_mm256_add_epi64(pe, q.rnd_even), q.n_even));
  const __m256i ro = sat_s64_to_s32(sra_epi64(_mm256_add_epi64(po, q.rnd_odd), q.n_odd));
  return _mm256_blend_epi32(re, _mm256_slli_epi64(ro, 32), 0xAA);
}

// sat8(clamp(y, -512, 512) + zp) for 8 lanes, in order. Saturating to int16
// first gives the same int8 (|zp| <= 128).
static inline __m128i add_zp_sat8(__m256i y, __m128i zp16) {
  const __m128i y16 = _mm_packs_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
  const __m128i s = _mm_adds_epi16(y16, zp16);
  return _mm_packs_epi16(s, s);  // low 8 bytes
}

// Step 5 of the softmax (requant.h) on 16 16-bit lanes of e, for a row
// whose normalizer has b >= 17 (rows summing to 2^16 or more): with
// P = e m (< 2^31), nested floors give (P + 2^(b-1)) >> b =
// ((P >> (b-1)) + 1) >> 1 and P >> (b-1) = (P >> 16) >> (b-17): VPMULHUW, a
// shift and VPAVGW, then the cap at 32767.
static inline __m256i normalize_probs_x16(__m256i e, ProbNormalizer norm) {
  const __m256i m16 = _mm256_set1_epi16(static_cast<int16_t>(norm.multiplier));
  const __m256i q = _mm256_srl_epi16(_mm256_mulhi_epu16(e, m16), _mm_cvtsi32_si128(norm.shift - 17));
  return _mm256_min_epu16(_mm256_avg_epu16(q, _mm256_setzero_si256()), _mm256_set1_epi16(kProbMax));
}

static inline void store8(int8_t* p, __m128i v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v); }

static inline __m128i load16(const int8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
static inline __m256i load32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
// 16 int8 -> 16 int16
static inline __m256i load16_s16(const int8_t* p) { return _mm256_cvtepi8_epi16(load16(p)); }
// 8 int8 -> int16 lanes 0-7; lanes 8-15 are 0 (reads 8 bytes only).
static inline __m256i load8_s16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// acc_lo/acc_hi (columns 0-3,8-11 / 4-7,12-15) += p * row16 for one key
// (p <= 32767, an int16: the (p, 0) pair of vpmaddwd).
static inline void pv_add_one(__m256i row16, uint16_t p, __m256i* acc_lo, __m256i* acc_hi) {
  const __m256i pp = _mm256_set1_epi32(static_cast<int32_t>(p));
  *acc_lo = _mm256_add_epi32(*acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(row16, _mm256_setzero_si256()), pp));
  *acc_hi = _mm256_add_epi32(*acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(row16, _mm256_setzero_si256()), pp));
}

}  // namespace avx2
}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_AVX2_AVX2_COMMON_H_
