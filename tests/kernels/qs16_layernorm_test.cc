// Every listed SIMD variant of qs16_layernorm (requant.h contract 4b, the
// 16-bit residual stream's LayerNorm) against the reference, element for
// element, with canaries after each row, each output alone and both, and in
// place (y16 == x).
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::Rng;

EA_VARIANT_SUITE(Qs16LayerNorm, qs16_layernorm);

constexpr int16_t kCanary16 = 0x5A5A;

// The SIMD paths' row scale (layernorm_row.h, the root from its top 32 bits
// and one Newton step) against the reference's, on the sums of every int16
// row shape (S^2 / d <= Q <= 2^30 d) and eps terms from 1 to 2^60.
TEST(SimdTest, LayerNorm16FastRowScaleIsTheReference) {
  Rng rng(47050);
  for (int it = 0; it < 300000; ++it) {
    const int d = static_cast<int>(rng.uniform_int(0, 1) ? rng.uniform_int(1, 300) : rng.uniform_int(1, 16384));
    const int64_t s = rng.uniform_int(-32768LL * d, 32767LL * d);
    const int64_t qmin = (s * s + d - 1) / d;
    const int64_t q = rng.uniform_int(0, 2) ? qmin + rng.uniform_int(0, 3) : rng.uniform_int(qmin, (int64_t{1} << 30) * d);
    const int64_t e = rng.uniform_int(0, 2) == 0 ? int64_t{1} << rng.uniform_int(0, 60)
                                                 : static_cast<int64_t>(rng.log_uniform(1.0, 1e15));
    const ek::LayerNormRowScale want = ek::layernorm16_row_scale(d, static_cast<int32_t>(s), q, e);
    const ek::LayerNormRowScale got = ek::layernorm16_row_scale_fast(d, static_cast<int32_t>(s), q, e);
    ASSERT_EQ(got.inv, want.inv) << "d " << d << " S " << s << " Q " << q << " E " << e;
    ASSERT_EQ(got.shift, want.shift) << "d " << d << " S " << s << " Q " << q << " E " << e;
  }
}

// Row kinds the arithmetic treats differently: uniform over int16, the int16
// corners, constant (zero variance), constant with one element off by one
// (the smallest nonzero variance), a narrow spread, one outlier at an int16
// end among equal values (|y_q| at its bound).
void FillRow16(Rng& rng, int kind, int16_t* x, int dim) {
  const int16_t base = static_cast<int16_t>(rng.uniform_int(-32768, 32767));
  const int spread = static_cast<int>(rng.uniform_int(1, 400));
  for (int i = 0; i < dim; ++i) {
    switch (kind) {
      case 0: x[i] = static_cast<int16_t>(rng.uniform_int(-32768, 32767)); break;
      case 1: x[i] = rng.uniform_int(0, 1) ? int16_t{-32768} : int16_t{32767}; break;
      case 2:
      case 3:
      case 5: x[i] = base; break;
      default: x[i] = static_cast<int16_t>(std::clamp<int>(base + static_cast<int>(rng.uniform_int(-spread, spread)), -32768, 32767));
    }
  }
  if (kind == 3) x[rng.uniform_int(0, dim - 1)] = static_cast<int16_t>(base == 32767 ? 32766 : base + 1);
  if (kind == 5) x[rng.uniform_int(0, dim - 1)] = base < 0 ? int16_t{32767} : int16_t{-32768};
}

int64_t SampleEps(Rng& rng) {
  switch (rng.uniform_int(0, 3)) {
    case 0: return 1;
    case 1: return int64_t{1} << rng.uniform_int(0, 60);
    default: return static_cast<int64_t>(rng.log_uniform(1.0, 1e15));
  }
}

struct Ln16 {
  int rows = 0, dim = 0, x_stride = 0, y8_stride = 0, y16_stride = 0;
  std::vector<int16_t> x, gain;
  std::vector<int32_t> bias;
  ek::QS16LayerNormArgs args = {};
};

Ln16 MakeLn16(Rng& rng, int rows, int dim, int kind, int64_t eps) {
  Ln16 c;
  c.rows = rows;
  c.dim = dim;
  c.x_stride = dim + static_cast<int>(rng.uniform_int(0, 9));
  c.y8_stride = dim + static_cast<int>(rng.uniform_int(1, 9));
  c.y16_stride = dim + static_cast<int>(rng.uniform_int(1, 9));
  c.x.assign(static_cast<size_t>(rows - 1) * c.x_stride + dim, 0);
  for (int r = 0; r < rows; ++r) {
    FillRow16(rng, kind < 0 ? static_cast<int>(rng.uniform_int(0, 5)) : kind, c.x.data() + static_cast<size_t>(r) * c.x_stride, dim);
  }
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
  c.args.eps_term = eps;
  c.args.gain = c.gain.data();
  c.args.bias = c.bias.data();
  Multiplier(rng.log_uniform(1e-9, 1e-3), &c.args.mult, &c.args.shift);
  Multiplier(rng.log_uniform(1e-7, 1e-1), &c.args.mult16, &c.args.shift16);
  c.args.y_zp = SampleZp(rng);
  c.args.y8_stride = c.y8_stride;
  c.args.y16_stride = c.y16_stride;
  return c;
}

template <class Fn>
void ExpectLn16MatchesRef(const std::vector<ek::Microkernel<Fn>>& variants, Ln16& c, const std::string& what) {
  std::vector<int8_t> want8(static_cast<size_t>(c.rows) * c.y8_stride, kCanary);
  std::vector<int16_t> want16(static_cast<size_t>(c.rows) * c.y16_stride, kCanary16);
  ek::QS16LayerNormArgs a = c.args;
  a.y8 = want8.data();
  a.y16 = want16.data();
  ek::qs16_layernorm__ref(a);
  for (const auto& uk : variants) {
    for (int outputs = 1; outputs <= 3; ++outputs) {
      std::vector<int8_t> got8(want8.size(), kCanary);
      std::vector<int16_t> got16(want16.size(), kCanary16);
      a.y8 = (outputs & 1) ? got8.data() : nullptr;
      a.y16 = (outputs & 2) ? got16.data() : nullptr;
      uk.fn(a);
      if (outputs & 1) {
        for (size_t j = 0; j < got8.size(); ++j) {
          ASSERT_EQ(got8[j], want8[j]) << uk.name << " int8 row " << j / c.y8_stride << " element " << j % c.y8_stride
                                       << " dim " << c.dim << " outputs " << outputs << " " << what;
        }
      }
      if (outputs & 2) {
        for (size_t j = 0; j < got16.size(); ++j) {
          ASSERT_EQ(got16[j], want16[j]) << uk.name << " int16 row " << j / c.y16_stride << " element "
                                         << j % c.y16_stride << " dim " << c.dim << " outputs " << outputs << " " << what;
        }
      }
    }
    // In place (y16 == x, same stride) with the int8 output beside it.
    std::vector<int16_t> inplace = c.x;
    std::vector<int8_t> got8(want8.size(), kCanary);
    ek::QS16LayerNormArgs b = c.args;
    b.x = inplace.data();
    b.y16 = inplace.data();
    b.y16_stride = c.x_stride;
    b.y8 = got8.data();
    uk.fn(b);
    ASSERT_EQ(got8, want8) << uk.name << " in place " << what;
    for (int r = 0; r < c.rows; ++r) {
      for (int i = 0; i < c.dim; ++i) {
        ASSERT_EQ(inplace[static_cast<size_t>(r) * c.x_stride + i], want16[static_cast<size_t>(r) * c.y16_stride + i])
            << uk.name << " in place, row " << r << " element " << i << " dim " << c.dim << " " << what;
      }
    }
  }
}

TEST_P(Qs16LayerNorm, MatchesRefExactly) {
  const auto variants = Only(GetParam());
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(47100 + seed);
    int dim;
    switch (rng.uniform_int(0, 3)) {
      case 0: dim = static_cast<int>(rng.uniform_int(1, 40)); break;
      case 1: dim = static_cast<int>(rng.uniform_int(1, 4096)); break;
      default: {
        static const int kWidths[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 768, 1000, 4096};
        dim = kWidths[rng.uniform_int(0, 19)];
      }
    }
    const int rows = static_cast<int>(dim <= 64 ? rng.uniform_int(1, 200) : rng.uniform_int(1, 12));
    Ln16 c = MakeLn16(rng, rows, dim, -1, SampleEps(rng));
    ExpectLn16MatchesRef(variants, c, "seed " + std::to_string(seed));
  }
}

// Every row shift s = 60 - k - p - f of contract 4b that int16 rows reach,
// with every row kind, up to the widest rows (d = 16384).
TEST_P(Qs16LayerNorm, EveryRowShift) {
  const auto variants = Only(GetParam());
  bool seen[64] = {};
  Rng rng(47500);
  for (int dim : {1, 2, 3, 17, 100, 1000, 4096, 16384}) {
    for (int e = 0; e <= 60; e += (dim >= 4096 ? 4 : 1)) {
      for (int kind = 0; kind < 6; ++kind) {
        Ln16 c = MakeLn16(rng, dim >= 4096 ? 1 : 3, dim, kind, int64_t{1} << e);
        int32_t s = 0;
        int64_t q = 0;
        for (int i = 0; i < dim; ++i) {
          s += c.x[i];
          q += static_cast<int32_t>(c.x[i]) * c.x[i];
        }
        const int shift = ek::layernorm16_row_scale(dim, s, q, c.args.eps_term).shift;
        ASSERT_GE(shift, 2);
        ASSERT_LE(shift, 53);
        seen[shift] = true;
        ExpectLn16MatchesRef(variants, c, "eps 2^" + std::to_string(e) + " kind " + std::to_string(kind));
      }
    }
  }
  int count = 0;
  for (bool b : seen) count += b ? 1 : 0;
  EXPECT_GE(count, 40);
}

// Every requantization shift of both outputs (-31..30).
TEST_P(Qs16LayerNorm, EveryOutputShift) {
  const auto variants = Only(GetParam());
  Rng rng(47600);
  for (int shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
    for (int rep = 0; rep < 3; ++rep) {
      const int dim = static_cast<int>(rep == 0 ? rng.uniform_int(1, 40) : rng.uniform_int(1, 300));
      Ln16 c = MakeLn16(rng, static_cast<int>(rng.uniform_int(1, 20)), dim, -1, SampleEps(rng));
      Multiplier(std::ldexp(rng.uniform(0.5, 0.999), shift), &c.args.mult, &c.args.shift);
      Multiplier(std::ldexp(rng.uniform(0.5, 0.999), ek::kMaxShift + ek::kMinShift - shift), &c.args.mult16,
                 &c.args.shift16);
      ExpectLn16MatchesRef(variants, c, "shift " + std::to_string(shift) + " rep " + std::to_string(rep));
    }
  }
}

}  // namespace
