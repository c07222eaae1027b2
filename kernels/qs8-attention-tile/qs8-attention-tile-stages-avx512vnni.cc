// Tiled int8 attention on zmm (AVX-512 F/BW/VL + VNNI): the avx512vnni
// path's qs8_attention. Same integers as qs8_attention__ref; reached only
// after cpu_supports(KernelPath::kAvx512Vnni).
//
// The row kernel (qs8-qk-row-avx512vnni.cc) transposes the keys again for
// every pair of query rows and forms P.V one row at a time. Here one head's
// keys and values are repacked once into the tile scratch (attention_tile.h)
// and both products become GEMM tiles of up to 8 query rows, the register
// tile of the int8 linear (isa/x86/linear_avx512vnni.h). The tile loop is the
// shared qs8_attention_tiled_with (kernels/ref/attention_tiled.cc); this
// file gives its four stages (attention_tile.h):
//
// Q.K^T (lanes = 16 keys, 2 key blocks x 8 rows = 16 accumulators): the keys
// are the unsigned operand of VPDPBUSD, stored as k' = k + 128, the query's 4
// bytes broadcast the signed one. With B = sum_i (q_i - zq) per row and
// T_j = sum_i k'_ji per key (i < head dim) and D the head dim,
//   sum_i (q_i - zq)(k_ji - zk) = sum_i q_i k'_ji - zq T_j - (128 + zk) B.
// The last term is the same for every key of the row and the softmax only
// sees differences max - s_j, so it is left out (as on Arm): the stored score
// is s'_j = sum_i q_i k'_ji - zq T_j = sum_i (q_i - zq) k'_ji, one dot product
// from accumulators that start at key_terms[j] = -zq T_j (made while
// packing). |s'_j| <= 255 * 255 * D < 2^31 for every head dim whose
// reference sums fit int32 (D < 33026), so s' never wraps and max' - s'_j is
// exactly the reference's max - s_j.
//
// Softmax: qs8_softmax_exp_rows__avx512vnni on the tile's rows, each over the
// row's own key limit (causal rows of one tile differ), then the
// normalization in place in t.probs (normalize_probs).
//
// P.V (lanes = 16 value channels): VPDPWSSD, 16-bit by 16-bit products
// summed in pairs: the probabilities p in [0, 32767] are valid int16, so a
// pair (p_j, p_j+1) of a row is one 32-bit broadcast straight from t.probs,
// and the values, packed as byte pairs (v_j, v_j+1) per channel, become 16
// such int16 pairs with one VPMOVSXBW:
//   sum_j p_j (v_j - zv) = sum_j p_j v_j - zv sum_j p_j.
// (Bytes with VPDPBUSD would need p split into two byte planes and two
// passes: as many dot-product instructions, plus the split.) Probabilities
// past a row's limit are 0 and padded keys are 0, so whole pairs can be
// summed. Then requantize_s8 on 16 lanes. The byte planes of the tile
// scratch (attention_tile.h) are left unused here.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace kernels {
namespace {

using avx512::bcast_word;
using avx512::lanes16;
using avx512::load_keys_t;
using avx512::make_rq16;
using avx512::requantize_s8_x16;
using avx512::Rq16;

constexpr int kMr = kQs8AttnTileRows;

// Keys [0, n) as K4N16 blocks of k + 128 (bytes past the head dim 0) and
// key_terms[j] = -zq * sum_i (k_ji + 128).
void pack_keys(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const size_t block = packed_block_bytes(a.head_dim);
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i neg_zq = _mm512_set1_epi32(static_cast<int32_t>(0u - static_cast<uint32_t>(a.q_zp)));
  for (int j = 0; j < n; j += kPackN) {
    const int last = n - j < kPackN ? n - j - 1 : kPackN - 1;
    const int8_t* kj = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
    int8_t* dst = t.keys + static_cast<size_t>(j / kPackN) * block;
    __m512i sum = _mm512_setzero_si512();
    for (int off = 0; off < a.head_dim; off += 32) {
      const int m = a.head_dim - off < 32 ? a.head_dim - off : 32;
      __m512i g[8];
      load_keys_t(kj, a.k_stride, last, off, m, g);
      for (int w = 0; w < 8 && 4 * w < m; ++w) {
        _mm512_storeu_si512(dst + 16 * static_cast<ptrdiff_t>(off + 4 * w), g[w]);
        sum = _mm512_dpbusd_epi32(sum, g[w], ones);
      }
    }
    _mm512_storeu_si512(t.key_terms + j, _mm512_mullo_epi32(sum, neg_zq));
  }
}

// Values of keys [0, n) in pairs of keys per 16 channels: 32 bytes
// (v_j[c], v_j+1[c]) for c = 0..15, so that VPMOVSXBW turns them into the
// 16 int16 pairs of VPDPWSSD (keys n..kp-1 and channels past v_dim are 0).
// The block of 16 channels takes 16 kp bytes, like K4N16.
void pack_values(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const int kp = packed_k(n);
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  for (int c = 0; c < a.v_dim; c += kPackN) {
    const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
    const __mmask16 cm = lanes16(cnt);
    int8_t* dst = t.values + static_cast<size_t>(c / kPackN) * block;
    for (int j = 0; j < kp; j += 2) {
      const __m128i r0 = j < n ? _mm_maskz_loadu_epi8(cm, a.v + static_cast<ptrdiff_t>(j) * a.v_stride + c)
                               : _mm_setzero_si128();
      const __m128i r1 = j + 1 < n ? _mm_maskz_loadu_epi8(cm, a.v + static_cast<ptrdiff_t>(j + 1) * a.v_stride + c)
                                   : _mm_setzero_si128();
      __m128i* out = reinterpret_cast<__m128i*>(dst + 16 * static_cast<ptrdiff_t>(j));
      _mm_storeu_si128(out + 0, _mm_unpacklo_epi8(r0, r1));  // channels 0..7
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi8(r0, r1));  // 8..15
    }
  }
}

using TileRows = Qs8AttnTileRows;

// The key loop of a full 8-row x 2-block P.V tile with 16 named
// accumulators: acc[r][c] = VPDPWSSD over `pairs` key pairs of the two
// value blocks w0, w1 (32 bytes per pair, sign-extended to 16 int16 pairs)
// with the row's probability pair at row[r] + 2 g broadcast. GCC 12 compiles
// the accumulator-array form of the tiles below with two register copies per
// accumulator and step (as in isa/x86/linear_avx512vnni.h); named variables keep
// them in registers.
inline __m512i value_pairs(const int8_t* w, int g) {
  return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * static_cast<ptrdiff_t>(g))));
}
#define EA_ACC_ZERO(r) __m512i a##r##0 = _mm512_setzero_si512(), a##r##1 = _mm512_setzero_si512();
#define EA_ACC_ROW(r)                                                        \
  {                                                                          \
    const __m512i bv = bcast_word(row[r] + 2 * static_cast<ptrdiff_t>(g));   \
    a##r##0 = _mm512_dpwssd_epi32(a##r##0, bv, v0);                          \
    a##r##1 = _mm512_dpwssd_epi32(a##r##1, bv, v1);                          \
  }
#define EA_ACC_OUT(r) \
  acc[r][0] = a##r##0;  \
  acc[r][1] = a##r##1;
__attribute__((noinline)) void pv_acc_8x2(const uint16_t* const* rows8, const int8_t* w0, const int8_t* w1, int pairs,
                                          __m512i (*acc)[2]) {
  const uint16_t* row[8];
  for (int r = 0; r < 8; ++r) row[r] = rows8[r];
  EA_ACC_ZERO(0) EA_ACC_ZERO(1) EA_ACC_ZERO(2) EA_ACC_ZERO(3) EA_ACC_ZERO(4) EA_ACC_ZERO(5) EA_ACC_ZERO(6) EA_ACC_ZERO(7)
  for (int g = 0; g < pairs; ++g) {
    const __m512i v0 = value_pairs(w0, g), v1 = value_pairs(w1, g);
    EA_ACC_ROW(0) EA_ACC_ROW(1) EA_ACC_ROW(2) EA_ACC_ROW(3) EA_ACC_ROW(4) EA_ACC_ROW(5) EA_ACC_ROW(6) EA_ACC_ROW(7)
  }
  EA_ACC_OUT(0) EA_ACC_OUT(1) EA_ACC_OUT(2) EA_ACC_OUT(3) EA_ACC_OUT(4) EA_ACC_OUT(5) EA_ACC_OUT(6) EA_ACC_OUT(7)
}
// The same over one value block (16 channels: heads of 16 or fewer, and
// the last block of an odd count).
#define EA_ACC1_ZERO(r) __m512i a##r = _mm512_setzero_si512();
#define EA_ACC1_ROW(r) a##r = _mm512_dpwssd_epi32(a##r, bcast_word(row[r] + 2 * static_cast<ptrdiff_t>(g)), v0);
#define EA_ACC1_OUT(r) acc[r][0] = a##r;
__attribute__((noinline)) void pv_acc_8x1(const uint16_t* const* rows8, const int8_t* w0, int pairs,
                                          __m512i (*acc)[1]) {
  const uint16_t* row[8];
  for (int r = 0; r < 8; ++r) row[r] = rows8[r];
  EA_ACC1_ZERO(0) EA_ACC1_ZERO(1) EA_ACC1_ZERO(2) EA_ACC1_ZERO(3) EA_ACC1_ZERO(4) EA_ACC1_ZERO(5) EA_ACC1_ZERO(6) EA_ACC1_ZERO(7)
  for (int g = 0; g < pairs; ++g) {
    const __m512i v0 = value_pairs(w0, g);
    EA_ACC1_ROW(0) EA_ACC1_ROW(1) EA_ACC1_ROW(2) EA_ACC1_ROW(3) EA_ACC1_ROW(4) EA_ACC1_ROW(5) EA_ACC1_ROW(6) EA_ACC1_ROW(7)
  }
  EA_ACC1_OUT(0) EA_ACC1_OUT(1) EA_ACC1_OUT(2) EA_ACC1_OUT(3) EA_ACC1_OUT(4) EA_ACC1_OUT(5) EA_ACC1_OUT(6) EA_ACC1_OUT(7)
}
#undef EA_ACC_ZERO
#undef EA_ACC_ROW
#undef EA_ACC_OUT
#undef EA_ACC1_ZERO
#undef EA_ACC1_ROW
#undef EA_ACC1_OUT

// A full 8-row x 2-block Q.K^T tile from start to end in 16 named
// accumulators: the key terms in, the K loop over the packed key blocks w0,
// w1 (keys + 128, the unsigned operand) against the query's 4 bytes
// broadcast, the head dim's partial last group (q_tail, when `tail`) and the
// scores stored. With a head dim of 16 or 32 the K
// loop is only 4 or 8 steps, so keeping the accumulators out of memory
// between these phases is most of the tile's time.
#define EA_QK_IN(r) __m512i a##r##0 = kt0, a##r##1 = kt1;
#define EA_QK_STEP(r, bv_expr)           \
  {                                      \
    const __m512i bv = (bv_expr);        \
    a##r##0 = _mm512_dpbusd_epi32(a##r##0, v0, bv); \
    a##r##1 = _mm512_dpbusd_epi32(a##r##1, v1, bv); \
  }
#define EA_QK_ROW(r) EA_QK_STEP(r, bcast_word(q[r] + 4 * static_cast<ptrdiff_t>(g)))
#define EA_QK_TAIL(r) EA_QK_STEP(r, _mm512_set1_epi32(q_tail[r]))
#define EA_QK_OUT(r)                                                        \
  _mm512_storeu_si512(scores + (r) * static_cast<ptrdiff_t>(stride), a##r##0); \
  _mm512_storeu_si512(scores + (r) * static_cast<ptrdiff_t>(stride) + 16, a##r##1);

// scores[r][16 b + lane] for key blocks b0, b0 + NB.
__attribute__((noinline)) void qk_tile_8x2(const int8_t* const* q8, const int8_t* w0, const int8_t* w1, int groups,
                                           bool tail, const int32_t* q_tail, const int32_t* key_terms,
                                           int32_t* scores, int stride) {
  const int8_t* q[8];
  for (int r = 0; r < 8; ++r) q[r] = q8[r];
  const __m512i kt0 = _mm512_loadu_si512(key_terms), kt1 = _mm512_loadu_si512(key_terms + 16);
  EA_QK_IN(0) EA_QK_IN(1) EA_QK_IN(2) EA_QK_IN(3) EA_QK_IN(4) EA_QK_IN(5) EA_QK_IN(6) EA_QK_IN(7)
  // The partial group first: after the K loop GCC 12 would copy every
  // accumulator on each K step to merge the two control paths.
  if (tail) {
    const __m512i v0 = _mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(groups));
    const __m512i v1 = _mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(groups));
    EA_QK_TAIL(0) EA_QK_TAIL(1) EA_QK_TAIL(2) EA_QK_TAIL(3) EA_QK_TAIL(4) EA_QK_TAIL(5) EA_QK_TAIL(6) EA_QK_TAIL(7)
  }
  for (int g = 0; g < groups; ++g) {
    const __m512i v0 = _mm512_loadu_si512(w0 + 64 * static_cast<ptrdiff_t>(g));
    const __m512i v1 = _mm512_loadu_si512(w1 + 64 * static_cast<ptrdiff_t>(g));
    EA_QK_ROW(0) EA_QK_ROW(1) EA_QK_ROW(2) EA_QK_ROW(3) EA_QK_ROW(4) EA_QK_ROW(5) EA_QK_ROW(6) EA_QK_ROW(7)
  }
  EA_QK_OUT(0) EA_QK_OUT(1) EA_QK_OUT(2) EA_QK_OUT(3) EA_QK_OUT(4) EA_QK_OUT(5) EA_QK_OUT(6) EA_QK_OUT(7)
}
#undef EA_QK_IN
#undef EA_QK_STEP
#undef EA_QK_ROW
#undef EA_QK_TAIL
#undef EA_QK_OUT

template <int MR, int NB>
void qk_tile(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, const int32_t* q_tail,
             int b0) {
  const size_t block = packed_block_bytes(a.head_dim);
  const int groups = a.head_dim / 4;
  const int8_t* q[MR];
  for (int r = 0; r < MR; ++r) q[r] = a.q + static_cast<ptrdiff_t>(rows.m + r) * a.q_stride;
  const int8_t* w[NB];
  for (int c = 0; c < NB; ++c) w[c] = t.keys + static_cast<size_t>(b0 + c) * block;
  if constexpr (MR == 8 && NB == 2) {
    qk_tile_8x2(q, w[0], w[1], groups, 4 * groups < a.head_dim, q_tail, t.key_terms + kPackN * b0, t.scores + kPackN * b0,
                t.stride);
    return;
  }
  __m512i acc[MR][NB];
  for (int c = 0; c < NB; ++c) {
    const __m512i kt = _mm512_loadu_si512(t.key_terms + kPackN * (b0 + c));
    for (int r = 0; r < MR; ++r) acc[r][c] = kt;
  }
  for (int g = 0; g < groups; ++g) {
    __m512i wv[NB];
    for (int c = 0; c < NB; ++c) wv[c] = _mm512_loadu_si512(w[c] + 64 * static_cast<ptrdiff_t>(g));
    for (int r = 0; r < MR; ++r) {
      const __m512i qv = bcast_word(q[r] + 4 * static_cast<ptrdiff_t>(g));
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], wv[c], qv);
    }
  }
  if (4 * groups < a.head_dim) {
    __m512i wv[NB];
    for (int c = 0; c < NB; ++c) wv[c] = _mm512_loadu_si512(w[c] + 64 * static_cast<ptrdiff_t>(groups));
    for (int r = 0; r < MR; ++r) {
      const __m512i qv = _mm512_set1_epi32(q_tail[r]);
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], wv[c], qv);
    }
  }
  for (int c = 0; c < NB; ++c) {
    const int j = kPackN * (b0 + c);
    for (int r = 0; r < MR; ++r) _mm512_storeu_si512(t.scores + static_cast<ptrdiff_t>(r) * t.stride + j, acc[r][c]);
  }
}

template <int MR>
void qk_rows(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int keys) {
  int32_t q_tail[kMr];  // the partial last 4-byte group of each row's q, if any
  qs8_attention_tile_q_tails(a, rows, q_tail);
  const int blocks = (keys + kPackN - 1) / kPackN;
  int b = 0;
  for (; b + 2 <= blocks; b += 2) qk_tile<MR, 2>(a, t, rows, q_tail, b);
  if (b < blocks) qk_tile<MR, 1>(a, t, rows, q_tail, b);
}

// out[r][16 b + lane] for channel blocks b0, b0 + NB over `pairs` key pairs.
template <int MR, int NB>
void pv_tile(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int kp, int pairs, int b0) {
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  const int8_t* w[NB];
  for (int c = 0; c < NB; ++c) w[c] = t.values + static_cast<size_t>(b0 + c) * block;
  const uint16_t* pr[MR];
  for (int r = 0; r < MR; ++r) pr[r] = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
  __m512i acc[MR][NB];
  if constexpr (MR == 8 && NB == 2) {
    pv_acc_8x2(pr, w[0], w[1], pairs, acc);
  } else if constexpr (MR == 8) {
    pv_acc_8x1(pr, w[0], pairs, acc);
  } else {
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_setzero_si512();
    for (int g = 0; g < pairs; ++g) {
      __m512i wv[NB];
      for (int c = 0; c < NB; ++c) wv[c] = value_pairs(w[c], g);
      for (int r = 0; r < MR; ++r) {
        const __m512i pv = bcast_word(pr[r] + 2 * static_cast<ptrdiff_t>(g));
        for (int c = 0; c < NB; ++c) acc[r][c] = _mm512_dpwssd_epi32(acc[r][c], pv, wv[c]);
      }
    }
  }
  const Rq16 rq = make_rq16(_mm512_set1_epi32(a.pv_mult), _mm512_set1_epi32(a.pv_shift));
  const __m512i zp = _mm512_set1_epi32(a.out_zp);
  for (int c = 0; c < NB; ++c) {
    const int ch = kPackN * (b0 + c);
    const __mmask16 mask = lanes16(a.v_dim - ch < kPackN ? a.v_dim - ch : kPackN);
    for (int r = 0; r < MR; ++r) {
      const __m512i s = _mm512_sub_epi32(acc[r][c], _mm512_set1_epi32(rows.p_sum[r] * a.v_zp));
      _mm_mask_storeu_epi8(a.out + static_cast<ptrdiff_t>(rows.m + r) * a.out_stride + ch, mask,
                           requantize_s8_x16(s, rq, zp));
    }
  }
}

template <int MR>
void pv_rows(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int kp, int pairs) {
  const int blocks = (a.v_dim + kPackN - 1) / kPackN;
  int b = 0;
  for (; b + 2 <= blocks; b += 2) pv_tile<MR, 2>(a, t, rows, kp, pairs, b);
  if (b < blocks) pv_tile<MR, 1>(a, t, rows, kp, pairs, b);
}

// Row r's probabilities from its e_j (in t.probs, from
// qs8_softmax_exp_rows__avx512vnni) and the row's normalizer (step 5 of
// requant.h), in place over [0, keys) (0 past the limit): the P.V operand
// and, when asked for, the weights. Returns the sum of the probabilities.
int32_t normalize_probs(ProbNormalizer pn, const Qs8AttnTile& t, int r, int limit, int keys) {
  uint16_t* probs = t.probs + static_cast<ptrdiff_t>(r) * t.stride;  // e, then p
  if (pn.shift >= 17) {
    // Step 5 on 32 16-bit lanes: with P = e m (< 2^31) and b >= 17, nested
    // floors give (P + 2^(b-1)) >> b = ((P >> (b-1)) + 1) >> 1 and
    // P >> (b-1) = (P >> 16) >> (b-17): VPMULHUW, a shift and VPAVGW. Rows
    // summing below 2^16 (one key dominates) take the 32-bit loop below.
    const __m512i m16 = _mm512_set1_epi16(static_cast<int16_t>(pn.multiplier));
    const __m128i sh = _mm_cvtsi32_si128(pn.shift - 17);
    const __m512i cap = _mm512_set1_epi16(kProbMax);
    const __m512i ones = _mm512_set1_epi16(1);
    __m512i psum = _mm512_setzero_si512();
    for (int j = 0; j < keys; j += 32) {
      const int live = limit - j, room = keys - j;
      const __mmask32 m = live >= 32 ? ~__mmask32{0} : (live <= 0 ? 0u : static_cast<__mmask32>((1u << live) - 1u));
      const __mmask32 w = room >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << room) - 1u);
      const __m512i e = _mm512_maskz_loadu_epi16(m, probs + j);  // dead lanes: e = 0 -> p = 0
      const __m512i q = _mm512_srl_epi16(_mm512_mulhi_epu16(e, m16), sh);
      const __m512i p = _mm512_min_epu16(_mm512_avg_epu16(q, _mm512_setzero_si512()), cap);
      _mm512_mask_storeu_epi16(probs + j, w, p);
      psum = _mm512_add_epi32(psum, _mm512_madd_epi16(p, ones));
    }
    return _mm512_reduce_add_epi32(psum);
  }
  const avx512::ProbNorm16 norm = avx512::make_prob_norm16(pn);
  __m512i psum = _mm512_setzero_si512();
  for (int j = 0; j < keys; j += 16) {
    const int live = limit - j, room = keys - j;
    const __mmask16 m = live >= 16 ? 0xFFFFu : (live <= 0 ? 0u : static_cast<__mmask16>((1u << live) - 1u));
    const __mmask16 w = room >= 16 ? 0xFFFFu : static_cast<__mmask16>((1u << room) - 1u);
    // Dead lanes load e = 0, and (0 + 2^(b-1)) >> b = 0.
    const __m512i p = avx512::normalize_probs_x16(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, probs + j)), norm);
    _mm256_mask_storeu_epi16(probs + j, w, _mm512_cvtepi32_epi16(p));
    psum = _mm512_add_epi32(psum, p);
  }
  return _mm512_reduce_add_epi32(psum);
}

void pack_stage(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t) {
  pack_keys(a, keys, *t);
  pack_values(a, keys, *t);
  t->value_keys = packed_k(keys);
}

void qk_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int keys) {
  with_tile_rows<kMr>(rows.n, [&](auto mr) { qk_rows<decltype(mr)::value>(a, t, rows, keys); });
}

// Softmax in three sweeps over the tile's rows, so that the rows' 64-bit
// divisions (one per row, in prob_normalizer) overlap instead of each
// stalling its own row (perf: ~25 % of the normalization with 8 heads of 16).
void softmax_stage(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t, TileRows* rows,
                   int keys) {
  uint32_t sums[kMr];
  qs8_softmax_exp_rows__avx512vnni(rows->n, rows->limit, t.scores, t.stride, x, t.probs, sums);
  ProbNormalizer norms[kMr];
  for (int r = 0; r < rows->n; ++r) norms[r] = prob_normalizer(sums[r]);
  for (int r = 0; r < rows->n; ++r) {
    const int limit = rows->limit[r];
    rows->p_sum[r] = normalize_probs(norms[r], t, r, limit, packed_k(keys));
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, t.probs + static_cast<ptrdiff_t>(r) * t.stride,
                        a.weights + static_cast<ptrdiff_t>(rows->m + r) * a.weights_stride);
    }
  }
}

void pv_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int keys) {
  with_tile_rows<kMr>(rows.n, [&](auto mr) {
    pv_rows<decltype(mr)::value>(a, t, rows, t.value_keys, packed_k(keys) / 2);
  });
}

constexpr Qs8AttnTileStages kStages = {pack_stage, qk_stage, softmax_stage, pv_stage};

}  // namespace

const Qs8AttnTileStages& qs8_attention_tile_stages__avx512vnni() { return kStages; }

}  // namespace kernels
}  // namespace edgeattn
