// The tiled int8 attention for the Arm paths, shared by
// qs8-attention-tile-stages-neon.cc and qs8-attention-tile-stages-neondot.cc: the qs8_attention of `neon`
// (Armv7-A / AArch64) and of `neondot` (AArch64 SDOT/UDOT) whenever the
// caller passes tile scratch and at least kQs8AttnTileMinRows query rows.
// Same integers as qs8_attention__ref. Compiled with the baseline flags: the
// only dot-product code it reaches is in the SDOT files (isa/neondot/sdot.h),
// through function pointers and only on the neondot path.
//
// Fewer rows, or no tile scratch, take the shared row driver
// (qs8_attention_rows, one row at a time, no buffers of its own). Here one
// head's keys (and, for neondot, values) are repacked once into the tile
// scratch of attention_tile.h, and Q.K^T and P.V run as GEMM tiles of up to
// 8 query rows: the four stages of attention_tile.h (pack, qk, softmax, pv,
// at the end of this header) under the shared tile loop. The scratch regions'
// sizes are the contract; their contents are private to these files and differ
// from the x86 kernel's:
//
// Keys: K4N16 (N = keys, K = head dim) of the keys as they are (signed k, not
// k + 128: SDOT and NEON's smull multiply signed by signed). Q.K^T is then
// exactly the int8 linear's accumulation with the query rows as activations
// (neondot: qs8_attn_qk_tile__neondot, which keeps the query rows in
// registers across the key blocks; neon: the linear's, int16-pair form when
// the pair rule of isa/neon/linear_neon.cc allows it), written straight into the tile's
// score rows.
// With D the head dim, B_r = sum_i q_ri and T_j = sum_i k_ji,
//   sum_i (q_ri - zq)(k_ji - zk) = sum_i q_ri k_ji - zq T_j + (D zq zk - zk B_r).
// The last term is the same for every key of row r, and the softmax only
// sees differences max - s_j, so it is never computed: the kernel's score is
// s'_j = sum_i q_ri k_ji - zq T_j: the Q.K accumulators start from
// key_terms[j] = -zq T_j. |s'_j| <= 2 * 128 * 128 * D < 2^31 for every head dim
// whose reference sums fit int32 (D < 33026), so s' never wraps and
// max' - s'_j is exactly the reference's max - s_j.
//
// Softmax (softmax_row below): the integer softmax of requant.h per row over
// the row's own key limit (causal rows of one tile differ; limits never
// decrease down the rows), writing the probabilities straight into what the
// P.V step reads.
//
// P.V, neondot: values packed K4N16 (N = value channels, K = keys) as
// unsigned u = v + 128, probabilities split into unsigned byte planes
// p = 256 ph + pl (pl <= 255, ph <= 127), UDOT by lane:
//   sum_j p_j (v_j - zv) = 256 sum_j ph_j u_j + sum_j pl_j u_j - (128 + zv) sum_j p_j.
// The planes are zero past each row's limit, so whole 4-key groups can be
// summed for every row of the tile; sum_j p_j <= 32768 + n/2 and u <= 255 keep
// the wrapping uint32 sums exact. The tile requantizes its accumulators
// itself and stores int8 (qs8_attn_pv_tile__neondot).
// P.V, neon: no byte dot product, and smull-based byte planes would cost
// twice the instructions of the 16-bit products, so the rows' Q15
// probabilities (zero past each limit) go to pv_group (qs8_pv_rows__neon)
// (smlal by lane, 4 rows share each value load) over the tile's key count
// (p <= 32767 fits int16); if v_dim % 16 != 0, the tile's rows use
//
// Header-only: templates and inline functions in a named namespace, so the
// two variants' files share one copy of what both use.
#ifndef EDGEATTN_KERNELS_ISA_NEON_ATTENTION_TILE_NEON_H_
#define EDGEATTN_KERNELS_ISA_NEON_ATTENTION_TILE_NEON_H_

#include <arm_neon.h>

#include <cstring>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "isa/neon/neon.h"
#include "isa/neon/neon_common.h"
#include "isa/neon/softmax_neon.h"
#include "isa/neondot/sdot.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace neon_tile {

constexpr int kMr = kQs8AttnTileRows;

// Transpose of 4 x 4 32-bit words: out[w] = word w of a[0..3].
inline void transpose_words(const int32x4_t (&a)[4], int32x4_t (&out)[4]) {
  const int32x4x2_t t01 = vtrnq_s32(a[0], a[1]);  // {a0w0 a1w0 a0w2 a1w2}, {a0w1 a1w1 a0w3 a1w3}
  const int32x4x2_t t23 = vtrnq_s32(a[2], a[3]);
  out[0] = vcombine_s32(vget_low_s32(t01.val[0]), vget_low_s32(t23.val[0]));
  out[1] = vcombine_s32(vget_low_s32(t01.val[1]), vget_low_s32(t23.val[1]));
  out[2] = vcombine_s32(vget_high_s32(t01.val[0]), vget_high_s32(t23.val[0]));
  out[3] = vcombine_s32(vget_high_s32(t01.val[1]), vget_high_s32(t23.val[1]));
}

// Keys [0, n) as K4N16 blocks of signed bytes (padding keys and bytes past the
// head dim zero); key_terms[j] = -zq * sum_i k_ji (wrapping) when zq != 0,
// for j < round_up(n, 16) (the Q.K accumulators start from it).
inline void pack_keys(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const int dim = a.head_dim;
  const int kp = packed_k(dim);
  const size_t block = packed_block_bytes(dim);
  std::memset(t.keys, 0, static_cast<size_t>((n + kPackN - 1) / kPackN) * block);
  const int d16 = dim & ~15;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const int8_t* k0 = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
    // Keys j..j+3 are consecutive 4-byte words of one group row.
    int8_t* dst = t.keys + static_cast<size_t>(j / kPackN) * block + (j % kPackN) * kPackK;
    for (int off = 0; off < d16; off += 16) {
      int32x4_t rows[4], words[4];
      for (int r = 0; r < 4; ++r) {
        rows[r] = vreinterpretq_s32_s8(vld1q_s8(k0 + static_cast<ptrdiff_t>(r) * a.k_stride + off));
      }
      transpose_words(rows, words);
      for (int w = 0; w < 4; ++w) vst1q_s32(reinterpret_cast<int32_t*>(dst + 16 * (off + 4 * w)), words[w]);
    }
    for (int r = 0; r < 4; ++r) {
      for (int i = d16; i < dim; ++i) {
        t.keys[packed_offset(j + r, i, kp)] = k0[static_cast<ptrdiff_t>(r) * a.k_stride + i];
      }
    }
  }
  for (; j < n; ++j) {
    for (int i = 0; i < dim; ++i) t.keys[packed_offset(j, i, kp)] = a.k[static_cast<ptrdiff_t>(j) * a.k_stride + i];
  }
  if (a.q_zp == 0) return;
  const uint32_t zq = static_cast<uint32_t>(a.q_zp);
  for (j = n; j < packed_n(n); ++j) t.key_terms[j] = 0;
  for (j = 0; j < n; ++j) {
    const int8_t* kr = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
    int32x4_t s = vdupq_n_s32(0);
    for (int i = 0; i < d16; i += 16) s = vpadalq_s16(s, vpaddlq_s8(vld1q_s8(kr + i)));
    int32_t sum = hsum_s32(s);
    for (int i = d16; i < dim; ++i) sum += kr[i];
    t.key_terms[j] = static_cast<int32_t>(0u - zq * static_cast<uint32_t>(sum));
  }
}

#if defined(__aarch64__)
// Values of keys [0, n) as K4N16 with N = channels, K = keys, each byte
// v + 128 (unsigned, for UDOT). Per 4 keys and 16 channels the 4 value rows
// are interleaved so that each channel's 4 keys are one word. Padding keys
// are 128 (their probabilities are 0); channels past v_dim are never stored.
inline void pack_values_u8(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
  const int kp = packed_k(n);
  const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(kp);
  const uint8x16_t k80 = vdupq_n_u8(0x80);
  for (int c = 0; c < a.v_dim; c += kPackN) {
    const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
    uint8_t* dst = reinterpret_cast<uint8_t*>(t.values) + static_cast<size_t>(c / kPackN) * block;
    for (int j = 0; j < kp; j += kPackK) {
      uint8x16_t r[4];
      for (int i = 0; i < 4; ++i) {
        const uint8_t* src = reinterpret_cast<const uint8_t*>(a.v) + static_cast<ptrdiff_t>(j + i) * a.v_stride + c;
        if (j + i >= n) {
          r[i] = vdupq_n_u8(0);
        } else if (cnt == kPackN) {
          r[i] = vld1q_u8(src);
        } else {  // never read past the row's v_dim bytes
          uint8_t tmp[kPackN] = {};
          std::memcpy(tmp, src, static_cast<size_t>(cnt));
          r[i] = vld1q_u8(tmp);
        }
        r[i] = veorq_u8(r[i], k80);
      }
      const uint8x16x2_t z01 = vzipq_u8(r[0], r[1]);
      const uint8x16x2_t z23 = vzipq_u8(r[2], r[3]);
      const uint16x8x2_t lo = vzipq_u16(vreinterpretq_u16_u8(z01.val[0]), vreinterpretq_u16_u8(z23.val[0]));
      const uint16x8x2_t hi = vzipq_u16(vreinterpretq_u16_u8(z01.val[1]), vreinterpretq_u16_u8(z23.val[1]));
      uint8_t* out = dst + 16 * static_cast<ptrdiff_t>(j);
      vst1q_u8(out, vreinterpretq_u8_u16(lo.val[0]));       // channels 0..3
      vst1q_u8(out + 16, vreinterpretq_u8_u16(lo.val[1]));  // 4..7
      vst1q_u8(out + 32, vreinterpretq_u8_u16(hi.val[0]));  // 8..11
      vst1q_u8(out + 48, vreinterpretq_u8_u16(hi.val[1]));  // 12..15
    }
  }
}
#endif

using TileRows = Qs8AttnTileRows;

// ---------------------------------------------------------------- softmax --
// The softmax of requant.h (softmax_neon.h) per row over the row's own key
// limit: the exponents into t.probs, then the probabilities
// straight into what the P.V step reads, zero over [limit, end). kPlanes:
// into the byte planes (dot path; one UZP1/UZP2 pair splits 16), kProbs:
// into t.probs (the neon P.V and the weights output). Returns the sum of the
// probabilities.
template <bool kPlanes, bool kProbs, bool kHi16>
inline __attribute__((always_inline)) uint32_t normalize_row(const Norm4& norm, uint16_t* probs, uint8_t* lo,
                                                             uint8_t* hi, int limit, int end) {
  uint32x4_t psum = vdupq_n_u32(0);
  int j = 0;
  for (; j + 16 <= limit; j += 16) {
    const uint16x8_t p0 = normalize_x8<kHi16>(vld1q_u16(probs + j), norm);
    const uint16x8_t p1 = normalize_x8<kHi16>(vld1q_u16(probs + j + 8), norm);
    if (kProbs) {
      vst1q_u16(probs + j, p0);
      vst1q_u16(probs + j + 8, p1);
    }
    if (kPlanes) {
      const uint8x16x2_t b = vuzpq_u8(vreinterpretq_u8_u16(p0), vreinterpretq_u8_u16(p1));
      vst1q_u8(lo + j, b.val[0]);
      vst1q_u8(hi + j, b.val[1]);
    }
    psum = vpadalq_u16(psum, vaddq_u16(p0, p1));  // p <= 32767: the pair fits uint16
  }
  if (j + 8 <= limit) {
    const uint16x8_t p = normalize_x8<kHi16>(vld1q_u16(probs + j), norm);
    if (kProbs) vst1q_u16(probs + j, p);
    if (kPlanes) {
      vst1_u8(lo + j, vmovn_u16(p));
      vst1_u8(hi + j, vshrn_n_u16(p, 8));
    }
    psum = vpadalq_u16(psum, p);
    j += 8;
  }
  uint32_t total = hsum_u32(psum);
  for (; j < end; ++j) {
    const uint16_t p = j < limit ? normalize_prob_q15(probs[j], norm.norm) : 0;
    if (kProbs) probs[j] = p;
    if (kPlanes) {
      lo[j] = static_cast<uint8_t>(p);
      hi[j] = static_cast<uint8_t>(p >> 8);
    }
    total += p;
  }
  return total;
}

template <bool kPlanes, bool kProbs>
inline __attribute__((always_inline)) uint32_t softmax_row(const SoftmaxExpParams& x, SoftmaxExpRowFn exp_row,
                                                           const Qs8AttnTile& t, int r, int limit, int end) {
  const int32_t* s = t.scores + static_cast<ptrdiff_t>(r) * t.stride;
  uint16_t* probs = t.probs + static_cast<ptrdiff_t>(r) * t.stride;  // e, then p
  uint8_t* lo = t.p_lo + static_cast<ptrdiff_t>(r) * t.stride;
  uint8_t* hi = t.p_hi + static_cast<ptrdiff_t>(r) * t.stride;
  uint32_t sum = 1;  // no probabilities: any normalizer
  if (limit > 0) sum = exp_row(limit, s, softmax_row_max(limit, s), x, probs);
  const Norm4 norm = make_norm4(sum);
  if (norm.hi16) return normalize_row<kPlanes, kProbs, true>(norm, probs, lo, hi, limit, end);
  return normalize_row<kPlanes, kProbs, false>(norm, probs, lo, hi, limit, end);
}

// The softmax of every row of the tile (the weights output too).
template <bool kPlanes, bool kProbs>
void softmax_tile(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t, int end,
                  TileRows* rows) {
  const SoftmaxExpRowFn exp_row = pick_softmax_exp_row(x);
  for (int r = 0; r < rows->n; ++r) {
    const int limit = rows->limit[r];
    rows->p_sum[r] = static_cast<int32_t>(softmax_row<kPlanes, kProbs>(x, exp_row, t, r, limit, end));
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, t.probs + static_cast<ptrdiff_t>(r) * t.stride,
                        a.weights + static_cast<ptrdiff_t>(rows->m + r) * a.weights_stride);
    }
  }
}

// ----------------------------------------------------------------- stages --
// The four stages of attention_tile.h; kDot: the neondot forms (AArch64).

template <bool kDot>
void pack_stage(const QS8AttentionArgs& a, int keys, Qs8AttnTile* t) {
  pack_keys(a, keys, *t);
  t->value_keys = packed_k(keys);
  t->key_flags = 0;
#if defined(__aarch64__)
  if (kDot) pack_values_u8(a, keys, *t);
#endif
  // The pair rule of isa/neon/linear_neon.cc for the neon Q.K (int16 pair sums are exact
  // unless a query row and a key both have -128 at some k and k + 4): the
  // keys' half, once per head.
  if (!kDot) t->key_flags = qs8_weights_have_min_pair__neon(t->keys, (keys + kPackN - 1) / kPackN, a.head_dim) ? 1 : 0;
}

template <bool kDot>
void qk_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int keys) {
  const int8_t* q = a.q + static_cast<ptrdiff_t>(rows.m) * a.q_stride;
  Qs8LinearAccInitFn qk = qs8_linear_acc_pairs_init__neon;
  if (kDot) {
#if defined(__aarch64__)
    qk = qs8_attn_qk_tile__neondot;
#endif
  } else if (t.key_flags != 0) {
    for (int r = 0; r < rows.n; ++r) {
      if (qs8_row_has_min_pair__neon(q + static_cast<ptrdiff_t>(r) * a.q_stride, 8 * (a.head_dim / 8))) {
        qk = qs8_linear_acc_init__neon;
        break;
      }
    }
  }
  qk(rows.n, (keys + kPackN - 1) / kPackN, a.head_dim, q, a.q_stride, t.keys, a.q_zp != 0 ? t.key_terms : nullptr,
     t.scores, t.stride);
}

// Where the probabilities go: the neon P.V reads t.probs; the dot path reads
// the planes (whole 16-key steps of the UDOT kernel), and t.probs only for
// the weights output.
template <bool kDot>
void softmax_stage(const QS8AttentionArgs& a, const SoftmaxExpParams& x, const Qs8AttnTile& t, TileRows* rows,
                   int keys) {
  if (!kDot) {
    softmax_tile<false, true>(a, x, t, keys, rows);
  } else if (a.weights != nullptr) {
    softmax_tile<true, true>(a, x, t, (keys + 15) & ~15, rows);
  } else {
    softmax_tile<true, false>(a, x, t, (keys + 15) & ~15, rows);
  }
}

template <bool kDot>
void pv_stage(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileRows& rows, int keys) {
  const int mr = rows.n;
  uint32_t p_sum[kMr];
  for (int r = 0; r < mr; ++r) p_sum[r] = static_cast<uint32_t>(rows.p_sum[r]);
  int8_t* out = a.out + static_cast<ptrdiff_t>(rows.m) * a.out_stride;
  if (kDot) {
#if defined(__aarch64__)
    const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(t.value_keys);
    uint32_t corr[kMr];
    for (int r = 0; r < mr; ++r) corr[r] = (128u + static_cast<uint32_t>(a.v_zp)) * p_sum[r];
    for (int c = 0; c < a.v_dim; c += kPackN) {
      const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
      qs8_attn_pv_tile__neondot(mr, keys, t.p_hi, t.p_lo, t.stride,
                                reinterpret_cast<const uint8_t*>(t.values) + static_cast<size_t>(c / kPackN) * block,
                                corr, a.pv_mult, a.pv_shift, a.out_zp, cnt, out + c, a.out_stride);
    }
#endif
  } else if (a.v_dim % 16 == 0) {
    const uint16_t* probs[kMr];
    int8_t* outs[kMr];
    for (int r = 0; r < mr; ++r) {
      probs[r] = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
      outs[r] = out + static_cast<ptrdiff_t>(r) * a.out_stride;
    }
    qs8_pv_rows__neon(mr, keys, a.v_dim, probs, p_sum, a.v, a.v_stride, a.v_zp, a.pv_mult, a.pv_shift, a.out_zp,
                      outs);
  } else {
    for (int r = 0; r < mr; ++r) {
      qs8_pv_row__neon(rows.limit[r], a.v_dim, t.probs + static_cast<ptrdiff_t>(r) * t.stride, a.v, a.v_stride,
                       a.v_zp, a.pv_mult, a.pv_shift, a.out_zp, out + static_cast<ptrdiff_t>(r) * a.out_stride);
    }
  }
}

constexpr Qs8AttnTileStages kNeonStages = {pack_stage<false>, qk_stage<false>, softmax_stage<false>, pv_stage<false>};
#if defined(__aarch64__)
constexpr Qs8AttnTileStages kNeonDotStages = {pack_stage<true>, qk_stage<true>, softmax_stage<true>, pv_stage<true>};
#endif

}  // namespace neon_tile

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_ISA_NEON_ATTENTION_TILE_NEON_H_
