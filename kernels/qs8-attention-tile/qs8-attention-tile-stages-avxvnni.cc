// Tiled int8 attention with AVX-VNNI (VEX VPDPBUSD on ymm): the avxvnni
// path's qs8_attention, for CPUs with AVX-VNNI but no AVX-512 (Intel Alder
// Lake and later client cores, the N100-class gateway parts). Same integers
// as qs8_attention__ref; reached only after cpu_supports(kAvxVnni).
//
// The design is the zmm kernel's (qs8-attention-tile-stages-avx512vnni.cc; the
// numerics are derived there): one head's keys (k + 128, K4N16) and values
// (byte pairs of two keys) packed once into the tile scratch, Q.K^T as
// VPDPBUSD tiles and P.V as VPDPWSSD tiles on the 16-bit probabilities, both
// 4 query rows x 16 lanes (two ymm of 8 lanes). Without AVX-512's masked
// loads the packing and the softmax use scalar tails. The 8-row tile of the
// scratch is processed as two 4-row halves; its byte planes are unused. The tile loop is the
// shared qs8_attention_tiled_with (kernels/ref/attention_tiled.cc); this
// file gives its four stages (attention_tile.h).
//
// tests/kernels/vnni_emu_check.cc compiles this file with VPDPBUSD emulated
// in AVX2, so CPUs without AVX-VNNI (and qemu) check it too.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/avx2_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"

#ifndef EA_DPBUSD
#define EA_DPBUSD _mm256_dpbusd_avx_epi32
#endif
#ifndef EA_DPWSSD
#define EA_DPWSSD _mm256_dpwssd_avx_epi32
#endif

namespace edgeattn {
namespace kernels {
// Internal linkage: vnni_emu_check compiles this file again with VPDPBUSD
// emulated, next to the library's copy.
namespace tile_vnni {
namespace {

using avx2::add_zp_sat8;
using avx2::hsum_s32;
using avx2::requantize_x8;
using avx2::Rq8;
using avx2::rq8_uniform;
using avx2::store8;

constexpr int kMr = 4;

inline __m256i load_ymm(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Keys [0, n) as K4N16 blocks of k + 128 (bytes past the head dim and keys
// n..packed_n(n)-1 are 0), key_terms[j] = -zq * sum_i (k_ji + 128).
void pack_keys(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const size_t block = packed_block_bytes(a.head_dim);
  const int groups = a.head_dim / 4, tail = a.head_dim - 4 * groups;
  const int np = packed_n(n);
  for (int j = 0; j < np; ++j) {
    int8_t* dst = t.keys + static_cast<size_t>(j / kPackN) * block + static_cast<size_t>(j % kPackN) * 4;
    if (j >= n) {  // padding keys: zero words (their scores are never read)
      for (int g = 0; g < packed_k(a.head_dim) / 4; ++g) std::memset(dst + 64 * static_cast<ptrdiff_t>(g), 0, 4);
      t.key_terms[j] = 0;
      continue;
    }
    const int8_t* k = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
    uint32_t sum = 0;
    for (int g = 0; g < groups; ++g) {
      uint32_t w;
      std::memcpy(&w, k + 4 * g, 4);
      w ^= 0x80808080u;
      std::memcpy(dst + 64 * static_cast<ptrdiff_t>(g), &w, 4);
      sum += (w & 0xFF) + ((w >> 8) & 0xFF) + ((w >> 16) & 0xFF) + (w >> 24);
    }
    if (tail != 0) {
      uint8_t b[4] = {0, 0, 0, 0};
      for (int i = 0; i < tail; ++i) {
        b[i] = static_cast<uint8_t>(k[4 * groups + i] ^ 0x80);
        sum += b[i];
      }
      std::memcpy(dst + 64 * static_cast<ptrdiff_t>(groups), b, 4);
    }
    t.key_terms[j] = static_cast<int32_t>((0u - static_cast<uint32_t>(a.q_zp)) * sum);
  }
}

// Values of keys [0, n) in pairs of keys per 16 channels (the zmm kernel's
// layout): 32 bytes (v_j[c], v_j+1[c]) for c = 0..15, so that VPMOVSXBW of
// each half gives the 8 int16 pairs of VPDPWSSD (keys n..kp-1 and channels
// past v_dim are 0). The block of 16 channels takes 16 kp bytes, like K4N16.
void pack_values(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const int kp = packed_k(n);
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  for (int c = 0; c < a.v_dim; c += kPackN) {
    const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
    int8_t* dst = t.values + static_cast<size_t>(c / kPackN) * block;
    for (int j = 0; j < kp; j += 2) {
      __m128i r[2];
      for (int i = 0; i < 2; ++i) {
        alignas(16) int8_t row[16] = {};
        if (j + i < n) std::memcpy(row, a.v + static_cast<ptrdiff_t>(j + i) * a.v_stride + c, static_cast<size_t>(cnt));
        r[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(row));
      }
      __m128i* out = reinterpret_cast<__m128i*>(dst + 16 * static_cast<ptrdiff_t>(j));
      _mm_storeu_si128(out + 0, _mm_unpacklo_epi8(r[0], r[1]));  // channels 0..7
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi8(r[0], r[1]));  // 8..15
    }
  }
}

using Rows = Qs8AttnTileRows;

// The row term -(128 + zk) sum_i (q_i - zq) of Q.K is left out, as on zmm
// (qs8-attention-tile-stages-avx512vnni.cc: the softmax sees only differences, and the
// scores without it never wrap).

// The K loop of a full 4-row x 16-lane Q.K tile with 8 named accumulators,
// updated in place: acc[r][h] += VPDPBUSD over `groups` 4-byte groups of the
// packed keys w (the unsigned operand, k + 128; 64 bytes per group, h = its
// two 32-byte halves) and the 4 query bytes at row[r] + 4 g broadcast. GCC
// 12 compiles the accumulator-array loops below with a register copy per
// accumulator and step and a spill (as in the zmm tile,
// qs8-attention-tile-stages-avx512vnni.cc); named variables keep them in registers.
#define EA_ACC_IN(r) __m256i a##r##0 = acc[r][0], a##r##1 = acc[r][1];
#define EA_ACC_ROW(r)                                                                 \
  {                                                                                   \
    int32_t word;                                                                     \
    std::memcpy(&word, row[r] + 4 * static_cast<ptrdiff_t>(g), 4);                    \
    const __m256i bv = _mm256_set1_epi32(word);                                       \
    a##r##0 = EA_DPBUSD(a##r##0, v0, bv);                                             \
    a##r##1 = EA_DPBUSD(a##r##1, v1, bv);                                             \
  }
#define EA_ACC_OUT(r) \
  acc[r][0] = a##r##0;  \
  acc[r][1] = a##r##1;
__attribute__((noinline)) void qk_acc_4x2(const uint8_t* const* rows4, const int8_t* w, int groups,
                                          __m256i (*acc)[2]) {
  const uint8_t* row[4] = {rows4[0], rows4[1], rows4[2], rows4[3]};
  EA_ACC_IN(0) EA_ACC_IN(1) EA_ACC_IN(2) EA_ACC_IN(3)
  for (int g = 0; g < groups; ++g) {
    const __m256i v0 = load_ymm(w + 64 * static_cast<ptrdiff_t>(g));
    const __m256i v1 = load_ymm(w + 64 * static_cast<ptrdiff_t>(g) + 32);
    EA_ACC_ROW(0) EA_ACC_ROW(1) EA_ACC_ROW(2) EA_ACC_ROW(3)
  }
  EA_ACC_OUT(0) EA_ACC_OUT(1) EA_ACC_OUT(2) EA_ACC_OUT(3)
}
#undef EA_ACC_ROW

// The same for P.V: acc[r][h] += VPDPWSSD over `pairs` key pairs of the
// value block w (32 bytes per pair, each half sign-extended to 8 int16
// pairs) with row r's probability pair at row[r] + 2 g broadcast (p <= 32767
// is a valid int16).
#define EA_ACC_ROW(r)                                                  \
  {                                                                    \
    int32_t word;                                                      \
    std::memcpy(&word, row[r] + 2 * static_cast<ptrdiff_t>(g), 4);     \
    const __m256i bv = _mm256_set1_epi32(word);                        \
    a##r##0 = EA_DPWSSD(a##r##0, bv, v0);                              \
    a##r##1 = EA_DPWSSD(a##r##1, bv, v1);                              \
  }
inline __m256i value_pairs8(const int8_t* w) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))); }
__attribute__((noinline)) void pv_acc_4x2(const uint16_t* const* rows4, const int8_t* w, int pairs,
                                          __m256i (*acc)[2]) {
  const uint16_t* row[4] = {rows4[0], rows4[1], rows4[2], rows4[3]};
  EA_ACC_IN(0) EA_ACC_IN(1) EA_ACC_IN(2) EA_ACC_IN(3)
  for (int g = 0; g < pairs; ++g) {
    const __m256i v0 = value_pairs8(w + 32 * static_cast<ptrdiff_t>(g));
    const __m256i v1 = value_pairs8(w + 32 * static_cast<ptrdiff_t>(g) + 16);
    EA_ACC_ROW(0) EA_ACC_ROW(1) EA_ACC_ROW(2) EA_ACC_ROW(3)
  }
  EA_ACC_OUT(0) EA_ACC_OUT(1) EA_ACC_OUT(2) EA_ACC_OUT(3)
}
#undef EA_ACC_IN
#undef EA_ACC_ROW
#undef EA_ACC_OUT

// Scores of rows r0..r0+MR-1 (tile rows) for key blocks [0, blocks).
template <int MR>
void qk(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Rows& rows, const int32_t* q_tail, int r0,
        int blocks) {
  const size_t block = packed_block_bytes(a.head_dim);
  const int groups = a.head_dim / 4;
  const int8_t* q[MR];
  for (int r = 0; r < MR; ++r) q[r] = a.q + static_cast<ptrdiff_t>(rows.m + r0 + r) * a.q_stride;
  for (int b = 0; b < blocks; ++b) {
    const int8_t* w = t.keys + static_cast<size_t>(b) * block;
    __m256i acc[MR][2];
    const int j = kPackN * b;
    const __m256i kt0 = load_ymm(t.key_terms + j), kt1 = load_ymm(t.key_terms + j + 8);  // -zq T_j
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = kt0;
      acc[r][1] = kt1;
    }
    if constexpr (MR == 4) {
      const uint8_t* qb[4];
      for (int r = 0; r < 4; ++r) qb[r] = reinterpret_cast<const uint8_t*>(q[r]);
      qk_acc_4x2(qb, w, groups, acc);
    } else {
      for (int g = 0; g < groups; ++g) {
        const __m256i w0 = load_ymm(w + 64 * static_cast<ptrdiff_t>(g));
        const __m256i w1 = load_ymm(w + 64 * static_cast<ptrdiff_t>(g) + 32);
        for (int r = 0; r < MR; ++r) {
          int32_t word;
          std::memcpy(&word, q[r] + 4 * g, 4);
          const __m256i qv = _mm256_set1_epi32(word);
          acc[r][0] = EA_DPBUSD(acc[r][0], w0, qv);
          acc[r][1] = EA_DPBUSD(acc[r][1], w1, qv);
        }
      }
    }
    if (4 * groups < a.head_dim) {
      const __m256i w0 = load_ymm(w + 64 * static_cast<ptrdiff_t>(groups));
      const __m256i w1 = load_ymm(w + 64 * static_cast<ptrdiff_t>(groups) + 32);
      for (int r = 0; r < MR; ++r) {
        const __m256i qv = _mm256_set1_epi32(q_tail[r0 + r]);
        acc[r][0] = EA_DPBUSD(acc[r][0], w0, qv);
        acc[r][1] = EA_DPBUSD(acc[r][1], w1, qv);
      }
    }
    for (int r = 0; r < MR; ++r) {
      int32_t* s = t.scores + static_cast<ptrdiff_t>(r0 + r) * t.stride + j;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(s), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + 8), acc[r][1]);
    }
  }
}

// Row r's softmax over [0, limit) (qs8_softmax_exp_row_with__avx2 into
// t.probs, then step 5 of requant.h in place) over [0, keys) (0 past the
// limit, whole 16-key blocks): the P.V operand and, when asked for, the
// weights. Returns the sum of the probabilities.
int32_t softmax_probs(const SoftmaxExpParams& x, const Qs8AttnTile& t, int r, int limit, int keys) {
  const int32_t* s = t.scores + static_cast<ptrdiff_t>(r) * t.stride;
  uint16_t* probs = t.probs + static_cast<ptrdiff_t>(r) * t.stride;  // e, then p
  const uint32_t sum = limit > 0 ? qs8_softmax_exp_row_with__avx2(limit, s, x, probs) : 1u;
  const ProbNormalizer norm = prob_normalizer(sum);
  auto live_e = [&](int j) {  // e over [j, j + 16), 0 past the limit
    if (limit - j >= 16) return load_ymm(probs + j);
    alignas(32) uint16_t part[16] = {};
    for (int i = 0; i < limit - j; ++i) part[i] = probs[j + i];
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(part));
  };
  if (norm.shift >= 17) {  // 16-bit lanes (avx2::normalize_probs_x16)
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i psum = _mm256_setzero_si256();
    for (int j = 0; j < keys; j += 16) {
      const __m256i p = avx2::normalize_probs_x16(live_e(j), norm);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + j), p);
      psum = _mm256_add_epi32(psum, _mm256_madd_epi16(p, ones));
    }
    return hsum_s32(psum);
  }
  // p = min(32767, (e m + 2^(b-1)) >> b): e m < 2^31, one vpmulld is exact;
  // lanes past the limit hold e = 0, and (0 + 2^(b-1)) >> b = 0.
  const __m256i m = _mm256_set1_epi32(static_cast<int32_t>(norm.multiplier));
  const __m256i rnd = _mm256_set1_epi32(static_cast<int32_t>(1u << (norm.shift - 1)));
  const __m256i cap = _mm256_set1_epi32(kProbMax);
  const __m128i sh = _mm_cvtsi32_si128(norm.shift);
  __m256i psum = _mm256_setzero_si256();
  for (int j = 0; j < keys; j += 16) {  // up to the row's stride (whole 16-key blocks)
    const __m256i e16 = live_e(j);
    auto normalize = [&](__m128i e8) {
      const __m256i e = _mm256_cvtepu16_epi32(e8);
      return _mm256_min_epu32(_mm256_srl_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, m), rnd), sh), cap);
    };
    const __m256i p_lo = normalize(_mm256_castsi256_si128(e16));
    const __m256i p_hi = normalize(_mm256_extracti128_si256(e16, 1));
    psum = _mm256_add_epi32(psum, _mm256_add_epi32(p_lo, p_hi));
    // vpackusdw per 128-bit lane: qwords (lo 0-3, hi 0-3, lo 4-7, hi 4-7) -> (0, 2, 1, 3).
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + j),
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(p_lo, p_hi), 0xD8));
  }
  return hsum_s32(psum);
}

// out rows r0..r0+MR-1 over `pairs` key pairs, every 16-channel block.
template <int MR>
void pv(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Rows& rows, int r0, int kp, int pairs) {
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  const Rq8 rq = rq8_uniform(a.pv_mult, a.pv_shift);
  const __m128i zp16 = _mm_set1_epi16(static_cast<int16_t>(a.out_zp));
  const uint16_t* pr[MR];
  for (int r = 0; r < MR; ++r) pr[r] = t.probs + static_cast<ptrdiff_t>(r0 + r) * t.stride;
  for (int c = 0; c < a.v_dim; c += kPackN) {
    const int8_t* w = t.values + static_cast<size_t>(c / kPackN) * block;
    __m256i acc[MR][2];
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    if constexpr (MR == 4) {
      pv_acc_4x2(pr, w, pairs, acc);
    } else {
      for (int g = 0; g < pairs; ++g) {
        const __m256i v0 = value_pairs8(w + 32 * static_cast<ptrdiff_t>(g));
        const __m256i v1 = value_pairs8(w + 32 * static_cast<ptrdiff_t>(g) + 16);
        for (int r = 0; r < MR; ++r) {
          int32_t word;
          std::memcpy(&word, pr[r] + 2 * g, 4);
          const __m256i pw = _mm256_set1_epi32(word);
          acc[r][0] = EA_DPWSSD(acc[r][0], pw, v0);
          acc[r][1] = EA_DPWSSD(acc[r][1], pw, v1);
        }
      }
    }
    const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
    for (int r = 0; r < MR; ++r) {
      const __m256i corr = _mm256_set1_epi32(rows.p_sum[r0 + r] * a.v_zp);
      alignas(16) int8_t y[16];
      store8(y, add_zp_sat8(requantize_x8(_mm256_sub_epi32(acc[r][0], corr), rq), zp16));
      store8(y + 8, add_zp_sat8(requantize_x8(_mm256_sub_epi32(acc[r][1], corr), rq), zp16));
      std::memcpy(a.out + static_cast<ptrdiff_t>(rows.m + r0 + r) * a.out_stride + c, y, static_cast<size_t>(cnt));
    }
  }
}

void pack_stage(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t) {
  pack_keys(a, keys, *t);
  pack_values(a, keys, *t);
  t->value_keys = packed_k(keys);
}

void qk_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Rows& rows, int keys) {
  int32_t q_tail[kQs8AttnTileRows];  // the partial last 4-byte group of each row's q, if any
  qs8_attention_tile_q_tails(a, rows, q_tail);
  for (int r0 = 0; r0 < rows.n; r0 += kMr) {
    with_tile_rows<kMr>(rows.n - r0,
              [&](auto mr) { qk<decltype(mr)::value>(a, t, rows, q_tail, r0, (keys + kPackN - 1) / kPackN); });
  }
}

void softmax_stage(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t, Rows* rows,
                   int keys) {
  for (int r = 0; r < rows->n; ++r) {
    const int limit = rows->limit[r];
    rows->p_sum[r] = softmax_probs(x, t, r, limit, packed_k(keys));
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, t.probs + static_cast<ptrdiff_t>(r) * t.stride,
                        a.weights + static_cast<ptrdiff_t>(rows->m + r) * a.weights_stride);
    }
  }
}

void pv_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Rows& rows, int keys) {
  for (int r0 = 0; r0 < rows.n; r0 += kMr) {
    with_tile_rows<kMr>(rows.n - r0, [&](auto mr) {
      pv<decltype(mr)::value>(a, t, rows, r0, t.value_keys, packed_k(keys) / 2);
    });
  }
}

constexpr Qs8AttnTileStages kStages = {pack_stage, qk_stage, softmax_stage, pv_stage};

}  // namespace
}  // namespace tile_vnni

const Qs8AttnTileStages& qs8_attention_tile_stages__avxvnni() { return tile_vnni::kStages; }

}  // namespace kernels
}  // namespace edgeattn
