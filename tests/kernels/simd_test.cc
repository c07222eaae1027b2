// The SIMD kernel tests (one binary): every listed SIMD variant of each
// microkernel family the CPU supports
// (kernels/lists/<family>.inc: avx2, VNNI, NEON, dot product, ...) against
// the reference: int8 bit for bit (EXPECT_EQ on every element, the
// message names the element and the seed), float32 within a bound derived
// below. Shapes include ragged tails (head dims 1, 3, 8, 15, 16, 17, 24, 32, 33, 48, 64),
// every mask (causal with offsets, key padding including limit 0), lengths
// 1..1024 (sampled) and extreme zero points. Skipped when this build/CPU has
// no SIMD path (e.g. x86 without AVX2); on Arm it runs under qemu in
// scripts/stages/40-arm.sh with QEMU_CPU=cortex-a53 (neon) and cortex-a76
// (neon + neondot).
//
// One file per family (tests/kernels/<family>_test.cc), each a suite
// parameterised over the family's list and named by the variant, e.g.
// Simd/Qs8Linear.MatchesRefExactly/qs8_linear__avx2; this file holds the
// tests of the lists and tables themselves.
#include "simd_test_util.h"

namespace {

using namespace simd_test;  // NOLINT(build/namespaces)
using eatest::gamma_f32;
using eatest::Rng;

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
  ExpectTableEntries("qs16_narrow", l.qs16_narrow, &ek::KernelTable::qs16_narrow);
  ExpectTableEntries("qs8_add", l.qs8_add, &ek::KernelTable::qs8_add);
  ExpectTableEntries("qs8_add16", l.qs8_add16, &ek::KernelTable::qs8_add16);
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

}  // namespace
