// Every listed SIMD variant of each microkernel family the CPU supports
// (kernels/lists/<family>.inc: avx2, VNNI, NEON, dot product, ...) against
// the reference: int8 bit for bit (EXPECT_EQ on every element, the
// message names the element and the seed), float32 within a bound derived
// below. Shapes include ragged tails (head dims 1, 3, 8, 15, 16, 17, 24, 32, 33, 48, 64),
// every mask (causal with offsets, key padding including limit 0), lengths
// 1..1024 (sampled) and extreme zero points. Skipped when this build/CPU has
// no SIMD path (e.g. x86 without AVX2); on Arm it runs under qemu in
// scripts/stages/40-arm.sh with QEMU_CPU=cortex-a53 (neon) and cortex-a76
// (neon + neondot).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/layernorm_row.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"
#include "edgeattn/kernels/requant.h"
#include "test_util.h"


namespace ek = edgeattn::kernels;
using eatest::gamma_f32;
using eatest::Rng;

namespace {

std::vector<ek::KernelPath> SimdPaths() {
  std::vector<ek::KernelPath> paths;
  for (int i = 1; i < static_cast<int>(ek::KernelPath::kCount); ++i) {
    const auto p = static_cast<ek::KernelPath>(i);
    if (ek::kernel_path_supported(p)) paths.push_back(p);
  }
  return paths;
}

#define REQUIRE_SIMD_PATHS(paths)                                          \
  const std::vector<ek::KernelPath> paths = SimdPaths();                   \
  if (paths.empty()) GTEST_SKIP() << "no SIMD kernel path on this build/CPU"

// Every listed variant of a family but the reference whose path this build
// and CPU run, each tested on its own (also those no path's table picks).
template <class Fn>
std::vector<ek::Microkernel<Fn>> Variants(const ek::Microkernel<Fn>* list) {
  std::vector<ek::Microkernel<Fn>> v;
  for (; list->fn != nullptr; ++list) {
    if (list->path != ek::KernelPath::kRef && ek::kernel_path_supported(list->path)) v.push_back(*list);
  }
  return v;
}

#define REQUIRE_VARIANTS(variants, family)                                 \
  const auto variants = Variants(ek::microkernel_lists().family);          \
  if (variants.empty()) GTEST_SKIP() << "no SIMD variant of " #family " on this build/CPU"

const ek::KernelTable& Ref() { return *ek::kernel_table(ek::KernelPath::kRef); }

const int kDims[] = {1, 3, 8, 15, 16, 17, 24, 32, 33, 48, 64};
int SampleDim(Rng& rng) {
  if (rng.uniform_int(0, 3) == 0) return static_cast<int>(rng.uniform_int(1, 96));
  return kDims[rng.uniform_int(0, 10)];
}

int SampleKvLen(Rng& rng) {
  static const int kLens[] = {1, 2, 3, 4, 5, 15, 16, 17, 31, 64, 100, 257, 512, 1000, 1024};
  if (rng.uniform_int(0, 1)) return kLens[rng.uniform_int(0, 14)];
  return static_cast<int>(rng.uniform_int(1, 1024));
}

int SampleValidLen(Rng& rng, int kv_len) {
  const int64_t u = rng.uniform_int(0, 99);
  if (u < 50) return kv_len;
  if (u < 85) return static_cast<int>(rng.uniform_int(0, kv_len));
  if (u < 92) return 0;
  return kv_len + 5;
}

int32_t SampleZp(Rng& rng) {
  switch (rng.uniform_int(0, 4)) {
    case 0: return -128;
    case 1: return 127;
    case 2: return 0;
    default: return static_cast<int32_t>(rng.uniform_int(-128, 127));
  }
}

void Multiplier(double r, int32_t* m, int32_t* s) {
  ASSERT_TRUE(ek::quantize_multiplier(r, m, s)) << r;
}

// Half the tensors are uniform; the others are dominated by the int8 corners
// (-128 and 127), which uniform data almost never lines up: -128 x -128
// products and saturated 16-bit pair sums inside SIMD dot products.
std::vector<int8_t> RandS8(Rng& rng, size_t n) {
  std::vector<int8_t> v(n);
  const int64_t mode = rng.uniform_int(0, 3);
  for (auto& x : v) {
    if (mode == 0) {
      x = rng.uniform_int(0, 1) ? int8_t{-128} : rng.s8();
    } else if (mode == 1) {
      x = rng.uniform_int(0, 1) ? int8_t{-128} : int8_t{127};
    } else {
      x = rng.s8();
    }
  }
  return v;
}

// Row-major [out][in] weights in the packed K4N16 layout, with the padding
// (channels >= out, inputs >= in) filled with random bytes: the kernels must
// not depend on it (see packed_weights.h).
std::vector<int8_t> PackedWithGarbagePadding(Rng& rng, int out, int in, const std::vector<int8_t>& w) {
  std::vector<int8_t> packed(ek::packed_weight_bytes(out, in));
  ek::pack_weights_k4n16(out, in, w.data(), in, packed.data());
  const int kp = ek::packed_k(in);
  for (int n = 0; n < ek::packed_n(out); ++n) {
    for (int k = 0; k < kp; ++k) {
      if (n >= out || k >= in) packed[ek::packed_offset(n, k, kp)] = static_cast<int8_t>(rng.uniform_int(-128, 127));
    }
  }
  return packed;
}

std::vector<float> RandF32(Rng& rng, size_t n, double scale) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.normal() * scale);
  return v;
}

// Which paths the kernel tests below compare (printed for the CI log).
TEST(SimdTest, ListsPaths) {
  REQUIRE_SIMD_PATHS(paths);
  std::string names;
  for (ek::KernelPath p : paths) names += std::string(" ") + ek::kernel_path_name(p);
  std::printf("SIMD paths under test:%s (best: %s)\n", names.c_str(),
              ek::kernel_path_name(ek::best_kernel_path()));
}

// Dispatch reads the same lists: whenever a family lists a variant of a
// path, that path's table runs it (a variant added to a list cannot be left
// out of dispatch), and a family without one takes the variant of the path
// it extends (avx2 under the VNNI paths, neon under neondot) or the
// reference.
template <class Fn>
void ExpectTableEntries(const char* family, const ek::Microkernel<Fn>* list, Fn ek::KernelTable::*entry) {
  for (int i = 0; i < static_cast<int>(ek::KernelPath::kCount); ++i) {
    const auto path = static_cast<ek::KernelPath>(i);
    const ek::KernelTable* t = ek::kernel_table(path);
    if (t == nullptr) continue;
    const ek::Microkernel<Fn>* own = nullptr;
    for (const ek::Microkernel<Fn>* k = list; k->fn != nullptr; ++k) {
      if (k->path == path) own = k;
    }
    if (own != nullptr) {
      EXPECT_EQ(t->*entry, own->fn) << family << " of " << ek::kernel_path_name(path) << " is not " << own->name;
    } else {
      EXPECT_NE(t->*entry, nullptr) << family << " of " << ek::kernel_path_name(path);
    }
  }
}

TEST(SimdTest, TablesRunTheirListedVariants) {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  ExpectTableEntries("qs8_linear", l.qs8_linear, &ek::KernelTable::qs8_linear);
  ExpectTableEntries("qs8_linear_res", l.qs8_linear_res, &ek::KernelTable::qs8_linear_res);
  ExpectTableEntries("qs8_attention", l.qs8_attention, &ek::KernelTable::qs8_attention);
  ExpectTableEntries("qs8_additive", l.qs8_additive, &ek::KernelTable::qs8_additive);
  ExpectTableEntries("qs8_qk_row", l.qs8_qk_row, &ek::KernelTable::qs8_qk_row);
  ExpectTableEntries("qs8_softmax_row", l.qs8_softmax_row, &ek::KernelTable::qs8_softmax_row);
  ExpectTableEntries("qs8_softmax_exp_row", l.qs8_softmax_exp_row, &ek::KernelTable::qs8_softmax_exp_row);
  ExpectTableEntries("qs8_pv_row", l.qs8_pv_row, &ek::KernelTable::qs8_pv_row);
  ExpectTableEntries("qs8_layernorm", l.qs8_layernorm, &ek::KernelTable::qs8_layernorm);
  ExpectTableEntries("qs8_lut", l.qs8_lut, &ek::KernelTable::qs8_lut);
  if (l.f32_linear->fn != nullptr) {  // float kernels are in the build (not EA_INT8_ONLY)
    ExpectTableEntries("f32_linear", l.f32_linear, &ek::KernelTable::f32_linear);
    ExpectTableEntries("f32_attention", l.f32_attention, &ek::KernelTable::f32_attention);
    ExpectTableEntries("f32_additive", l.f32_additive, &ek::KernelTable::f32_additive);
  }
  // The extension rule on this build's tables: the VNNI paths' P.V row is avx2's.
  const ek::KernelTable* avx2 = ek::kernel_table(ek::KernelPath::kAvx2);
  for (ek::KernelPath p : {ek::KernelPath::kAvxVnni, ek::KernelPath::kAvx512Vnni}) {
    const ek::KernelTable* t = ek::kernel_table(p);
    if (t != nullptr && avx2 != nullptr) {
      EXPECT_EQ(t->qs8_pv_row, avx2->qs8_pv_row) << ek::kernel_path_name(p);
    }
  }
  const ek::KernelTable* neon = ek::kernel_table(ek::KernelPath::kNeon);
  const ek::KernelTable* dot = ek::kernel_table(ek::KernelPath::kNeonDot);
  if (neon != nullptr && dot != nullptr) {
    EXPECT_EQ(dot->qs8_softmax_row, neon->qs8_softmax_row);
  }
}

// ---------------------------------------------------------------- linear ----

TEST(SimdTest, Qs8LinearMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_linear);
  for (uint64_t seed = 0; seed < 120; ++seed) {
    Rng rng(1000 + seed);
    // Rows 1..20 reach every row tile (up to 8 rows) and its tail.
    const int rows = static_cast<int>(rng.uniform_int(1, 20));
    const int out = rng.uniform_int(0, 2) ? static_cast<int>(rng.uniform_int(1, 150))
                                          : kDims[rng.uniform_int(0, 10)];
    const int in = rng.uniform_int(0, 2) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    // x rows sometimes tight (the last row ends at the end of the buffer).
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-(1 << 20), 1 << 20));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    for (int n = 0; n < out; ++n) {
      if (rng.uniform_int(0, 19) == 0) {  // extremes of the (M, s) range
        mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
        shift[n] = rng.uniform_int(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else {
        Multiplier(rng.log_uniform(1e-6, 1e-1), &mult[n], &shift[n]);
      }
    }
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear(rows, out, in, x.data(), x_stride, w.data(), bias.data(),
                     mult.data(), shift.data(), per_channel, y_zp, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, y_zp,
                                      got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed
                                   << " rows " << rows << " out " << out << " in " << in;
      }
    }
  }
}

// Outputs past 256 channels: the dot-product kernel lays out its biases and
// requantization vectors in chunks of 16 blocks (256 channels) and packs the
// inputs of each row tile once per chunk (in_features <= 528), so several
// chunks, a ragged last one, and inputs on both sides of 528 are needed.
TEST(SimdTest, Qs8LinearWideOutputsMatchRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_linear);
  const int kOuts[] = {256, 257, 300, 512, 529};
  const int kIns[] = {16, 100, 128, 527, 528, 529, 544};
  for (uint64_t seed = 0; seed < 14; ++seed) {
    Rng rng(5000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 13));
    const int out = kOuts[seed % 5];
    const int in = kIns[seed % 7];
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-(1 << 20), 1 << 20));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    for (int n = 0; n < out; ++n) Multiplier(rng.log_uniform(1e-6, 1e-1), &mult[n], &shift[n]);
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                     per_channel, y_zp, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, y_zp,
            got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows
                                   << " out " << out << " in " << in;
      }
    }
  }
}

// Every requantization shift s in -31..30 (per tensor, or per channel around
// s), with biases that put the results near and across the int8 range: the
// Arm kernels requantize in 32-bit lanes with separate forms for s >= 0 and
// s < 0 (neon_common.h, requantize32_x4), including inputs whose left shift
// saturates.
TEST(SimdTest, Qs8LinearEveryShift) {
  REQUIRE_VARIANTS(variants, qs8_linear);
  for (uint64_t seed = 0; seed < 124; ++seed) {
    Rng rng(9000 + seed);
    const int s0 = static_cast<int>(seed % 62) - 31;
    const int rows = static_cast<int>(rng.uniform_int(1, 10));
    const int out = static_cast<int>(rng.uniform_int(1, 40));
    const int in = static_cast<int>(rng.uniform_int(1, 40));
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    std::vector<int32_t> mult(out), shift(out), bias(out);
    for (int n = 0; n < out; ++n) {
      mult[n] = static_cast<int32_t>(rng.uniform_int(int64_t{1} << 30, INT32_MAX));
      const int sn = per_channel ? s0 + static_cast<int>(rng.uniform_int(-2, 2)) : s0;
      shift[n] = std::min<int32_t>(ek::kMaxShift, std::max<int32_t>(ek::kMinShift, sn));
      if (!per_channel) { mult[n] = mult[0]; shift[n] = shift[0]; }
      // acc ~ y / (M 2^(s - 31)) for a target y in [-700, 700].
      const double r = std::ldexp(static_cast<double>(mult[n]), shift[n] - 31);
      const double b = rng.uniform(-700.0, 700.0) / r;
      // Within the headroom Model::Load requires (|bias| <= 2^31 - 1 - in * 2^14),
      // so the reference's int32 sum cannot overflow.
      const double lim = 2147483647.0 - 16384.0 * in;
      bias[n] = static_cast<int32_t>(std::max(-lim, std::min(lim, b)));
    }
    // Small products where one accumulator step is already many int8 steps.
    const int mag = s0 >= -10 ? 2 : 127;
    std::vector<int8_t> x(static_cast<size_t>(rows) * in), w_rows(static_cast<size_t>(out) * in);
    for (auto& v : x) v = static_cast<int8_t>(rng.uniform_int(-mag, mag));
    for (auto& v : w_rows) v = static_cast<int8_t>(rng.uniform_int(-mag, mag));
    const auto w = PackedWithGarbagePadding(rng, out, in, w_rows);
    const int32_t y_zp = SampleZp(rng);
    std::vector<int8_t> want(static_cast<size_t>(rows) * out);
    Ref().qs8_linear(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(),
                     per_channel, y_zp, want.data(), out);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(),
                                      shift.data(), per_channel, y_zp, got.data(), out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed
                                   << " shift " << s0 << " per_channel " << per_channel;
      }
    }
  }
}

// Float tolerance: both results are float32 sums of the same in+1 terms in
// different orders, each within gamma_(in+1) * sum|terms| of the exact value
// (Higham 3.1), so they differ by at most 2 gamma_(in+1) sum|terms|.
// qs8_linear_res (contract 5b): the same sums as qs8_linear, with the
// residual term added before the one rounding. Shapes as in
// Qs8LinearMatchesRefExactly and past 256 outputs; n over 1..16, A over its
// whole range, residual rows with their own stride, and biases that drive
// some sums into the +-2^26 clamp and the int8 ends.
TEST(SimdTest, Qs8LinearResMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_linear_res);
  const int kWideOuts[] = {256, 257, 300, 529};
  for (uint64_t seed = 0; seed < 160; ++seed) {
    Rng rng(13000 + seed);
    const bool wide = seed % 8 == 7;
    const int rows = static_cast<int>(rng.uniform_int(1, wide ? 9 : 20));
    const int out = wide ? kWideOuts[seed / 8 % 4]
                         : (rng.uniform_int(0, 2) ? static_cast<int>(rng.uniform_int(1, 150)) : kDims[rng.uniform_int(0, 10)]);
    const int in = rng.uniform_int(0, 2) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    const int x_stride = in + static_cast<int>(rng.uniform_int(0, 3));
    const int y_stride = out + static_cast<int>(rng.uniform_int(0, 3));
    const int r_stride = out + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + in);
    const auto res = RandS8(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::ResidualTerm term = {};
    term.shift = static_cast<int32_t>(rng.uniform_int(1, ek::kResidualMaxShift));
    term.mult = rng.uniform_int(0, 9) == 0 ? static_cast<int32_t>(rng.uniform_int(0, ek::kResidualMaxMultiplier))
                                           : static_cast<int32_t>(std::min<double>(
                                                 ek::kResidualMaxMultiplier,
                                                 std::lround(rng.uniform(0.3, 3.0) * std::ldexp(1.0, term.shift))));
    term.a_zp = SampleZp(rng);
    term.y_zp = SampleZp(rng);
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    const int32_t bias_mag = rng.uniform_int(0, 3) == 0 ? (1 << 28) : (1 << 20);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) {
      if (rng.uniform_int(0, 19) == 0) {
        mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
        shift[n] = rng.uniform_int(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else {  // the projection's r_c 2^n
        Multiplier(rng.log_uniform(1e-6, 1e-1) * std::ldexp(1.0, term.shift), &mult[n], &shift[n]);
      }
    }
    const ek::QS8Residual r = {res.data(), r_stride, term};
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A);
    Ref().qs8_linear_res(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                         per_channel, r, want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(), per_channel, r,
            got.data(), y_stride);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows
                                   << " out " << out << " in " << in << " n " << term.shift << " zp_a "
                                   << term.a_zp << " zp_y " << term.y_zp;
      }
    }
  }
}

// The block's usual case, n = 16 with every channel's s >= 0, which the
// dot-product path runs with SQRDMLAH and the term's zero points (OutRes16 in
// dotprod.cc): multipliers around 2^16 and at the edges (0, 2^16, 2^20 - 1,
// many trailing zeros), s up to kMaxShift (x << s saturates), large biases,
// zero points over int8 and every pair of its ends.
TEST(SimdTest, Qs8LinearResShift16MatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_linear_res);
  const int32_t kEdgeMults[] = {0, 1, 1 << 16, (1 << 16) + (1 << 15), 3 << 17, ek::kResidualMaxMultiplier, 1 << 19};
  const int32_t kEdgeZps[4][2] = {{-128, -128}, {-128, 127}, {127, -128}, {127, 127}};
  for (uint64_t seed = 0; seed < 120; ++seed) {
    Rng rng(17000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 16));
    const int out = rng.uniform_int(0, 1) ? kDims[rng.uniform_int(0, 10)] : static_cast<int>(rng.uniform_int(1, 300));
    const int in = rng.uniform_int(0, 1) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 600));
    const int r_stride = out + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows) * in);
    const auto res = RandS8(rng, static_cast<size_t>(rows - 1) * r_stride + out);
    const auto w = PackedWithGarbagePadding(rng, out, in, RandS8(rng, static_cast<size_t>(out) * in));
    ek::ResidualTerm term = {};
    term.shift = ek::kResidualMaxShift;
    term.mult = seed % 4 == 3 ? kEdgeMults[seed / 4 % 7]
                              : static_cast<int32_t>(std::lround(rng.uniform(0.3, 3.0) * std::ldexp(1.0, 16)));
    term.a_zp = SampleZp(rng);
    term.y_zp = SampleZp(rng);
    if (seed % 8 == 5) {
      term.a_zp = kEdgeZps[seed / 8 % 4][0];
      term.y_zp = kEdgeZps[seed / 8 % 4][1];
    }
    std::vector<int32_t> bias(out), mult(out), shift(out);
    const int per_channel = static_cast<int>(rng.uniform_int(0, 1));
    const int32_t bias_mag = rng.uniform_int(0, 3) == 0 ? (1 << 28) : (1 << 16);
    for (auto& b : bias) b = static_cast<int32_t>(rng.uniform_int(-bias_mag, bias_mag));
    for (int n = 0; n < out; ++n) {
      mult[n] = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      shift[n] = rng.uniform_int(0, 15) == 0 ? ek::kMaxShift : static_cast<int32_t>(rng.uniform_int(0, 10));
    }
    const ek::QS8Residual r = {res.data(), r_stride, term};
    std::vector<int8_t> want(static_cast<size_t>(rows) * out, 0x5A);
    Ref().qs8_linear_res(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(), per_channel,
                         r, want.data(), out);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(rows, out, in, x.data(), in, w.data(), bias.data(), mult.data(), shift.data(), per_channel, r, got.data(),
            out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " index " << i << " seed " << seed << " rows " << rows << " out "
                                   << out << " in " << in << " A " << term.mult << " zp_a " << term.a_zp
                                   << " zp_y " << term.y_zp;
      }
    }
  }
}

TEST(SimdTest, F32LinearWithinBound) {
  REQUIRE_VARIANTS(variants, f32_linear);
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(2000 + seed);
    const int rows = static_cast<int>(rng.uniform_int(1, 4));
    const int out = static_cast<int>(rng.uniform_int(1, 70));
    const int in = rng.uniform_int(0, 1) ? SampleDim(rng) : static_cast<int>(rng.uniform_int(1, 400));
    const int w_stride = in + static_cast<int>(rng.uniform_int(0, 5));
    const auto x = RandF32(rng, static_cast<size_t>(rows) * in, 1.0);
    const auto w = RandF32(rng, static_cast<size_t>(out) * w_stride, 0.2);
    const bool has_bias = rng.uniform_int(0, 1) != 0;
    const auto bias = RandF32(rng, out, 1.0);
    std::vector<float> want(static_cast<size_t>(rows) * out), got(want.size());
    Ref().f32_linear(rows, out, in, x.data(), in, w.data(), w_stride,
                     has_bias ? bias.data() : nullptr, want.data(), out);
    for (const auto& uk : variants) {
      uk.fn(rows, out, in, x.data(), in, w.data(), w_stride,
                                      has_bias ? bias.data() : nullptr, got.data(), out);
      for (int m = 0; m < rows; ++m) {
        for (int n = 0; n < out; ++n) {
          double mag = has_bias ? std::fabs(bias[n]) : 0.0;
          for (int k = 0; k < in; ++k) mag += std::fabs(static_cast<double>(w[n * w_stride + k]) * x[m * in + k]);
          const double tol = 2.0 * gamma_f32(in + 1) * mag + 1e-30;
          const size_t i = static_cast<size_t>(m) * out + n;
          ASSERT_NEAR(got[i], want[i], tol) << uk.name << " index " << i << " seed " << seed;
        }
      }
    }
  }
}

// ------------------------------------------------------------- attention ----

struct Qs8AttnCase {
  std::vector<int8_t> q, k, v;
  ek::QS8AttentionArgs a;
};

TEST(SimdTest, Qs8AttentionMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_attention);
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
TEST(SimdTest, Qs8AttentionTilesEveryShiftWithinScratch) {
  REQUIRE_VARIANTS(variants, qs8_attention);
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

// Each stage of each tiling path on its own (attention_tile.h), against the
// reference row kernels: after pack and qk, every row's scores over its
// limit equal qs8_qk_row__ref's up to one constant of the row (x86 keeps it
// 0, Arm leaves the row term out); after softmax, its weights output (when
// asked) equals the reference layer's and p_sum the sum of the reference
// probabilities; after pv, the output rows equal the reference layer's.
// Head dims and key counts have ragged tails, tiles ragged last rows, and
// nothing is written outside the tile scratch.
TEST(SimdTest, Qs8AttentionTileStagesMatchRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_attention_tile);
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

// Float tolerance. Scores differ only by summation order: |ds| <= 2 gamma_d
// sum|q k| |scale| (per key; ds_max over the row). Softmax of perturbed
// scores: each weight within exp(2 ds_max) relative, plus rounding of the
// normalization (gamma_(n+8), twice for the two results); the output is a
// convex combination of value rows, so |d out_c| <= rel * max_j |v_jc| plus
// the summation error 2 gamma_n sum_j p_j |v_jc| <= 2 gamma_n max_j |v_jc|.
TEST(SimdTest, F32AttentionWithinBound) {
  REQUIRE_VARIANTS(variants, f32_attention);
  for (uint64_t seed = 0; seed < 80; ++seed) {
    Rng rng(4000 + seed);
    ek::F32AttentionArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 6));
    a.kv_len = SampleKvLen(rng);
    a.head_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.q_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.k_stride = a.head_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.v_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 5));
    a.scale = static_cast<float>(rng.log_uniform(0.05, 2.0) / std::sqrt(a.head_dim));
    a.causal = rng.uniform_int(0, 1) != 0;
    a.causal_offset = a.kv_len - a.q_len + static_cast<int>(rng.uniform_int(-3, 3));
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto q = RandF32(rng, static_cast<size_t>(a.q_len) * a.q_stride, 1.0);
    const auto k = RandF32(rng, static_cast<size_t>(a.kv_len) * a.k_stride, 1.0);
    const auto v = RandF32(rng, static_cast<size_t>(a.kv_len) * a.v_stride, 1.0);
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<float> scratch(a.kv_len);
    a.scratch = scratch.data();
    std::vector<float> want(static_cast<size_t>(a.q_len) * a.v_dim), got(want.size());
    std::vector<float> want_w(static_cast<size_t>(a.q_len) * a.kv_len), got_w(want_w.size());
    a.out = want.data(); a.weights = want_w.data();
    Ref().f32_attention(a);
    for (const auto& uk : variants) {
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      for (int r = 0; r < a.q_len; ++r) {
        const int limit = ek::attention_row_limit(r, a.kv_len, a.kv_valid_len, a.causal, a.causal_offset);
        double ds = 0.0;
        for (int j = 0; j < limit; ++j) {
          double m = 0.0;
          for (int i = 0; i < a.head_dim; ++i) m += std::fabs(static_cast<double>(q[r * a.q_stride + i]) * k[j * a.k_stride + i]);
          ds = std::max(ds, 2.0 * gamma_f32(a.head_dim) * m * a.scale);
        }
        const double rel = std::expm1(2.0 * ds) + 2.0 * gamma_f32(limit + 8);
        for (int c = 0; c < a.v_dim; ++c) {
          double vmax = 0.0;
          for (int j = 0; j < limit; ++j) vmax = std::max(vmax, std::fabs(static_cast<double>(v[j * a.v_stride + c])));
          const double tol = (rel + 2.0 * gamma_f32(limit)) * vmax + 1e-30;
          const size_t i = static_cast<size_t>(r) * a.v_dim + c;
          ASSERT_NEAR(got[i], want[i], tol) << uk.name << " out index " << i << " seed " << seed;
        }
        for (int j = 0; j < a.kv_len; ++j) {
          const size_t i = static_cast<size_t>(r) * a.kv_len + j;
          ASSERT_NEAR(got_w[i], want_w[i], rel * want_w[i] + 1e-37) << uk.name << " weight index " << i << " seed " << seed;
        }
      }
    }
  }
}

// -------------------------------------------------------------- additive ----

TEST(SimdTest, Qs8AdditiveMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_additive);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(5000 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 4));
    a.kv_len = SampleKvLen(rng);
    if (a.kv_len > 512 && rng.uniform_int(0, 1)) a.kv_len /= 4;
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.kp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.values_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.qp_zp = SampleZp(rng);
    a.kp_zp = SampleZp(rng);
    a.values_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    a.pre_zp = SampleZp(rng);
    Multiplier(rng.log_uniform(1.0 / 64, 4.0), &a.pre_mult, &a.pre_shift);
    if (rng.uniform_int(0, 15) == 0) { a.pre_mult = INT32_MAX; a.pre_shift = ek::kMaxShift; }
    Multiplier(rng.log_uniform(1e-3, 1e4) / (std::sqrt(a.attn_dim) * 127.0 * 127.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandS8(rng, static_cast<size_t>(a.q_len) * a.qp_stride);
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.kp_stride);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.values_stride);
    const auto table = RandS8(rng, 256);
    const auto v_w = RandS8(rng, a.attn_dim);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.v_dim, 0x5A), got;
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.kv_len, 0xBEEF), got_w;
    a.out = want.data(); a.weights = want_w.data();
    Ref().qs8_additive(a);
    for (const auto& uk : variants) {
      got.assign(want.size(), 0x5A);
      got_w.assign(want_w.size(), 0xBEEF);
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " out index " << i << " seed " << seed
                                   << " kv_len " << a.kv_len << " attn_dim " << a.attn_dim << " v_dim " << a.v_dim;
      }
      for (size_t i = 0; i < got_w.size(); ++i) {
        ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
      }
    }
  }
}

// Coverage layers: the coverage term on every path (the x86 vector loop,
// the tails, Arm's fallback to the reference), ragged shapes, coverage
// values up to the saturation point, and the updated coverage vector itself.
TEST(SimdTest, Qs8AdditiveCoverageMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_additive);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(5500 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 5));
    a.kv_len = static_cast<int>(rng.uniform_int(1, 80));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.kp_stride = a.attn_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.values_stride = a.v_dim + static_cast<int>(rng.uniform_int(0, 7));
    a.qp_zp = SampleZp(rng);
    a.kp_zp = SampleZp(rng);
    a.values_zp = SampleZp(rng);
    a.out_zp = SampleZp(rng);
    a.pre_zp = SampleZp(rng);
    Multiplier(rng.log_uniform(1.0 / 64, 4.0), &a.pre_mult, &a.pre_shift);
    Multiplier(rng.log_uniform(1e-3, 1e4) / (std::sqrt(a.attn_dim) * 127.0 * 127.0) * 65536.0,
               &a.score_mult, &a.score_shift);
    Multiplier(rng.log_uniform(1.0 / 32768 / 8, 4.0 / 32768), &a.pv_mult, &a.pv_shift);
    // The converter's s_wc / (32768 s_h): from tiny up to the load limit 1.
    Multiplier(rng.log_uniform(1e-9, 0.99), &a.cov_mult, &a.cov_shift);
    if (rng.uniform_int(0, 15) == 0) { a.cov_mult = INT32_MAX; a.cov_shift = 0; }
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandS8(rng, static_cast<size_t>(a.q_len) * a.qp_stride);
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.kp_stride);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.values_stride);
    const auto table = RandS8(rng, 256);
    const auto v_w = RandS8(rng, a.attn_dim);
    const auto cov_w = RandS8(rng, a.attn_dim);
    std::vector<int32_t> cov0(a.kv_len);
    const int cov_kind = static_cast<int>(rng.uniform_int(0, 3));
    for (int32_t& c : cov0) {
      switch (cov_kind) {
        case 0: c = 0; break;                                                  // first step
        case 1: c = static_cast<int32_t>(rng.uniform_int(0, 4 * 32768)); break;
        case 2: c = static_cast<int32_t>(rng.uniform_int(0, ek::kCoverageMaxQ15)); break;
        default: c = ek::kCoverageMaxQ15 - static_cast<int32_t>(rng.uniform_int(0, 40000)); break;
      }
    }
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data(); a.cov_w = cov_w.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.v_dim, 0x5A), got;
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.kv_len, 0xBEEF), got_w;
    std::vector<int32_t> want_c = cov0, got_c;
    a.out = want.data(); a.weights = want_w.data(); a.coverage = want_c.data();
    Ref().qs8_additive(a);
    // The coverage after the call is the start plus every row's weights
    // (saturated), computed here from the weights the kernel returned.
    for (int j = 0; j < a.kv_len; ++j) {
      int64_t c = cov0[j];
      for (int r = 0; r < a.q_len; ++r) {
        c = std::min<int64_t>(c + want_w[static_cast<size_t>(r) * a.kv_len + j], ek::kCoverageMaxQ15);
      }
      ASSERT_EQ(want_c[j], c) << "ref coverage " << j << " seed " << seed;
    }
    for (const auto& uk : variants) {
      got.assign(want.size(), 0x5A);
      got_w.assign(want_w.size(), 0xBEEF);
      got_c = cov0;
      a.out = got.data(); a.weights = got_w.data(); a.coverage = got_c.data();
      uk.fn(a);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << uk.name << " out index " << i << " seed " << seed
                                   << " kv_len " << a.kv_len << " attn_dim " << a.attn_dim << " v_dim " << a.v_dim;
      }
      for (size_t i = 0; i < got_w.size(); ++i) {
        ASSERT_EQ(got_w[i], want_w[i]) << uk.name << " weight index " << i << " seed " << seed;
      }
      ASSERT_EQ(got_c, want_c) << uk.name << " coverage, seed " << seed;
    }
  }
}

// A coverage layer whose w_c is zero gives the plain kernel's integers (the
// term is requantize(0) = 0), on every path; with w_c != 0 and c != 0 it
// must differ somewhere (the term is not silently dropped).
TEST(SimdTest, Qs8AdditiveZeroCoverageWeightIsPlain) {
  auto all = Variants(ek::microkernel_lists().qs8_additive);
  all.push_back(ek::microkernel_lists().qs8_additive[0]);  // the reference (listed first)
  int differed = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Rng rng(5800 + seed);
    ek::QS8AdditiveArgs a = {};
    a.q_len = 1;
    a.kv_len = static_cast<int>(rng.uniform_int(2, 40));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.kp_stride = a.attn_dim;
    a.values_stride = a.v_dim;
    a.pre_zp = 0;
    Multiplier(0.25, &a.pre_mult, &a.pre_shift);
    Multiplier(1.0 / 64, &a.score_mult, &a.score_shift);
    Multiplier(1.0 / 32768, &a.pv_mult, &a.pv_shift);
    Multiplier(1.0 / 4096, &a.cov_mult, &a.cov_shift);
    a.kv_valid_len = a.kv_len;
    const auto qp = RandS8(rng, static_cast<size_t>(a.attn_dim));
    const auto kp = RandS8(rng, static_cast<size_t>(a.kv_len) * a.attn_dim);
    const auto values = RandS8(rng, static_cast<size_t>(a.kv_len) * a.v_dim);
    std::vector<int8_t> table(256);
    for (int i = 0; i < 256; ++i) table[i] = static_cast<int8_t>(std::lround(127.0 * std::tanh((i - 128) / 32.0)));
    const auto v_w = RandS8(rng, a.attn_dim);
    std::vector<int8_t> cov_w(a.attn_dim, 0);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data();
    a.tanh_table = table.data(); a.v_w = v_w.data(); a.cov_w = cov_w.data();
    a.out_stride = a.v_dim; a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> prob_scratch(a.kv_len);
    a.scratch = scratch.data(); a.prob_scratch = prob_scratch.data();
    std::vector<int8_t> plain(a.v_dim), out(a.v_dim);
    std::vector<uint16_t> plain_w(a.kv_len), w(a.kv_len);
    a.out = plain.data(); a.weights = plain_w.data();
    Ref().qs8_additive(a);  // no coverage
    std::vector<int32_t> cov(a.kv_len);
    for (int j = 0; j < a.kv_len; ++j) cov[j] = static_cast<int32_t>(rng.uniform_int(0, 8 * 32768));
    for (const auto& uk : all) {
      std::vector<int32_t> c = cov;
      a.coverage = c.data(); a.out = out.data(); a.weights = w.data();
      a.cov_w = cov_w.data();
      uk.fn(a);
      ASSERT_EQ(out, plain) << uk.name << " seed " << seed;
      ASSERT_EQ(w, plain_w) << uk.name << " seed " << seed;
      a.coverage = nullptr;
    }
    std::vector<int8_t> big_w(a.attn_dim, 127);
    std::vector<int32_t> c = cov;
    a.cov_w = big_w.data(); a.coverage = c.data(); a.out = out.data(); a.weights = w.data();
    Ref().qs8_additive(a);
    if (w != plain_w) ++differed;
    a.coverage = nullptr;
  }
  EXPECT_GT(differed, 0);
}

// Same bound as F32Attention with |ds| <= 2 gamma_attn_dim sum|v_w tanh| <=
// 2 gamma_attn_dim sum |v_w| (tanh itself is the same libm call).
TEST(SimdTest, F32AdditiveWithinBound) {
  REQUIRE_VARIANTS(variants, f32_additive);
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng rng(6000 + seed);
    ek::F32AdditiveArgs a = {};
    a.q_len = static_cast<int>(rng.uniform_int(1, 3));
    a.kv_len = static_cast<int>(rng.uniform_int(1, 300));
    a.attn_dim = SampleDim(rng);
    a.v_dim = SampleDim(rng);
    a.qp_stride = a.attn_dim; a.kp_stride = a.attn_dim + 1; a.values_stride = a.v_dim + 2;
    a.kv_valid_len = SampleValidLen(rng, a.kv_len);
    const auto qp = RandF32(rng, static_cast<size_t>(a.q_len) * a.qp_stride, 1.0);
    const auto kp = RandF32(rng, static_cast<size_t>(a.kv_len) * a.kp_stride, 1.0);
    const auto values = RandF32(rng, static_cast<size_t>(a.kv_len) * a.values_stride, 1.0);
    const auto v_w = RandF32(rng, a.attn_dim, 0.5);
    a.qp = qp.data(); a.kp = kp.data(); a.values = values.data(); a.v_w = v_w.data();
    a.out_stride = a.v_dim; a.weights_stride = a.kv_len;
    std::vector<float> scratch(a.kv_len);
    a.scratch = scratch.data();
    std::vector<float> want(static_cast<size_t>(a.q_len) * a.v_dim), got(want.size());
    std::vector<float> want_w(static_cast<size_t>(a.q_len) * a.kv_len), got_w(want_w.size());
    a.out = want.data(); a.weights = want_w.data();
    Ref().f32_additive(a);
    double vw = 0.0;
    for (float x : v_w) vw += std::fabs(x);
    const double ds = 2.0 * gamma_f32(a.attn_dim) * vw;
    for (const auto& uk : variants) {
      a.out = got.data(); a.weights = got_w.data();
      uk.fn(a);
      const int limit = std::min(a.kv_len, a.kv_valid_len);
      const double rel = std::expm1(2.0 * ds) + 2.0 * gamma_f32(limit + 8);
      for (int r = 0; r < a.q_len; ++r) {
        for (int c = 0; c < a.v_dim; ++c) {
          double vmax = 0.0;
          for (int j = 0; j < limit; ++j) vmax = std::max(vmax, std::fabs(static_cast<double>(values[j * a.values_stride + c])));
          const size_t i = static_cast<size_t>(r) * a.v_dim + c;
          ASSERT_NEAR(got[i], want[i], (rel + 2.0 * gamma_f32(limit)) * vmax + 1e-30)
              << uk.name << " out index " << i << " seed " << seed;
        }
        for (int j = 0; j < a.kv_len; ++j) {
          const size_t i = static_cast<size_t>(r) * a.kv_len + j;
          ASSERT_NEAR(got_w[i], want_w[i], rel * want_w[i] + 1e-37) << uk.name << " weight index " << i << " seed " << seed;
        }
      }
    }
  }
}

// ---------------------------------------------------- row primitives ----
// The row primitives (Q.K row, softmax row, P.V row), every listed variant
// against the reference on its own, so a wrong tail in one stage
// is named as such and not only seen through a whole attention.
struct SoftmaxRowVariant {
  ek::KernelPath path;
  ek::Qs8SoftmaxRowFn fn;
  ek::Qs8SoftmaxExpRowFn exp_fn;
};

// The listed softmax rows, each with the exp row its path's table pairs it
// with (both are listed for the same paths).
std::vector<SoftmaxRowVariant> SoftmaxRows() {
  std::vector<SoftmaxRowVariant> rows;
  for (const auto& k : Variants(ek::microkernel_lists().qs8_softmax_row)) {
    rows.push_back({k.path, k.fn, ek::kernel_table(k.path)->qs8_softmax_exp_row});
  }
  return rows;
}

TEST(SimdTest, Qs8QkRowMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_qk_row);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(5000 + seed);
    const int dim = SampleDim(rng);
    const int n = SampleKvLen(rng);
    const int k_stride = dim + static_cast<int>(rng.uniform_int(0, 20));
    const auto q = RandS8(rng, static_cast<size_t>(dim));
    const auto k = RandS8(rng, static_cast<size_t>(n - 1) * k_stride + dim);  // no byte past the last key
    const int32_t q_zp = SampleZp(rng), k_zp = SampleZp(rng);
    std::vector<int32_t> want(n + 1, 0x5A5A5A5A);
    Ref().qs8_qk_row(n, dim, q.data(), q_zp, k.data(), k_stride, k_zp, want.data());
    for (const auto& uk : variants) {
      std::vector<int32_t> got(want.size(), 0x5A5A5A5A);
      uk.fn(n, dim, q.data(), q_zp, k.data(), k_stride, k_zp, got.data());
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " key " << j << " seed " << seed
                                   << " n " << n << " dim " << dim;
      }
    }
  }
}

TEST(SimdTest, Qs8PvRowMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_pv_row);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(6000 + seed);
    const int v_dim = SampleDim(rng);
    const int n = SampleKvLen(rng);
    const int v_stride = v_dim + static_cast<int>(rng.uniform_int(0, 20));
    const auto v = RandS8(rng, static_cast<size_t>(n - 1) * v_stride + v_dim);
    std::vector<int32_t> scores(n);
    for (auto& x : scores) x = static_cast<int32_t>(rng.uniform_int(-3000, 3000));
    if (rng.uniform_int(0, 3) == 0) scores[rng.uniform_int(0, n - 1)] = 1 << 24;  // p = 32767
    std::vector<uint16_t> probs(n);
    int32_t mult, shift;
    Multiplier(rng.log_uniform(1e-3, 10.0), &mult, &shift);
    ek::qs8_softmax_row__ref(n, scores.data(), mult, shift, probs.data());
    const int32_t v_zp = SampleZp(rng), out_zp = SampleZp(rng);
    int32_t pv_mult, pv_shift;
    Multiplier(rng.log_uniform(1e-6, 1e-3), &pv_mult, &pv_shift);
    std::vector<int8_t> want(v_dim + 1, 0x5A);
    Ref().qs8_pv_row(n, v_dim, probs.data(), v.data(), v_stride, v_zp, pv_mult, pv_shift, out_zp,
                     want.data());
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), 0x5A);
      uk.fn(n, v_dim, probs.data(), v.data(), v_stride, v_zp, pv_mult,
                                      pv_shift, out_zp, got.data());
      for (size_t c = 0; c < got.size(); ++c) {
        ASSERT_EQ(got[c], want[c]) << uk.name << " column " << c << " seed " << seed
                                   << " n " << n << " v_dim " << v_dim;
      }
    }
  }
}

TEST(SimdTest, SoftmaxRowAllExponents) {
  const auto variants = SoftmaxRows();
  if (variants.empty()) GTEST_SKIP() << "no vector softmax row on this build/CPU";
  constexpr int kRow = 4096;
  std::vector<int32_t> s(kRow);
  std::vector<uint16_t> e(kRow), p(kRow), p_ref(kRow);
  for (const auto& v : variants) {
    for (int32_t z0 = 1; z0 < 0x10000 + kRow; z0 += kRow - 1) {
      s[0] = 0;
      for (int j = 1; j < kRow; ++j) s[j] = -(z0 + j - 1);
      const uint32_t sum = v.exp_fn(kRow, s.data(), 1 << 30, 5, e.data());
      uint32_t want_sum = 0;
      for (int j = 0; j < kRow; ++j) {
        const uint32_t z = j == 0 ? 0u : static_cast<uint32_t>(z0 + j - 1);
        const int32_t want = ek::exp2_neg_q15(z < ek::kExpZeroQ12 ? z : ek::kExpZeroQ12);
        want_sum += static_cast<uint32_t>(want);
        ASSERT_EQ(e[j], want) << ek::kernel_path_name(v.path) << " z " << z;
      }
      ASSERT_EQ(sum, want_sum) << ek::kernel_path_name(v.path) << " z0 " << z0;
      v.fn(kRow, s.data(), 1 << 30, 5, p.data());
      ek::qs8_softmax_row__ref(kRow, s.data(), 1 << 30, 5, p_ref.data());
      for (int j = 0; j < kRow; ++j) ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j;
    }
  }
}

// Every row length 1..100 (vector bodies and every tail) through each path's
// exp row against the reference's, with random scores and multipliers.
TEST(SimdTest, SoftmaxExpRowEveryLength) {
  const auto variants = SoftmaxRows();
  if (variants.empty()) GTEST_SKIP() << "no vector softmax row on this build/CPU";
  Rng rng(0xE4B);
  for (const auto& v : variants) {
    for (int n = 1; n <= 100; ++n) {
      std::vector<int32_t> s(n);
      for (auto& x : s) x = static_cast<int32_t>(rng.uniform_int(-200000, 200000));
      const int32_t mult = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      const int32_t shift = static_cast<int32_t>(rng.uniform_int(-8, 8));
      std::vector<uint16_t> e(n + 8, 0x5A5A), e_ref(n + 8, 0x5A5A);
      const uint32_t sum = v.exp_fn(n, s.data(), mult, shift, e.data());
      const uint32_t sum_ref = ek::qs8_softmax_exp_row__ref(n, s.data(), mult, shift, e_ref.data());
      ASSERT_EQ(sum, sum_ref) << ek::kernel_path_name(v.path) << " n " << n;
      for (int j = 0; j < n + 8; ++j) ASSERT_EQ(e[j], e_ref[j]) << ek::kernel_path_name(v.path) << " n " << n << " j " << j;
    }
  }
}

// Every exponent shift (-31..30) and multipliers from 1 to INT32_MAX, with
// differences d = max - s at the edges of each step of the exponent: the
// pre-shift's floor, the limit D, z = 0xFFFF, and (post-shift r < 16) the
// 32-bit overflow of d' M 2^(16 - r). The NEON row picks one of four loops
// from (p, r) (softmax_neon.h), so each loop meets its own edges here; the
// row length 83 covers the 16- and 8-lane bodies and the scalar tail.
TEST(SimdTest, SoftmaxExpRowEveryShiftAtEdges) {
  const auto variants = SoftmaxRows();
  if (variants.empty()) GTEST_SKIP() << "no vector softmax row on this build/CPU";
  Rng rng(0x5EED);
  constexpr int kRow = 83;
  for (const auto& v : variants) {
    for (int32_t shift = ek::kMinShift; shift <= ek::kMaxShift; ++shift) {
      for (int32_t mult : {1, 1 << 15, (1 << 30) + 12345, INT32_MAX,
                           static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX))}) {
        const ek::SoftmaxExpParams x = ek::softmax_exp_params(mult, shift);
        const uint64_t step = uint64_t{1} << x.pre_shift;
        std::vector<uint64_t> edges = {0, 1, 2, step - 1, step, step + 1};
        const uint64_t dlim = uint64_t{x.limit} << x.pre_shift;  // d >> p reaches D
        const uint64_t dz = ((uint64_t{ek::kExpZeroQ12} << x.post_shift) / x.multiplier) << x.pre_shift;
        const uint64_t dov = ((uint64_t{1} << (16 + x.post_shift)) / x.multiplier) << x.pre_shift;
        for (uint64_t c : {dlim, dz, dov}) {
          for (int64_t k = -2; k <= 2; ++k) {
            edges.push_back(c + static_cast<uint64_t>(k * static_cast<int64_t>(step)));
            edges.push_back(c + static_cast<uint64_t>(k));
          }
        }
        std::vector<int32_t> s(kRow);
        s[0] = INT32_MAX;
        for (int j = 1; j < kRow; ++j) {
          uint64_t d = j - 1 < static_cast<int>(edges.size()) ? edges[j - 1] : rng.uniform_int(0, UINT32_MAX);
          if (d > UINT32_MAX) d = UINT32_MAX;
          s[j] = static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX) - static_cast<uint32_t>(d));
        }
        std::vector<uint16_t> e(kRow), e_ref(kRow);
        const uint32_t sum = v.exp_fn(kRow, s.data(), mult, shift, e.data());
        const uint32_t sum_ref = ek::qs8_softmax_exp_row__ref(kRow, s.data(), mult, shift, e_ref.data());
        for (int j = 0; j < kRow; ++j) {
          ASSERT_EQ(e[j], e_ref[j]) << ek::kernel_path_name(v.path) << " shift " << shift << " mult " << mult
                                    << " j " << j << " s " << s[j];
        }
        ASSERT_EQ(sum, sum_ref) << ek::kernel_path_name(v.path) << " shift " << shift << " mult " << mult;
      }
    }
  }
}

// The longest rows (65535 keys, the format's limit): row sums up to
// 65535 * 32767, i.e. the normalizer's largest shift (31), with all-equal
// scores and with scores a few steps below the maximum.
TEST(SimdTest, SoftmaxRowLongestRows) {
  const auto variants = SoftmaxRows();
  if (variants.empty()) GTEST_SKIP() << "no vector softmax row on this build/CPU";
  constexpr int kRow = 65535;
  Rng rng(7777);
  std::vector<int32_t> s(kRow), s_ref;
  std::vector<uint16_t> p(kRow), p_ref(kRow);
  for (const auto& v : variants) {
    for (int spread : {0, 3, 40000}) {
      for (auto& x : s) x = 1000 - static_cast<int32_t>(rng.uniform_int(0, spread));
      s_ref = s;
      v.fn(kRow, s.data(), 1 << 30, 1, p.data());
      ek::qs8_softmax_row__ref(kRow, s_ref.data(), 1 << 30, 1, p_ref.data());
      for (int j = 0; j < kRow; ++j) {
        ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " spread " << spread;
      }
    }
  }
}

// Extreme scores (INT32_MIN / INT32_MAX: the saturated difference) and
// extreme multipliers, odd lengths (vector body + scalar tail).
TEST(SimdTest, SoftmaxRowExtremes) {
  const auto variants = SoftmaxRows();
  if (variants.empty()) GTEST_SKIP() << "no vector softmax row on this build/CPU";
  for (const auto& v : variants) {
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Rng rng(7000 + seed);
      const int n = static_cast<int>(rng.uniform_int(1, 70));
      std::vector<int32_t> s(n), s_ref;
      for (auto& x : s) {
        switch (rng.uniform_int(0, 3)) {
          case 0: x = INT32_MIN; break;
          case 1: x = INT32_MAX; break;
          default: x = static_cast<int32_t>(rng.uniform_int(INT32_MIN, INT32_MAX));
        }
      }
      s_ref = s;
      const int32_t mult = static_cast<int32_t>(rng.uniform_int(1 << 30, INT32_MAX));
      const int32_t shift = static_cast<int32_t>(rng.uniform_int(ek::kMinShift, ek::kMaxShift));
      std::vector<uint16_t> p(n), p_ref(n);
      v.fn(n, s.data(), mult, shift, p.data());
      ek::qs8_softmax_row__ref(n, s_ref.data(), mult, shift, p_ref.data());
      for (int j = 0; j < n; ++j) {
        ASSERT_EQ(s[j], s_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " seed " << seed;
        ASSERT_EQ(p[j], p_ref[j]) << ek::kernel_path_name(v.path) << " index " << j << " seed " << seed;
      }
    }
  }
}


// ---------------------------------------------------- transformer blocks ----
// LayerNorm (contract 4) and activation table (contract 6): every listed
// variant against the reference, byte for byte,
// with canaries after each row (a variant must not write past `dim`).

constexpr int8_t kCanary = 0x5A;

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
// kernels/avx2/block.cc). Rows with one outlier reach the bound (Samuelson's
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

TEST(SimdTest, Qs8LayerNormMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_layernorm);
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
TEST(SimdTest, Qs8LayerNormEveryRowShift) {
  REQUIRE_VARIANTS(variants, qs8_layernorm);
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
TEST(SimdTest, Qs8LayerNormEveryOutputShift) {
  REQUIRE_VARIANTS(variants, qs8_layernorm);
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

TEST(SimdTest, Qs8LutMatchesRefExactly) {
  REQUIRE_VARIANTS(variants, qs8_lut);
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(9900 + seed);
    const int n = static_cast<int>(rng.uniform_int(0, 2) ? rng.uniform_int(1, 70) : rng.uniform_int(1, 4096));
    const int rows = static_cast<int>(n <= 70 ? rng.uniform_int(1, 1024) : rng.uniform_int(1, 8));
    const int x_stride = n + static_cast<int>(rng.uniform_int(0, 5));
    const int y_stride = n + static_cast<int>(rng.uniform_int(1, 5));
    const auto x = RandS8(rng, static_cast<size_t>(rows - 1) * x_stride + n);
    std::vector<int8_t> table(256);
    for (auto& t : table) t = rng.s8();
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, kCanary);
    ek::qs8_lut__ref(rows, n, x.data(), x_stride, table.data(), want.data(), y_stride);
    for (const auto& uk : variants) {
      std::vector<int8_t> got(want.size(), kCanary);
      uk.fn(rows, n, x.data(), x_stride, table.data(), got.data(), y_stride);
      for (size_t j = 0; j < got.size(); ++j) {
        ASSERT_EQ(got[j], want[j]) << uk.name << " row " << j / y_stride << " element " << j % y_stride
                                   << " seed " << seed << " n " << n;
      }
      std::vector<int8_t> inplace = x;
      uk.fn(rows, n, inplace.data(), x_stride, table.data(), inplace.data(), x_stride);
      for (int r = 0; r < rows; ++r) {
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(inplace[static_cast<size_t>(r) * x_stride + i], want[static_cast<size_t>(r) * y_stride + i])
              << uk.name << " in place, row " << r << " element " << i << " seed " << seed;
        }
      }
    }
  }
}

// Every table entry reached, each in every position of a vector.
TEST(SimdTest, Qs8LutEveryIndex) {
  REQUIRE_VARIANTS(variants, qs8_lut);
  Rng rng(9990);
  std::vector<int8_t> table(256);
  for (auto& t : table) t = rng.s8();
  std::vector<int8_t> x(256 * 67);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 7 + i / 256) & 0xFF);
  const int n = static_cast<int>(x.size());
  std::vector<int8_t> want(x.size());
  ek::qs8_lut__ref(1, n, x.data(), n, table.data(), want.data(), n);
  for (const auto& uk : variants) {
    std::vector<int8_t> got(x.size());
    uk.fn(1, n, x.data(), n, table.data(), got.data(), n);
    for (size_t j = 0; j < got.size(); ++j) ASSERT_EQ(got[j], want[j]) << uk.name << " element " << j << " x " << int{x[j]};
  }
}

}  // namespace
