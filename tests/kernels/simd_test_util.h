// Shared by the SIMD kernel tests (simd_test.cc and the per-family
// tests/kernels/<family>_test.cc, one binary, simd_test): random inputs with
// ragged shapes and int8 corners, and the parameterised suites over a
// family's list (kernels/lists/<family>.inc) named by each variant.
#ifndef EDGEATTN_TESTS_KERNELS_SIMD_TEST_UTIL_H_
#define EDGEATTN_TESTS_KERNELS_SIMD_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
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

namespace edgeattn {
namespace kernels {
// gtest prints a variant (a test's parameter) by its function's name.
template <class Fn>
void PrintTo(const Microkernel<Fn>& k, std::ostream* os) {
  *os << k.name;
}
}  // namespace kernels
}  // namespace edgeattn

namespace simd_test {

inline std::vector<ek::KernelPath> SimdPaths() {
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

inline const ek::KernelTable& Ref() { return *ek::kernel_table(ek::KernelPath::kRef); }

constexpr int kDims[] = {1, 3, 8, 15, 16, 17, 24, 32, 33, 48, 64};
inline int SampleDim(Rng& rng) {
  if (rng.uniform_int(0, 3) == 0) return static_cast<int>(rng.uniform_int(1, 96));
  return kDims[rng.uniform_int(0, 10)];
}

inline int SampleKvLen(Rng& rng) {
  static const int kLens[] = {1, 2, 3, 4, 5, 15, 16, 17, 31, 64, 100, 257, 512, 1000, 1024};
  if (rng.uniform_int(0, 1)) return kLens[rng.uniform_int(0, 14)];
  return static_cast<int>(rng.uniform_int(1, 1024));
}

inline int SampleValidLen(Rng& rng, int kv_len) {
  const int64_t u = rng.uniform_int(0, 99);
  if (u < 50) return kv_len;
  if (u < 85) return static_cast<int>(rng.uniform_int(0, kv_len));
  if (u < 92) return 0;
  return kv_len + 5;
}

inline int32_t SampleZp(Rng& rng) {
  switch (rng.uniform_int(0, 4)) {
    case 0: return -128;
    case 1: return 127;
    case 2: return 0;
    default: return static_cast<int32_t>(rng.uniform_int(-128, 127));
  }
}

inline void Multiplier(double r, int32_t* m, int32_t* s) {
  ASSERT_TRUE(ek::quantize_multiplier(r, m, s)) << r;
}

// Half the tensors are uniform; the others are dominated by the int8 corners
// (-128 and 127), which uniform data almost never lines up: -128 x -128
// products and saturated 16-bit pair sums inside SIMD dot products.
inline std::vector<int8_t> RandS8(Rng& rng, size_t n) {
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
inline std::vector<int8_t> PackedWithGarbagePadding(Rng& rng, int out, int in, const std::vector<int8_t>& w) {
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

inline std::vector<float> RandF32(Rng& rng, size_t n, double scale) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.normal() * scale);
  return v;
}

// The one variant of a parameterised test, as the list its body loops over
// (the bodies are the ones that looped over every variant).
template <class T>
std::vector<T> Only(const T& v) {
  return {v};
}

// A variant's test name: its function's name, e.g. qs8_linear__avx2.
struct VariantName {
  template <class P>
  std::string operator()(const ::testing::TestParamInfo<P>& info) const {
    return info.param.name;
  }
};

// One parameterised suite per family: every listed variant but the
// reference that this build and CPU run (none: no test, not a failure).
#define EA_VARIANT_SUITE(Suite, family)                                                                \
  class Suite : public ::testing::TestWithParam<                                                        \
                    std::remove_const_t<std::remove_pointer_t<decltype(ek::MicrokernelLists::family)>>> {}; \
  INSTANTIATE_TEST_SUITE_P(Simd, Suite, ::testing::ValuesIn(Variants(ek::microkernel_lists().family)),  \
                           VariantName());                                                          \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite)

// A softmax row variant with the exp row (steps 1-4) its path's table pairs
// it with (both lists have the same paths).
struct SoftmaxRowVariant {
  ek::KernelPath path;
  ek::Qs8SoftmaxRowFn fn;
  ek::Qs8SoftmaxExpRowFn exp_fn;
  const char* name;
};
inline void PrintTo(const SoftmaxRowVariant& v, std::ostream* os) { *os << v.name; }

// int16 values at the ends of the range (all corners, corners mixed with
// uniform, or uniform): the 16-bit stream's saturation cases.
inline std::vector<int16_t> RandS16(Rng& rng, size_t count) {
  std::vector<int16_t> v(count);
  const int64_t mode = rng.uniform_int(0, 2);
  for (auto& x : v) {
    const int64_t u = rng.uniform_int(0, 3);
    if (mode == 0 || (mode == 1 && u < 2)) {
      x = rng.uniform_int(0, 1) ? int16_t{-32768} : int16_t{32767};
    } else {
      x = static_cast<int16_t>(rng.uniform_int(-32768, 32767));
    }
  }
  return v;
}

// The add / add16 contracts' parameters over their whole range: A and B in
// [0, 2^21) with the ends drawn often, n in 1..max_shift, any zero points
// (add16 reads zp_x only).
inline ek::QS8AddParams RandAddParams(Rng& rng, int32_t max_shift) {
  auto multiplier = [&] {
    const int64_t pick = rng.uniform_int(0, 5);
    return static_cast<int32_t>(pick == 0   ? 0
                                : pick == 1 ? ek::kAddMaxMultiplier
                                            : rng.uniform_int(0, ek::kAddMaxMultiplier));
  };
  ek::QS8AddParams p;
  p.zp_x = static_cast<int32_t>(rng.uniform_int(-128, 127));
  p.a = multiplier();
  p.zp_r = static_cast<int32_t>(rng.uniform_int(-128, 127));
  p.b = multiplier();
  p.shift = static_cast<int32_t>(rng.uniform_int(1, max_shift));
  p.zp_y = static_cast<int32_t>(rng.uniform_int(-128, 127));
  return p;
}

inline std::string DescribeAdd(const ek::QS8AddParams& p) {
  return "A " + std::to_string(p.a) + " B " + std::to_string(p.b) + " n " + std::to_string(p.shift) + " zp " +
         std::to_string(p.zp_x) + "/" + std::to_string(p.zp_r) + "/" + std::to_string(p.zp_y);
}

// Canary bytes around outputs: a variant must not write past its rows.
constexpr int8_t kCanary = 0x5A;

}  // namespace simd_test

#endif  // EDGEATTN_TESTS_KERNELS_SIMD_TEST_UTIL_H_
