// Each stage of each tiling variant (kernels/lists/qs8_attention_tile.inc)
// against the reference row kernels.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8AttentionTile, qs8_attention_tile);

// Each stage of each tiling path on its own (attention_tile.h), against the
// reference row kernels: after pack and qk, every row's scores over its
// limit equal qs8_qk_row__ref's up to one constant of the row (x86 keeps it
// 0, Arm leaves the row term out); after softmax, its weights output (when
// asked) equals the reference layer's and p_sum the sum of the reference
// probabilities; after pv, the output rows equal the reference layer's.
// Head dims and key counts have ragged tails, tiles ragged last rows, and
// nothing is written outside the tile scratch.
TEST_P(Qs8AttentionTile, StagesMatchRefExactly) {
  const auto variants = Only(GetParam());
  int cases = 0;
  for (uint64_t seed = 0; cases < 120; ++seed) {
    Rng rng(9000 + seed);
    ek::QS8AttentionArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(ek::kQs8AttnTileMinRows, 30));
    a.kv_len = SampleKvLen(rng);
    if (a.q_len * a.kv_len > 8192) a.q_len = std::max(ek::kQs8AttnTileMinRows, 8192 / a.kv_len);
    a.head_dim = SampleDim(rng);
    a.v_dim = rng.uniform_int(0, 1) ? a.head_dim : SampleDim(rng);
    a.q_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.k_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.v_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.q_zp = SampleZp(rng);
    a.k_zp = SampleZp(rng);
    a.v_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    Multiplier(rng.log_uniform(1e-2, 1e5) / (std::sqrt(a.head_dim) * 128.0 * 128.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    a.causal = rng.uniform_int(0, 1) != 0;
    a.causal_offset = rng.uniform_int(0, 1) ? a.kv_len - a.q_len : static_cast<int>(rng.uniform_int(-3, a.kv_len));
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto q = RandS8(rng, static_cast<size_t>(a.q_len) * a.q_stride);
    const auto k = RandS8(rng, static_cast<size_t>(a.kv_len) * a.k_stride);
    const auto v = RandS8(rng, static_cast<size_t>(a.kv_len) * a.v_stride);
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(a.kv_len, a.head_dim, a.v_dim) + 64);
    a.tile_scratch = tile.data();
    if (!ek::qs8_attention_tiles_apply(a)) continue;  // the row kernels' case
    ++cases;

    // The reference: the whole layer without tiles, and per row its scores
    // and probabilities from the row kernels.
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.out_stride);
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.weights_stride);
    a.out = want.data();
    a.weights = want_w.data();
    a.tile_scratch = nullptr;
    Ref().qs8_attention(a);
    std::vector<int32_t> want_s(static_cast<size_t>(a.q_len) * a.kv_len);
    std::vector<uint16_t> want_p(want_s.size());
    for (int r = 0; r < a.q_len; ++r) {
      const int limit = ek::attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
      int32_t* s = want_s.data() + static_cast<size_t>(r) * a.kv_len;
      Ref().qs8_qk_row(limit, a.head_dim, a.q + static_cast<ptrdiff_t>(r) * a.q_stride, a.q_zp, a.k, a.k_stride,
                       a.k_zp, s);
      if (limit > 0) Ref().qs8_softmax_row(limit, s, a.score_mult, a.score_shift, want_p.data() + static_cast<size_t>(r) * a.kv_len);
    }

    const bool with_weights = rng.uniform_int(0, 1) != 0;
    const size_t skew = seed % 64, tile_bytes = ek::qs8_attention_tile_bytes(a.kv_len, a.head_dim, a.v_dim);
    for (const auto& uk : variants) {
      const ek::Qs8AttnTileStages& st = uk.fn();
      std::vector<int8_t> got(want.size(), 0x5A);
      std::vector<uint16_t> got_w(want_w.size(), 0xBEEF);
      std::fill(tile.begin(), tile.end(), static_cast<uint8_t>(0xC3 + seed));
      a.out = got.data();
      a.weights = with_weights ? got_w.data() : nullptr;
      a.tile_scratch = tile.data() + skew;
      const int keys = ek::attention_row_limit(a.q_len - 1, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
      ek::Qs8AttnTile t = ek::carve_qs8_attention_tile(a.tile_scratch, a.kv_len, a.head_dim, a.v_dim);
      st.pack(a, keys, &t);
      ASSERT_EQ(t.value_keys, ek::packed_k(keys)) << uk.name;
      const ek::SoftmaxExpParams x = ek::softmax_exp_params(a.score_mult, a.score_shift);
      for (int m = 0; m < a.q_len; m += ek::kQs8AttnTileRows) {
        ek::Qs8AttnTileRows rows;
        ek::qs8_attention_tile_rows(a, m, &rows);
        const int tile_keys = rows.limit[rows.n - 1];
        st.qk(a, t, rows, tile_keys);
        // The reference's scores, or those plus one constant per row (the
        // contract: the softmax sees only differences), wrapping like int32.
        for (int r = 0; r < rows.n; ++r) {
          const int32_t* got_s = t.scores + static_cast<size_t>(r) * t.stride;
          const int32_t* ref_s = want_s.data() + static_cast<size_t>(m + r) * a.kv_len;
          const uint32_t row_constant = static_cast<uint32_t>(got_s[0]) - static_cast<uint32_t>(ref_s[0]);
          for (int j = 0; j < rows.limit[r]; ++j) {
            ASSERT_EQ(static_cast<uint32_t>(got_s[j]) - static_cast<uint32_t>(ref_s[j]), row_constant)
                << uk.name << " qk: row " << m + r << " key " << j << " seed " << seed << " head_dim " << a.head_dim;
          }
        }
        st.softmax(a, x, t, &rows, tile_keys);
        for (int r = 0; r < rows.n; ++r) {
          int32_t sum = 0;
          for (int j = 0; j < rows.limit[r]; ++j) sum += want_p[static_cast<size_t>(m + r) * a.kv_len + j];
          ASSERT_EQ(rows.p_sum[r], sum) << uk.name << " softmax: p_sum of row " << m + r << " seed " << seed;
          for (int j = 0; with_weights && j < a.kv_len; ++j) {
            const size_t i = static_cast<size_t>(m + r) * a.weights_stride + j;
            ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " softmax: weight row " << m + r << " key " << j
                                           << " seed " << seed;
          }
        }
        st.pv(a, t, rows, tile_keys);
        for (int r = 0; r < rows.n; ++r) {
          for (int c = 0; c < a.v_dim; ++c) {
            const size_t i = static_cast<size_t>(m + r) * a.out_stride + c;
            ASSERT_EQ(got[i], want[i]) << uk.name << " pv: row " << m + r << " channel " << c << " seed " << seed
                                       << " kv_len " << a.kv_len << " v_dim " << a.v_dim;
          }
        }
      }
      for (size_t i = 0; i < tile.size(); ++i) {
        if (i >= skew && i < skew + tile_bytes) continue;
        ASSERT_EQ(tile[i], static_cast<uint8_t>(0xC3 + seed)) << uk.name << " wrote outside the scratch, seed " << seed;
      }
    }
  }
}

}  // namespace
