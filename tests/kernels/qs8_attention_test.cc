// Every listed SIMD variant of qs8_attention (row and tiled kernels)
// against the reference, bit for bit.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8Attention, qs8_attention);

// ------------------------------------------------------------- attention ----

struct Qs8AttnCase {
  std::vector<int8_t> q, k, v;
  ek::QS8AttentionArgs a;
};

TEST_P(Qs8Attention, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 150; ++seed) {
    Rng rng(3000 + seed);
    ek::QS8AttentionArgs a = {};
    // Query rows: 1..6 (row kernels, first tiles), up to 24 and up to 70
    // (several 8-row tiles of the tiled kernels with ragged last tiles).
    const int q_kind = static_cast<int>(rng.uniform_int(0, 3));
    a.q_len = static_cast<int>(rng.uniform_int(1, q_kind < 2 ? 6 : (q_kind == 2 ? 24 : 70)));
    a.kv_len = SampleKvLen(rng);
    if (a.q_len * a.kv_len > 8192) a.q_len = std::max(1, 8192 / a.kv_len);
    a.head_dim = SampleDim(rng);
    a.v_dim = rng.uniform_int(0, 1) ? a.head_dim : SampleDim(rng);
    a.q_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 20));
    a.k_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 20));
    a.v_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 20));
    a.q_zp = SampleZp(rng);
    a.k_zp = SampleZp(rng);
    a.v_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    // Softmax sharpness from near-uniform to one-hot (p = 32767 rows).
    Multiplier(rng.log_uniform(1e-2, 1e5) / (std::sqrt(a.head_dim) * 128.0 * 128.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    if (rng.uniform_int(0, 15) == 0) { a.score_mult = INT32_MAX; a.score_shift = ek::kMaxShift; }
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    a.causal = rng.uniform_int(0, 1) != 0;
    a.causal_offset = rng.uniform_int(0, 1) ? a.kv_len - a.q_len + static_cast<int>(rng.uniform_int(-3, 3))
                                            : static_cast<int>(rng.uniform_int(-3, a.kv_len));
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto q = RandS8(rng, static_cast<size_t>(a.q_len) * a.q_stride);
    const auto k = RandS8(rng, static_cast<size_t>(a.kv_len) * a.k_stride);
    const auto v = RandS8(rng, static_cast<size_t>(a.kv_len) * a.v_stride);
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 3));
    const bool with_weights = rng.uniform_int(0, 2) != 0;
    a.weights_stride = a.kv_len + static_cast<int>(rng.uniform_int(0, 3));
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    // Tile scratch for the tiled kernels, filled with garbage and misaligned
    // by one byte (kernels align it themselves and never read stale contents).
    std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(a.kv_len, a.head_dim, a.v_dim) + 1);
    a.tile_scratch = tile.data() + 1;
    // One case in four without it: every path then runs the shared row
    // driver (a model converted with --no-tile-scratch).
    if (rng.uniform_int(0, 3) == 0) a.tile_scratch = nullptr;

    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.out_stride, 0x5A), got;
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.weights_stride, 0xBEEF), got_w;
    a.out = want.data();
    a.weights = with_weights ? want_w.data() : nullptr;
    Ref().qs8_attention(a);
    for (const auto& uk : variants) {
      got.assign(want.size(), 0x5A);
      got_w.assign(want_w.size(), 0xBEEF);
      a.out = got.data();
      a.weights = with_weights ? got_w.data() : nullptr;
      std::fill(tile.begin(), tile.end(), static_cast<uint8_t>(0xA5 + seed));
      uk.fn(a);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " out index " << i << " seed " << seed
                                   << " q_len " << a.q_len << " kv_len " << a.kv_len
                                   << " head_dim " << a.head_dim << " v_dim " << a.v_dim;
      }
      for (size_t i = 0; i < got_w.size(); ++i) {
        ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
      }
    }
  }
}

// The tiled kernels (q_len >= kQs8AttnTileMinRows with tile scratch) across
// every softmax exponent shift and P.V shift (-31..30: the Arm tile softmax has separate
// 32-bit forms for shifts >= 0 and < 0, and for the normalizer's cases
// m = 2^31 / sum < 65536 / otherwise: near-uniform, power-of-two and one-hot
// rows), zero q_zp or not, and scratch at every alignment: results equal the
// reference with and without tile scratch, and nothing is written past
// qs8_attention_tile_bytes().
TEST_P(Qs8Attention, TilesEveryShiftWithinScratch) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 124; ++seed) {
    Rng rng(7000 + seed);
    ek::QS8AttentionArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(ek::kQs8AttnTileMinRows, 40));
    static const int kLens[] = {1, 4, 16, 17, 32, 64, 100, 128, 256, 300};
    a.kv_len = kLens[rng.uniform_int(0, 9)];
    a.head_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.q_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.k_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.v_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 9));
    a.q_zp = rng.uniform_int(0, 1) ? 0 : SampleZp(rng);
    a.k_zp = SampleZp(rng);
    a.v_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    a.score_shift = static_cast<int32_t>(seed % 62) - 31;
    a.score_mult = static_cast<int32_t>(rng.uniform_int(int64_t{1} << 30, INT32_MAX));
    if (seed % 7 == 0) a.score_mult = INT32_MAX;
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    // Odd seeds: every P.V shift -31..30 as well (the neondot tile
    // requantizes in its registers, with a separate form for shifts >= 0).
    if (seed % 2 == 1) a.pv_shift = static_cast<int32_t>((seed / 2 * 5) % 62) - 31;
    a.causal = rng.uniform_int(0, 2) == 0;
    a.causal_offset = static_cast<int>(rng.uniform_int(-3, a.kv_len));
    a.kv_valid_len = rng.uniform_int(0, 2) ? a.kv_len : SampleValidLen(rng, a.kv_len);
    // Small inputs near their zero points make whole rows tie (uniform rows).
    const bool flat = rng.uniform_int(0, 3) == 0;
    auto make = [&](size_t n, int32_t zp) {
      std::vector<int8_t> v = RandS8(rng, n);
      if (flat) {
        for (auto& x : v) x = static_cast<int8_t>(std::min(127, std::max(-128, zp + static_cast<int>(rng.uniform_int(-1, 1)))));
      }
      return v;
    };
    const auto q = make(static_cast<size_t>(a.q_len) * a.q_stride, a.q_zp);
    const auto k = make(static_cast<size_t>(a.kv_len) * a.k_stride, a.k_zp);
    const auto v = RandS8(rng, static_cast<size_t>(a.kv_len) * a.v_stride);
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    const bool with_weights = rng.uniform_int(0, 1) != 0;

    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.out_stride);
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.weights_stride);
    a.out = want.data();
    a.weights = with_weights ? want_w.data() : nullptr;
    a.tile_scratch = nullptr;
    Ref().qs8_attention(a);

    const size_t tile_bytes = ek::qs8_attention_tile_bytes(a.kv_len, a.head_dim, a.v_dim);
    const size_t skew = seed % 64, guard = 256;
    std::vector<uint8_t> tile(skew + tile_bytes + guard);
    for (const auto& uk : variants) {
      for (int with_tile = 0; with_tile < 2; ++with_tile) {
        std::vector<int8_t> got(want.size(), 0x5A);
        std::vector<uint16_t> got_w(want_w.size(), 0xBEEF);
        std::fill(tile.begin(), tile.end(), static_cast<uint8_t>(0x3C + seed));
        a.out = got.data();
        a.weights = with_weights ? got_w.data() : nullptr;
        a.tile_scratch = with_tile ? tile.data() + skew : nullptr;
        uk.fn(a);
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i], want[i]) << uk.name << " tile " << with_tile << " out index " << i
                                     << " seed " << seed << " q_len " << a.q_len << " kv_len " << a.kv_len
                                     << " head_dim " << a.head_dim << " v_dim " << a.v_dim << " shift "
                                     << a.score_shift;
        }
        if (with_weights) {
          for (size_t i = 0; i < got_w.size(); ++i) {
            ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
          }
        }
        for (size_t i = 0; i < skew; ++i) {
          ASSERT_EQ(tile[i], static_cast<uint8_t>(0x3C + seed)) << uk.name << " wrote before the scratch, seed " << seed;
        }
        for (size_t i = skew + tile_bytes; i < tile.size(); ++i) {
          ASSERT_EQ(tile[i], static_cast<uint8_t>(0x3C + seed)) << uk.name << " wrote past the scratch, seed " << seed;
        }
      }
    }
  }
}

}  // namespace
