// The tiled int8 attention of the amx path: Q.K^T and P.V on AMX-INT8
// tiles, the keys' packing and the softmax the avx512vnni ones. Same
// integers as qs8_attention__ref; reached only after cpu_supports(kAmx).
//
// The avx512vnni packing already lays the keys out as AMX's B operand: one
// head's keys as K4N16 blocks of k + 128 over the head dim (a 64-byte group
// is 16 keys x 4 bytes, one B row). TDPBSUD multiplies signed bytes (A: the
// tile's query rows, read in place) by unsigned ones (B: k + 128), so a C
// tile of n rows x 16 keys that starts at the keys' terms -zq T_j holds
// s'_j = sum_i q_i (k_ji + 128) - zq T_j, exactly the avx512vnni stage's
// scores (qs8-attention-tile-stages-avx512vnni.cc says why the row term is
// left out). The C tiles start from key_terms loaded with row stride 0 (the
// same 16 terms in every row) and are stored straight into the tile's score
// rows: no epilogue. Head-dim bytes past the last whole 64 are copied into
// a zeroed stack tile (no load reads past a query row); the keys' last
// groups load as a B tile of as many rows, which ends where the block ends.
//
// P.V: the values are packed as K4N16 blocks over the keys (16 channels x 4
// keys per 64-byte group, signed), AMX's B operand. The Q15 probabilities
// p <= 32767 are split into bytes, p = 256 h + l (the tile scratch's p_hi
// and p_lo planes), and TDPBUSD (unsigned A, signed B) sums h.v and l.v in
// two C tiles: sum_j p_j v_j = 256 sum_j h_j v_j + sum_j l_j v_j. In
// wrapping int32 this is exact, since the result itself fits (the
// probabilities of a row sum to about 2^15, so |sum_j p_j v_j| < 2^23).
// Then, as on avx512vnni, minus zv times the row's probability sum and
// requantize_s8 on 16 lanes.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/x86/amx_common.h"
#include "isa/x86/avx512_common.h"
#include "isa/x86/x86.h"
#include "microkernels.h"
#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* used as a
// don't-care operand of the set/mask intrinsics): a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace edgeattn {
namespace kernels {
namespace {

// Tiles: 0, 1 C (rows x 16 scores); 2 A (rows x 64 query bytes); 3 B (16
// groups of a key block); 4 A of the head dim's tail; 5 B of its tail
// groups.
void qk_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys) {
  const int n = rows.n;
  const int steps = a.head_dim / 64;                         // whole 64-byte steps of the head dim
  const int tail_groups = packed_k(a.head_dim) / 4 - 16 * steps;  // its last 0..15 groups
  TileConfig c = tile_config();
  for (int i = 0; i < 3; ++i) shape(&c, i, n, 64);
  shape(&c, 3, 16, 64);
  if (tail_groups > 0) {
    shape(&c, 4, n, 4 * tail_groups);
    shape(&c, 5, tail_groups, 64);
  }
  _tile_loadconfig(&c);

  const int8_t* q = a.q + static_cast<ptrdiff_t>(rows.m) * a.q_stride;
  if (tail_groups > 0) {
    alignas(64) int8_t q_tail[kQs8AttnTileRows][64];
    std::memset(q_tail, 0, sizeof(q_tail));
    for (int r = 0; r < n; ++r) {
      std::memcpy(q_tail[r], q + static_cast<ptrdiff_t>(r) * a.q_stride + 64 * steps,
                  static_cast<size_t>(a.head_dim - 64 * steps));
    }
    _tile_loadd(4, q_tail, 64);
  }
  if (steps == 1) _tile_loadd(2, q, a.q_stride);  // a head dim of 64..127: one A tile for every block
  const size_t block = packed_block_bytes(a.head_dim);
  const long score_stride = 4L * t.stride;
  const int blocks = (keys + kPackN - 1) / kPackN;
  for (int b = 0; b < blocks; b += 2) {
    const bool two = b + 1 < blocks;
    const int8_t* k0 = t.keys + static_cast<size_t>(b) * block;
    const int8_t* k1 = k0 + block;
    _tile_loadd(0, t.key_terms + kPackN * b, 0);
    if (two) _tile_loadd(1, t.key_terms + kPackN * (b + 1), 0);
    for (int s = 0; s < steps; ++s) {
      if (steps > 1) _tile_loadd(2, q + 64 * s, a.q_stride);
      _tile_loadd(3, k0 + 1024 * static_cast<ptrdiff_t>(s), 64);
      _tile_dpbsud(0, 2, 3);
      if (two) {
        _tile_loadd(3, k1 + 1024 * static_cast<ptrdiff_t>(s), 64);
        _tile_dpbsud(1, 2, 3);
      }
    }
    if (tail_groups > 0) {
      _tile_loadd(5, k0 + 1024 * static_cast<ptrdiff_t>(steps), 64);
      _tile_dpbsud(0, 4, 5);
      if (two) {
        _tile_loadd(5, k1 + 1024 * static_cast<ptrdiff_t>(steps), 64);
        _tile_dpbsud(1, 4, 5);
      }
    }
    _tile_stored(0, t.scores + kPackN * b, score_stride);
    if (two) _tile_stored(1, t.scores + kPackN * (b + 1), score_stride);
  }
  _tile_release();
}

// Values of keys [0, n) as K4N16 blocks over the keys: channel c, key j at
// packed_offset(c, j, packed_k(n)), signed, 0 past n and past v_dim. A
// 4 x 16 byte transpose per group: the four keys' 16 channels interleaved
// into 16 words of 4 keys.
void pack_values(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const int kp = packed_k(n);
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  for (int c = 0; c < a.v_dim; c += kPackN) {
    const __mmask16 cm = avx512::lanes16(a.v_dim - c < kPackN ? a.v_dim - c : kPackN);
    int8_t* dst = t.values + static_cast<size_t>(c / kPackN) * block;
    for (int j = 0; j < kp; j += 4) {
      __m128i r[4];
      for (int i = 0; i < 4; ++i) {
        r[i] = j + i < n ? _mm_maskz_loadu_epi8(cm, a.v + static_cast<ptrdiff_t>(j + i) * a.v_stride + c)
                         : _mm_setzero_si128();
      }
      const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), lo23 = _mm_unpacklo_epi8(r[2], r[3]);
      const __m128i hi01 = _mm_unpackhi_epi8(r[0], r[1]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
      __m128i* out = reinterpret_cast<__m128i*>(dst + 16 * static_cast<ptrdiff_t>(j));
      _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(lo01, lo23));  // channels 0..3
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));  // 4..7
      _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));  // 8..11
      _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));  // 12..15
    }
  }
}

void pack_stage(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t) {
  qs8_attn_pack_keys__avx512vnni(a, keys, *t);
  pack_values(a, keys, *t);
  t->value_keys = packed_k(keys);
}

// The avx512vnni softmax (its probabilities in t.probs, 0 up to packed_k(keys)).
void softmax_stage(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t,
                   Qs8AttnTileRows* rows, int keys) {
  qs8_attention_tile_stages__avx512vnni().softmax(a, x, t, rows, keys);
}

// Tiles: 0 C of h.v, 1 C of l.v (rows x 16 channels); 2, 3 A of h, l (rows
// x 64 keys); 4 B (16 groups of 4 keys of a value block); 5, 6 A of h, l
// over the last keys; 7 B of their groups.
void pv_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const Qs8AttnTileRows& rows, int keys) {
  const int n = rows.n;
  const int kp = packed_k(keys);
  const int steps = kp / 64;
  const int tail_groups = kp / 4 - 16 * steps;
  // The byte planes of the rows' probabilities over [0, kp).
  for (int r = 0; r < n; ++r) {
    const uint16_t* p = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
    uint8_t* lo = t.p_lo + static_cast<ptrdiff_t>(r) * t.stride;
    uint8_t* hi = t.p_hi + static_cast<ptrdiff_t>(r) * t.stride;
    for (int j = 0; j < kp; j += 32) {
      const __mmask32 m = kp - j >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (kp - j)) - 1u);
      const __m512i v = _mm512_maskz_loadu_epi16(m, p + j);
      _mm256_mask_storeu_epi8(lo + j, m, _mm512_cvtepi16_epi8(_mm512_and_si512(v, _mm512_set1_epi16(0xFF))));
      _mm256_mask_storeu_epi8(hi + j, m, _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
    }
  }
  TileConfig c = tile_config();
  for (int i = 0; i < 4; ++i) shape(&c, i, n, 64);
  shape(&c, 4, 16, 64);
  if (tail_groups > 0) {
    shape(&c, 5, n, 4 * tail_groups);
    shape(&c, 6, n, 4 * tail_groups);
    shape(&c, 7, tail_groups, 64);
  }
  _tile_loadconfig(&c);
  if (tail_groups > 0) {
    _tile_loadd(5, t.p_hi + 64 * steps, t.stride);
    _tile_loadd(6, t.p_lo + 64 * steps, t.stride);
  }
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(t.value_keys);
  const avx512::Rq16 rq = avx512::make_rq16(_mm512_set1_epi32(a.pv_mult), _mm512_set1_epi32(a.pv_shift));
  const __m512i zp = _mm512_set1_epi32(a.out_zp);
  for (int ch = 0; ch < a.v_dim; ch += kPackN) {
    const int8_t* w = t.values + static_cast<size_t>(ch / kPackN) * block;
    _tile_zero(0);
    _tile_zero(1);
    for (int s = 0; s < steps; ++s) {
      _tile_loadd(2, t.p_hi + 64 * s, t.stride);
      _tile_loadd(3, t.p_lo + 64 * s, t.stride);
      _tile_loadd(4, w + 1024 * static_cast<ptrdiff_t>(s), 64);
      _tile_dpbusd(0, 2, 4);
      _tile_dpbusd(1, 3, 4);
    }
    if (tail_groups > 0) {
      _tile_loadd(7, w + 1024 * static_cast<ptrdiff_t>(steps), 64);
      _tile_dpbusd(0, 5, 7);
      _tile_dpbusd(1, 6, 7);
    }
    alignas(64) int32_t hs[kQs8AttnTileRows][16], ls[kQs8AttnTileRows][16];
    _tile_stored(0, hs, 64);
    _tile_stored(1, ls, 64);
    const __mmask16 mask = avx512::lanes16(a.v_dim - ch < kPackN ? a.v_dim - ch : kPackN);
    for (int r = 0; r < n; ++r) {
      const __m512i sum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hs[r]), 8), _mm512_load_si512(ls[r]));
      const __m512i s = _mm512_sub_epi32(sum, _mm512_set1_epi32(rows.p_sum[r] * a.v_zp));
      _mm_mask_storeu_epi8(a.out + static_cast<ptrdiff_t>(rows.m + r) * a.out_stride + ch, mask,
                           avx512::requantize_s8_x16(s, rq, zp));
    }
  }
  _tile_release();
}

constexpr Qs8AttnTileStages kStages = {pack_stage, qk_stage, softmax_stage, pv_stage};

}  // namespace

const Qs8AttnTileStages& qs8_attention_tile_stages__amx() { return kStages; }

}  // namespace kernels
}  // namespace edgeattn
