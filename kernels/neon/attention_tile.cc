// Tiled int8 attention for the Arm paths: the qs8_attention of `neon`
// (Armv7-A / AArch64) and of `neondot` (AArch64 SDOT/UDOT) whenever the
// caller passes tile scratch and at least kQs8AttnTileMinRows query rows.
// Same integers as qs8_attention__ref. Compiled with the baseline flags: the
// only dot-product code it reaches is in dotprod.cc, through function
// pointers and only on the neondot path.
//
// The row kernel (attention.cc) packs keys and values into stack buffers
// (~29.5 KB) for groups of up to 4 rows with equal key counts. Here one
// head's keys (and, for neondot, values) are repacked once into the tile
// scratch of attention_tile.h, and Q.K^T and P.V run as GEMM tiles of up to
// 8 query rows. The scratch regions' sizes are the contract; their contents
// are private to this file and differ from the x86 kernel's:
//
// Keys: K4N16 (N = keys, K = head dim) of the keys as they are (signed k, not
// k + 128: SDOT and NEON's smull multiply signed by signed). Q.K^T is then
// exactly the int8 linear's accumulation with the query rows as activations
// (qs8_linear_acc__neondot, or the NEON one, int16-pair form when the pair
// rule of linear.cc allows it), written straight into the tile's score rows.
// With D the head dim, B_r = sum_i q_ri and T_j = sum_i k_ji,
//   sum_i (q_ri - zq)(k_ji - zk) = sum_i q_ri k_ji + (D zq zk - zk B_r) - zq T_j,
// a row term and a key term (key_terms[j] = zq T_j) added in one pass before
// the softmax. Everything wraps in 32 bits, exact because the reference's
// sum fits int32.
//
// Softmax: qs8_softmax_row__neon on each row over its own key limit (causal
// rows of one tile differ; limits never decrease down the rows).
//
// P.V, neondot: values packed K4N16 (N = value channels, K = keys) as
// unsigned u = v + 128, probabilities split into unsigned byte planes
// p = 256 ph + pl (pl <= 255, ph <= 128), UDOT by lane:
//   sum_j p_j (v_j - zv) = 256 sum_j ph_j u_j + sum_j pl_j u_j - (128 + zv) sum_j p_j.
// The planes are zero past each row's limit, so whole 4-key groups can be
// summed for every row of the tile; sum_j p_j <= 32768 + n/2 and u <= 255 keep
// the wrapping uint32 sums exact.
// P.V, neon: no byte dot product, and smull-based byte planes would cost
// twice the instructions of the 16-bit products, so the rows' Q15
// probabilities (zero past each limit) go to the row kernel's pv_group
// (smlal by lane, 4 rows share each value load) over the tile's key count;
// rows with p = 32768 (not an int16) or v_dim % 16 != 0 use qs8_pv_row__neon.
#include <cstring>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/requant.h"
#include "neon_common.h"
#include "neon_kernels.h"

namespace edgeattn {
namespace kernels {

using namespace neon;  // NOLINT(build/namespaces): internal helpers only

namespace {

constexpr int kMr = kQs8AttnTileRows;

// P.V tile of the dot-product path (qs8_attn_pv_tile__neondot); null on neon.
using PvTileFn = void (*)(int rows, int keys, const uint8_t* p_hi, const uint8_t* p_lo, int stride,
                          const uint8_t* vb, uint32_t* acc);

struct TileOps {
  Qs8LinearAccFn qk_acc;        // always exact
  Qs8LinearAccFn qk_acc_pairs;  // int16 pairs (may be null): only where the pair rule allows
  PvTileFn pv_tile;             // null: P.V with pv_group from the Q15 probabilities
};

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
// head dim zero); key_terms[j] = zq * sum_i k_ji (wrapping) when zq != 0.
void pack_keys(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
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
  for (j = 0; j < n; ++j) {
    const int8_t* kr = a.k + static_cast<ptrdiff_t>(j) * a.k_stride;
    int32x4_t s = vdupq_n_s32(0);
    for (int i = 0; i < d16; i += 16) s = vpadalq_s16(s, vpaddlq_s8(vld1q_s8(kr + i)));
    int32_t sum = hsum_s32(s);
    for (int i = d16; i < dim; ++i) sum += kr[i];
    t.key_terms[j] = static_cast<int32_t>(zq * static_cast<uint32_t>(sum));
  }
}

#if defined(__aarch64__)
// Values of keys [0, n) as K4N16 with N = channels, K = keys, each byte
// v + 128 (unsigned, for UDOT). Per 4 keys and 16 channels the 4 value rows
// are interleaved so that each channel's 4 keys are one word. Padding keys
// are 128 (their probabilities are 0); channels past v_dim are never stored.
void pack_values_u8(const QS8AttentionArgs& a, int n, const Qs8AttnTile& t) {
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

struct TileRows {
  int m, mr;               // query rows m .. m + mr - 1
  int limit[kMr];          // keys each row sees
  uint32_t row_term[kMr];  // D zq zk - zk B (wrapping)
  uint32_t p_sum[kMr];     // sum of the row's probabilities
};

// Raw dot products -> scores over [0, limit) (rounded up to 4: the score row
// and key_terms extend that far; lanes past the limit are never read).
void add_terms(const QS8AttentionArgs& a, const Qs8AttnTile& t, int32_t* s, uint32_t row_term,
               int limit) {
  const int32x4_t rb = vdupq_n_s32(static_cast<int32_t>(row_term));
  if (a.q_zp != 0) {
    for (int j = 0; j < limit; j += 4) vst1q_s32(s + j, vsubq_s32(vaddq_s32(vld1q_s32(s + j), rb), vld1q_s32(t.key_terms + j)));
  } else {
    for (int j = 0; j < limit; j += 4) vst1q_s32(s + j, vaddq_s32(vld1q_s32(s + j), rb));
  }
}

// Row r's probabilities -> byte planes over [0, round_up(keys, 16)) (zero
// past the row's limit); returns their sum.
uint32_t split_probs(const Qs8AttnTile& t, int r, int limit, int keys) {
  const uint16_t* p = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
  uint8_t* lo = t.p_lo + static_cast<ptrdiff_t>(r) * t.stride;
  uint8_t* hi = t.p_hi + static_cast<ptrdiff_t>(r) * t.stride;
  uint32x4_t s = vdupq_n_u32(0);
  int j = 0;
  for (; j + 16 <= limit; j += 16) {
    const uint16x8_t p0 = vld1q_u16(p + j), p1 = vld1q_u16(p + j + 8);
    vst1q_u8(lo + j, vcombine_u8(vmovn_u16(p0), vmovn_u16(p1)));
    vst1q_u8(hi + j, vcombine_u8(vshrn_n_u16(p0, 8), vshrn_n_u16(p1, 8)));
    s = vpadalq_u16(vpadalq_u16(s, p0), p1);
  }
  uint32_t sum = hsum_u32(s);
  const int end = (keys + 15) & ~15;
  for (; j < end; ++j) {
    const uint32_t v = j < limit ? p[j] : 0;
    lo[j] = static_cast<uint8_t>(v);
    hi[j] = static_cast<uint8_t>(v >> 8);
    sum += v;
  }
  return sum;
}

// Row r's probabilities zero over [limit, keys); returns their sum and
// whether all fit int16 (no p = 32768).
bool prob_sums(const Qs8AttnTile& t, int r, int limit, int keys, uint32_t* psum) {
  uint16_t* p = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
  uint32x4_t s = vdupq_n_u32(0);
  uint16x8_t mx = vdupq_n_u16(0);
  int j = 0;
  for (; j + 8 <= limit; j += 8) {
    const uint16x8_t v = vld1q_u16(p + j);
    s = vpadalq_u16(s, v);
    mx = vmaxq_u16(mx, v);
  }
  uint32_t sum = hsum_u32(s);
  bool ok = vget_lane_u64(vreinterpret_u64_u16(vshr_n_u16(vorr_u16(vget_low_u16(mx), vget_high_u16(mx)), 15)), 0) == 0;
  for (; j < limit; ++j) {
    sum += p[j];
    ok = ok && p[j] < kProbOne;
  }
  for (; j < keys; ++j) p[j] = 0;
  *psum = sum;
  return ok;
}

// y = requantize_s8(acc - corr) for 16 channels, stored to out[0, cnt).
inline void store_pv16(const uint32_t* acc, uint32_t corr, int32_t mult, int64x2_t neg_n,
                       int16x8_t zp, int cnt, int8_t* out) {
  const int32x4_t vc = vdupq_n_s32(static_cast<int32_t>(corr));
  int32x4_t y[4];
  for (int i = 0; i < 4; ++i) {
    y[i] = requantize_x4(vsubq_s32(vreinterpretq_s32_u32(vld1q_u32(acc + 4 * i)), vc), mult, neg_n);
  }
  const int8x16_t b = vcombine_s8(add_zp_sat8(y[0], y[1], zp), add_zp_sat8(y[2], y[3], zp));
  if (cnt == kPackN) {
    vst1q_s8(out, b);
  } else {
    int8_t tmp[kPackN];
    vst1q_s8(tmp, b);
    std::memcpy(out, tmp, static_cast<size_t>(cnt));
  }
}

// One tile of rows; keys_all is the call's largest key count (what was packed).
void run_tile(const QS8AttentionArgs& a, const Qs8AttnTile& t, const TileOps& ops, int keys_all,
              int* keys_have_pair, TileRows* rows) {
  const int mr = rows->mr;
  const int keys = rows->limit[mr - 1];  // limits never decrease down the rows
  const int8_t* q = a.q + static_cast<ptrdiff_t>(rows->m) * a.q_stride;
  Qs8LinearAccFn qk = ops.qk_acc;
  if (ops.qk_acc_pairs != nullptr) {
    // The pair rule of linear.cc: the int16 pair sums are exact unless a row
    // and a key both have -128 at some k and k + 4; keys checked once per call.
    bool q_pair = false;
    for (int r = 0; r < mr && !q_pair; ++r) {
      q_pair = qs8_row_has_min_pair__neon(q + static_cast<ptrdiff_t>(r) * a.q_stride, 8 * (a.head_dim / 8));
    }
    if (q_pair && *keys_have_pair < 0) {
      *keys_have_pair = qs8_weights_have_min_pair__neon(t.keys, (keys_all + kPackN - 1) / kPackN, a.head_dim) ? 1 : 0;
    }
    if (!q_pair || *keys_have_pair == 0) qk = ops.qk_acc_pairs;
  }
  qk(mr, (keys + kPackN - 1) / kPackN, a.head_dim, q, a.q_stride, t.keys, t.scores, t.stride);

  bool pv_ok = ops.pv_tile != nullptr || a.v_dim % 16 == 0;
  for (int r = 0; r < mr; ++r) {
    const int limit = rows->limit[r];
    int32_t* s = t.scores + static_cast<ptrdiff_t>(r) * t.stride;
    uint16_t* p = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
    add_terms(a, t, s, rows->row_term[r], limit);
    qs8_softmax_row__neon(limit, s, a.score_mult, a.score_shift, p);
    if (a.weights != nullptr) {
      write_weights_row(limit, a.kv_len, p, a.weights + static_cast<ptrdiff_t>(rows->m + r) * a.weights_stride);
    }
    if (ops.pv_tile != nullptr) {
      rows->p_sum[r] = split_probs(t, r, limit, keys);
    } else {
      pv_ok = prob_sums(t, r, limit, keys, &rows->p_sum[r]) && pv_ok;
    }
  }

  int8_t* out = a.out + static_cast<ptrdiff_t>(rows->m) * a.out_stride;
  if (ops.pv_tile != nullptr) {
    const size_t block = static_cast<size_t>(kPackN) * static_cast<size_t>(packed_k(keys_all));
    const int64x2_t neg_n = neg_n_of(a.pv_shift);
    const int16x8_t zp = vdupq_n_s16(static_cast<int16_t>(a.out_zp));
    uint32_t corr[kMr];
    for (int r = 0; r < mr; ++r) corr[r] = (128u + static_cast<uint32_t>(a.v_zp)) * rows->p_sum[r];
    alignas(16) uint32_t acc[kMr * kPackN];
    for (int c = 0; c < a.v_dim; c += kPackN) {
      const int cnt = a.v_dim - c < kPackN ? a.v_dim - c : kPackN;
      ops.pv_tile(mr, keys, t.p_hi, t.p_lo, t.stride,
                  reinterpret_cast<const uint8_t*>(t.values) + static_cast<size_t>(c / kPackN) * block, acc);
      for (int r = 0; r < mr; ++r) {
        store_pv16(acc + kPackN * r, corr[r], a.pv_mult, neg_n, zp, cnt,
                   out + static_cast<ptrdiff_t>(r) * a.out_stride + c);
      }
    }
  } else if (pv_ok) {
    const uint16_t* probs[kMr];
    int8_t* outs[kMr];
    for (int r = 0; r < mr; ++r) {
      probs[r] = t.probs + static_cast<ptrdiff_t>(r) * t.stride;
      outs[r] = out + static_cast<ptrdiff_t>(r) * a.out_stride;
    }
    qs8_pv_rows__neon(mr, keys, a.v_dim, probs, rows->p_sum, a.v, a.v_stride, a.v_zp, a.pv_mult,
                      a.pv_shift, a.out_zp, outs);
  } else {
    for (int r = 0; r < mr; ++r) {
      qs8_pv_row__neon(rows->limit[r], a.v_dim, t.probs + static_cast<ptrdiff_t>(r) * t.stride, a.v,
                       a.v_stride, a.v_zp, a.pv_mult, a.pv_shift, a.out_zp,
                       out + static_cast<ptrdiff_t>(r) * a.out_stride);
    }
  }
}

bool attention_tiled(const QS8AttentionArgs& a, const TileOps& ops) {
  if (a.tile_scratch == nullptr || a.q_len < kQs8AttnTileMinRows) return false;
  const int keys = attention_row_limit(a.q_len - 1, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
  if (keys == 0) return false;
  const Qs8AttnTile t = carve_qs8_attention_tile(a.tile_scratch, a.kv_len, a.head_dim, a.v_dim);
  pack_keys(a, keys, t);
#if defined(__aarch64__)
  if (ops.pv_tile != nullptr) pack_values_u8(a, keys, t);
#endif
  const uint32_t zk = static_cast<uint32_t>(a.k_zp);
  const uint32_t dzz = static_cast<uint32_t>(a.head_dim) * static_cast<uint32_t>(a.q_zp) * zk;
  int keys_have_pair = -1;  // not yet checked
  for (int m = 0; m < a.q_len; m += kMr) {
    TileRows rows;
    rows.m = m;
    rows.mr = a.q_len - m < kMr ? a.q_len - m : kMr;
    for (int r = 0; r < rows.mr; ++r) {
      const int8_t* q = a.q + static_cast<ptrdiff_t>(m + r) * a.q_stride;
      rows.limit[r] = attention_row_limit(m + r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
      uint32_t b = 0;
      for (int i = 0; i < a.head_dim; ++i) b += static_cast<uint32_t>(static_cast<int32_t>(q[i]));
      rows.row_term[r] = dzz - zk * b;
    }
    run_tile(a, t, ops, keys, &keys_have_pair, &rows);
  }
  return true;
}

}  // namespace

bool qs8_attention_tiled__neon(const QS8AttentionArgs& a) {
  return attention_tiled(a, TileOps{qs8_linear_acc__neon, qs8_linear_acc_pairs__neon, nullptr});
}

#if defined(__aarch64__)
bool qs8_attention_tiled__neondot(const QS8AttentionArgs& a) {
  return attention_tiled(a, TileOps{qs8_linear_acc__neondot, nullptr, qs8_attn_pv_tile__neondot});
}
#endif

}  // namespace kernels
}  // namespace edgeattn
