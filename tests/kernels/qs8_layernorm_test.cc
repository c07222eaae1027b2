// Every listed SIMD variant of qs8_layernorm (requant.h contract 4) against
// the reference, byte for byte, with canaries; and the SIMD LayerNorms' row
// scale (layernorm_row.h).
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

EA_VARIANT_SUITE(Qs8LayerNorm, qs8_layernorm);

// ---------------------------------------------------- transformer blocks ----
// LayerNorm (contract 4) and activation table (contract 6): every listed
// variant against the reference, byte for byte,
// with canaries after each row (a variant must not write past `dim`).

int64_t SampleEpsTerm(Rng& rng) {
  switch (rng.uniform_int(0, 3)) {
    case 0: return 1;
    case 1: return int64_t{1} << rng.uniform_int(0, 60);
    default: return static_cast<int64_t>(rng.log_uniform(1.0, 1e12));
  }
}

// The SIMD LayerNorms' row scale (layernorm_row.h) against the reference's:
// its square root on the perfect squares and their neighbours at both ends of
// [2^60, 2^62) and on random values, then whole row scales over every
// variance bit length and eps term.
TEST(SimdTest, LayerNormFastRowScaleIsTheReference) {
  std::vector<uint64_t> xs = {uint64_t{1} << 60, (uint64_t{1} << 62) - 1, (uint64_t{1} << 61) - 1, uint64_t{1} << 61};
  for (uint64_t r : {uint64_t{1} << 30, (uint64_t{1} << 30) + 1, uint64_t{1518500249}, uint64_t{1518500250},
                     (uint64_t{1} << 31) - 2, (uint64_t{1} << 31) - 1}) {
    for (int64_t delta = -2; delta <= 2; ++delta) xs.push_back(r * r + static_cast<uint64_t>(delta));
  }
  Rng rng(9050);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t r = static_cast<uint64_t>(rng.uniform_int(int64_t{1} << 30, (int64_t{1} << 31) - 1));
    xs.push_back(r * r + static_cast<uint64_t>(rng.uniform_int(0, 2)) * r - static_cast<uint64_t>(rng.uniform_int(0, 1)));
    xs.push_back((uint64_t{1} << 60) + static_cast<uint64_t>(rng.uniform_int(0, (int64_t{3} << 60) - 1)));
  }
  for (uint64_t x : xs) {
    if (x < (uint64_t{1} << 60) || x >= (uint64_t{1} << 62)) continue;
    ASSERT_EQ(ek::isqrt_u64_top(x), ek::isqrt_u64(x)) << x;
  }
  for (int i = 0; i < 200000; ++i) {
    const int d = static_cast<int>(rng.uniform_int(0, 1) ? rng.uniform_int(1, 300) : rng.uniform_int(1, 16384));
    // Any (S, Q) of an int8 row: S = sum, Q >= S^2 / d (Cauchy-Schwarz), Q <= 16384 d.
    const int32_t s = static_cast<int32_t>(rng.uniform_int(-128 * d, 127 * d));
    const int64_t qmin = (static_cast<int64_t>(s) * s + d - 1) / d;
    const int32_t q = static_cast<int32_t>(rng.uniform_int(0, 2) ? qmin + rng.uniform_int(0, 3) : rng.uniform_int(qmin, 16384LL * d));
    const int64_t e = SampleEpsTerm(rng);
    const ek::LayerNormRowScale want = ek::layernorm_row_scale(d, s, q, e);
    const ek::LayerNormRowScale got = ek::layernorm_row_scale_fast(d, s, q, e);
    ASSERT_EQ(got.inv, want.inv) << "d " << d << " S " << s << " Q " << q << " E " << e;
    ASSERT_EQ(got.shift, want.shift) << "d " << d << " S " << s << " Q " << q << " E " << e;
  }
}

// The SIMD LayerNorms leave out step 4's clamp and keep y_q in 16 bits:
// they rely on |y_q| <= 2^14 for every int8 row and every E >= 1 (proof in
// kernels/qs8-layernorm/qs8-layernorm-avx2.cc). Rows with one outlier reach the bound (Samuelson's
// inequality is tight there); check the reference's y_q on them.
TEST(SimdTest, LayerNormNormalizedValueStaysWithinFifteenBits) {
  int32_t largest = 0;
  for (int d = 2; d <= 16384; d += d < 64 ? 1 : d / 8) {
    for (const auto& ab : {std::pair<int, int>{127, -128}, {-128, 127}, {1, 0}, {0, 1}, {-128, -127}}) {
      for (int64_t e : {int64_t{1}, int64_t{1} << 20, int64_t{1} << 40, int64_t{1} << 60}) {
        const int32_t s = ab.first + (d - 1) * ab.second;
        const int32_t q = ab.first * ab.first + (d - 1) * ab.second * ab.second;
        const ek::LayerNormRowScale rs = ek::layernorm_row_scale(d, s, q, e);
        for (int v : {ab.first, ab.second}) {
          const int32_t c = d * v - s;
          const int64_t y = (static_cast<int64_t>(c) * rs.inv + (int64_t{1} << (rs.shift - 1))) >> rs.shift;
          ASSERT_LE(y < 0 ? -y : y, 16384) << "d " << d << " value " << v << " E " << e;
          largest = std::max<int32_t>(largest, static_cast<int32_t>(y < 0 ? -y : y));
        }
      }
    }
  }
  EXPECT_GT(largest, 16000);  // the rows do come close to the bound
}

// One int8 row of `dim` values of a kind the LayerNorm's arithmetic treats
// differently: uniform, the corners -128/127, constant (zero variance: the
// output is the bias), constant but one element off by 1 (the smallest
// nonzero variance, the smallest shifts s with c != 0), random over a narrow
// spread.
void FillLnRow(Rng& rng, int kind, int8_t* x, int dim) {
  const int8_t base = rng.s8();
  const int spread = static_cast<int>(rng.uniform_int(1, 8));
  for (int i = 0; i < dim; ++i) {
    switch (kind) {
      case 0: x[i] = rng.s8(); break;
      case 1: x[i] = rng.uniform_int(0, 1) ? int8_t{-128} : int8_t{127}; break;
      case 2: x[i] = base; break;
      case 3: x[i] = base; break;
      default: x[i] = static_cast<int8_t>(std::clamp<int>(base + static_cast<int>(rng.uniform_int(-spread, spread)), -128, 127));
    }
  }
  if (kind == 3) x[rng.uniform_int(0, dim - 1)] = static_cast<int8_t>(base == 127 ? 126 : base + 1);
}

struct LnCase {
  int rows = 0, dim = 0, x_stride = 0, y_stride = 0;
  std::vector<int8_t> x;
  std::vector<int16_t> gain;
  std::vector<int32_t> bias;
  ek::QS8LayerNormArgs args = {};
};

// Gains over the whole int16 range (the extremes half the time), biases up
// to kLayerNormMaxBias, any requantization multiplier (per tensor), any zero
// point, eps terms from 1 to 2^60.
LnCase MakeLnCase(Rng& rng, int rows, int dim, int kind, int64_t eps_term) {
  LnCase c;
  c.rows = rows;
  c.dim = dim;
  c.x_stride = dim + static_cast<int>(rng.uniform_int(0, 9));
  c.y_stride = dim + static_cast<int>(rng.uniform_int(1, 9));
  c.x.resize(static_cast<size_t>(rows - 1) * c.x_stride + dim);
  for (int r = 0; r < rows; ++r) FillLnRow(rng, kind < 0 ? static_cast<int>(rng.uniform_int(0, 4)) : kind, c.x.data() + static_cast<size_t>(r) * c.x_stride, dim);
  c.gain.resize(dim);
  c.bias.resize(dim);
  const bool corners = rng.uniform_int(0, 1) == 0;
  for (auto& g : c.gain) {
    g = corners && rng.uniform_int(0, 1) ? (rng.uniform_int(0, 1) ? int16_t{32767} : int16_t{-32768})
                                         : static_cast<int16_t>(rng.uniform_int(-32768, 32767));
  }
  const int32_t bmax = rng.uniform_int(0, 1) ? ek::kLayerNormMaxBias : 4000;
  for (auto& b : c.bias) b = static_cast<int32_t>(rng.uniform_int(-bmax, bmax));
  c.args.rows = rows;
  c.args.dim = dim;
  c.args.x = c.x.data();
  c.args.x_stride = c.x_stride;
  c.args.eps_term = eps_term;
  c.args.gain = c.gain.data();
  c.args.bias = c.bias.data();
  Multiplier(rng.log_uniform(1e-9, 1e-3), &c.args.mult, &c.args.shift);
  c.args.y_zp = SampleZp(rng);
  c.args.y_stride = c.y_stride;
  return c;
}

template <class Fn>
void ExpectLnMatchesRef(const std::vector<ek::Microkernel<Fn>>& variants, LnCase& c, const std::string& what) {
  std::vector<int8_t> want(static_cast<size_t>(c.rows) * c.y_stride, kCanary);
  c.args.y = want.data();
  ek::qs8_layernorm__ref(c.args);
  for (const auto& uk : variants) {
    std::vector<int8_t> got(want.size(), kCanary);
    c.args.y = got.data();
    uk.fn(c.args);
    for (size_t j = 0; j < got.size(); ++j) {
      ASSERT_EQ(got[j], want[j]) << uk.name << " row " << j / c.y_stride << " element " << j % c.y_stride
                                 << " dim " << c.dim << " rows " << c.rows << " " << what;
    }
    // In place (y == x, same stride): the same bytes.
    std::vector<int8_t> inplace(static_cast<size_t>(c.rows) * c.x_stride, kCanary);
    std::memcpy(inplace.data(), c.x.data(), c.x.size());
    ek::QS8LayerNormArgs a = c.args;
    a.x = inplace.data();
    a.y = inplace.data();
    a.y_stride = c.x_stride;
    uk.fn(a);
    for (int r = 0; r < c.rows; ++r) {
      for (int i = 0; i < c.dim; ++i) {
        ASSERT_EQ(inplace[static_cast<size_t>(r) * c.x_stride + i], want[static_cast<size_t>(r) * c.y_stride + i])
            << uk.name << " in place, row " << r << " element " << i << " dim " << c.dim << " " << what;
      }
    }
  }
}

TEST_P(Qs8LayerNorm, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(9100 + seed);
    int dim;
    switch (rng.uniform_int(0, 3)) {
      case 0: dim = static_cast<int>(rng.uniform_int(1, 40)); break;
      case 1: dim = static_cast<int>(rng.uniform_int(1, 4096)); break;
      default: {
        static const int kWidths[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 768, 1000, 4096};
        dim = kWidths[rng.uniform_int(0, 19)];
      }
    }
    const int rows = static_cast<int>(dim <= 64 ? rng.uniform_int(1, 1024) : rng.uniform_int(1, 24));
    LnCase c = MakeLnCase(rng, rows, dim, -1, SampleEpsTerm(rng));
    ExpectLnMatchesRef(variants, c, "seed " + std::to_string(seed));
  }
}

// Every row shift s = 52 - k - f of contract 4 (8..45), each with row kinds
// whose centred values are zero and nonzero where that s allows it (s < 17
// needs c = 0: the smallest nonzero variance already gives D >= 2^16 (d - 1)),
// and the widest rows (d = 16384, the corners: |c| up to 255 d).
TEST_P(Qs8LayerNorm, EveryRowShift) {
  const auto variants = Only(GetParam());
  bool seen[64] = {};
  Rng rng(9500);
  for (int dim : {1, 2, 3, 17, 100, 1000, 4096, 16384}) {
    for (int e = 0; e <= 60; ++e) {
      for (int kind = 0; kind < 5; ++kind) {
        const int rows = dim >= 4096 ? 1 : 3;
        LnCase c = MakeLnCase(rng, rows, dim, kind, int64_t{1} << e);
        int32_t s = 0, q = 0;
        for (int i = 0; i < dim; ++i) {
          s += c.x[i];
          q += c.x[i] * c.x[i];
        }
        const int shift = ek::layernorm_row_scale(dim, s, q, c.args.eps_term).shift;
        ASSERT_GE(shift, 8);
        ASSERT_LE(shift, 45);
        seen[shift] = true;
        ExpectLnMatchesRef(variants, c, "eps 2^" + std::to_string(e) + " kind " + std::to_string(kind));
      }
    }
  }
  for (int s = 8; s <= 45; ++s) EXPECT_TRUE(seen[s]) << "no row had shift " << s;
}

// Every requantization shift of the output (-31..30): MakeLnCase's
// multipliers are those of real models (below 2^-9); the SIMD kernels have
// other forms for shift >= 0 (NEON: SQSHL, then SQRDMULH; AVX-512: the 64-bit
// lanes), where the large ones saturate.
TEST_P(Qs8LayerNorm, EveryOutputShift) {
  const auto variants = Only(GetParam());
  Rng rng(9600);
  for (int shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
    for (int rep = 0; rep < 3; ++rep) {
      const int dim = static_cast<int>(rep == 0 ? rng.uniform_int(1, 40) : rng.uniform_int(1, 300));
      LnCase c = MakeLnCase(rng, static_cast<int>(rng.uniform_int(1, 20)), dim, -1, SampleEpsTerm(rng));
      Multiplier(std::ldexp(rng.uniform(0.5, 0.999), shift), &c.args.mult, &c.args.shift);
      ASSERT_EQ(c.args.shift, shift);
      ExpectLnMatchesRef(variants, c, "shift " + std::to_string(shift) + " rep " + std::to_string(rep));
    }
  }
}

}  // namespace
