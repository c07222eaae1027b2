// Shared by the files of kernels_bench (kernels_bench.cc: the layers and
// main; bench/kernels/<family>_bench.cc: one file per microkernel family):
// random tensors, the int8 / float linear layers, counters, and the
// registration of one benchmark per listed variant.
#ifndef EDGEATTN_BENCH_KERNELS_BENCH_UTIL_H_
#define EDGEATTN_BENCH_KERNELS_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "edgeattn/kernels/attention_tile.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/requant.h"
#include "edgeattn/kernels/task_split.h"

#if EA_HAVE_XNNPACK
#include <xnnpack.h>
#endif

namespace ek = edgeattn::kernels;

namespace kbench {

inline std::vector<int8_t> RandS8(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

inline std::vector<int16_t> RandS16(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-32768, 32767);
  std::vector<int16_t> v(n);
  for (auto& x : v) x = static_cast<int16_t>(d(rng));
  return v;
}

inline std::vector<float> RandF32(size_t n, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline void Mult(double r, int32_t* m, int32_t* s) {
  if (!ek::quantize_multiplier(r, m, s)) { *m = 1 << 30; *s = 0; }
}

inline int RoundUp16(int x) { return (x + 15) / 16 * 16; }

// The "xnnpack" pseudo-path: while set (by the registered benchmark), int8
// projections built from here on run through XNNPACK the way the runtime's
// backend runs them (runtime/src/xnnpack_backend.cc: a qc8 1x1 convolution
// with the real per-channel scale, input zero point 0, the folded bias), and
// everything else on the CPU's best kernel path. XNNPACK's own allocator
// (malloc) is used here: the arena placement is the runtime's business.
inline bool g_xnnpack_projections = false;

struct XnnpackScope {
  XnnpackScope() { g_xnnpack_projections = true; }
  ~XnnpackScope() { g_xnnpack_projections = false; }
};

// One int8 linear layer in the canonical layout ([out][round_up(in, 16)]).
struct Qs8Linear {
  int in, out, stride;
  std::vector<int8_t> w;         // row-major [out][stride] (XNNPACK's input)
  std::vector<int8_t> w_packed;  // the file's K4N16 layout (our kernels)
  std::vector<int32_t> bias, mult, shift;
  // The same projection with a residual in its epilogue (contract 5b):
  // its multiplier times 2^kResShift.
  static constexpr int32_t kResShift = 12;
  int32_t res_mult = 0, res_shift = 0;
  void* xnn_op = nullptr;
  Qs8Linear(int in_, int out_, uint64_t seed) : in(in_), out(out_), stride(RoundUp16(in_)) {
    w = RandS8(static_cast<size_t>(out) * stride, seed);
    for (int n = 0; n < out; ++n)
      for (int k = in; k < stride; ++k) w[static_cast<size_t>(n) * stride + k] = 0;
    w_packed.resize(ek::packed_weight_bytes(out, in));
    ek::pack_weights_k4n16(out, in, w.data(), stride, w_packed.data());
    bias.assign(out, 100);
    mult.resize(1);
    shift.resize(1);
    Mult(1.0 / (8.0 * std::sqrt(static_cast<double>(in)) * 64.0), &mult[0], &shift[0]);
    Mult(std::ldexp(1.0 / (8.0 * std::sqrt(static_cast<double>(in)) * 64.0), kResShift), &res_mult, &res_shift);
#if EA_HAVE_XNNPACK
    if (g_xnnpack_projections && in % 16 == 0) {
      const std::vector<float> scales(out, static_cast<float>(std::ldexp(double(mult[0]), shift[0] - 31)));
      xnn_operator_t op = nullptr;
      if (xnn_create_convolution2d_nhwc_qc8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, in, out, in, out, 0,
                                            1.0f, scales.data(), w.data(), bias.data(), -3, 1.0f,
                                            -128, 127, 0, &op) == xnn_status_success) {
        xnn_op = op;
      }
    }
#endif
  }
  Qs8Linear(const Qs8Linear&) = delete;
  Qs8Linear& operator=(const Qs8Linear&) = delete;
  ~Qs8Linear() {
#if EA_HAVE_XNNPACK
    if (xnn_op != nullptr) xnn_delete_operator(static_cast<xnn_operator_t>(xnn_op));
#endif
  }
  void Run(const ek::KernelTable& t, int rows, const int8_t* x, int x_stride, int8_t* y, int y_stride) const {
#if EA_HAVE_XNNPACK
    if (xnn_op != nullptr && x_stride == in && y_stride == out) {
      auto* op = static_cast<xnn_operator_t>(xnn_op);
      xnn_setup_convolution2d_nhwc_qc8(op, static_cast<size_t>(rows), 1, 1, x, y, nullptr);
      xnn_run_operator(op, nullptr);
      return;
    }
#endif
    t.qs8_linear(rows, out, in, x, x_stride, w_packed.data(), bias.data(), mult.data(),
                 shift.data(), 0, -3, y, y_stride);
  }
  // y = res + linear(x) (dense rows), as the runtime's blocks: never through XNNPACK.
  void RunRes(const ek::KernelTable& t, int rows, const int8_t* x, const int8_t* res, const ek::ResidualTerm& term,
              int8_t* y) const {
    t.qs8_linear_res(rows, out, in, x, in, w_packed.data(), bias.data(), &res_mult, &res_shift, 0, {res, out, term},
                     y, out);
  }
};

// The residual term of Qs8Linear::RunRes: residual and output at one scale
// (A = 2^n), zero points a_zp and y_zp.
inline ek::ResidualTerm ResTerm(int32_t a_zp, int32_t y_zp) {
  const int32_t n = Qs8Linear::kResShift;
  return {int32_t{1} << n, n, a_zp, y_zp};
}

struct F32Linear {
  int in, out, stride;
  std::vector<float> w, bias;
  F32Linear(int in_, int out_, uint64_t seed) : in(in_), out(out_), stride(RoundUp16(in_)) {
    w = RandF32(static_cast<size_t>(out) * stride, seed, 1.0f / std::sqrt(static_cast<float>(in)));
    bias.assign(out, 0.01f);
  }
  void Run(const ek::KernelTable& t, int rows, const float* x, int x_stride, float* y, int y_stride) const {
    t.f32_linear(rows, out, in, x, x_stride, w.data(), stride, bias.data(), y, y_stride);
  }
};

inline void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Bytes one call touches at least once (see the convention at the top).
inline void SetBytes(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

// Weight + bias bytes of one linear layer; es = bytes per weight element.
inline int64_t LinearBytes(int in, int out, int es) {
  return static_cast<int64_t>(out) * in * es + static_cast<int64_t>(out) * 4;
}

inline ek::QS8AttentionArgs Qs8Head(int q_len, int kv, int hd, int stride) {
  ek::QS8AttentionArgs a = {};
  a.q_len = q_len; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
  a.q_stride = a.k_stride = a.v_stride = a.out_stride = stride;
  a.q_zp = 3; a.k_zp = -5; a.v_zp = 2; a.out_zp = -1;
  Mult(1.0 / (std::sqrt(static_cast<double>(hd)) * 64.0 * 64.0) * 65536.0 * 1.4427, &a.score_mult, &a.score_shift);
  Mult(1.0 / 32768.0, &a.pv_mult, &a.pv_shift);
  a.kv_valid_len = kv;
  return a;
}

// The int8 LayerNorm's parameters at width d (the block's and the
// qs8_layernorm benchmarks').
struct Qs8Norm {
  std::vector<int16_t> gain;
  std::vector<int32_t> bias;
  ek::QS8LayerNormArgs args = {};
  explicit Qs8Norm(int d) {
    std::mt19937_64 rng(d);
    gain.resize(d);
    bias.resize(d);
    for (auto& g : gain) g = static_cast<int16_t>(16000 + rng() % 16767);
    for (auto& b : bias) b = static_cast<int32_t>(rng() % 4001) - 2000;
    args.dim = d;
    args.eps_term = 65536;
    args.gain = gain.data();
    args.bias = bias.data();
    Mult(std::ldexp(1.0, -ek::layernorm_frac_bits(d)) / 32767.0 / (4.0 / 127.0), &args.mult, &args.shift);
    args.y_zp = 0;
  }
  void Run(const ek::KernelTable& t, int rows, const int8_t* x, int8_t* y) {
    args.rows = rows;
    args.x = x; args.x_stride = args.dim;
    args.y = y; args.y_stride = args.dim;
    t.qs8_layernorm(args);
  }
};

// Calls reg(name suffix, table) for every listed variant of a family
// (kernels/lists/<family>.inc) this CPU runs: its path's table with that
// variant in the family's entry, named by the path.
template <class Fn, class Reg>
void ForEachVariant(const ek::Microkernel<Fn>* list, Fn ek::KernelTable::*entry, Reg reg) {
  for (; list->fn != nullptr; ++list) {
    if (!ek::kernel_path_supported(list->path)) continue;
    ek::KernelTable t = *ek::kernel_table(list->path);
    t.*entry = list->fn;
    reg(std::string("/") + ek::kernel_path_name(list->path), t);
  }
}

// Calls reg(function name, fn) for every listed variant of a family this CPU
// runs.
// The block's row-wise primitives alone, each listed variant by name
// (kernels/lists/qs8_{layernorm,lut}.inc): rows x width as the block at
// L 128, d 128 runs them (LayerNorm over d, the table over 4 d).
template <class Fn>
void ForEachListed(const ek::Microkernel<Fn>* list, const std::function<void(const char*, Fn)>& reg) {
  for (; list->fn != nullptr; ++list) {
    if (ek::kernel_path_supported(list->path)) reg(list->name, list->fn);
  }
}

// The per-family registrations (bench/kernels/<family>_bench.cc), called by
// kernels_bench.cc's main in this order.
// qs8_linear at rows x in x out on table t (qs8_linear_bench.cc; also the
// "xnnpack" pseudo-path's linear in kernels_bench.cc).
void BM_Qs8Linear(benchmark::State& state, const ek::KernelTable& t, int rows, int in, int out);
void RegisterQs8LinearBenchmarks();
void RegisterF32LinearBenchmarks();
void RegisterQs8LinearResBenchmarks();
void RegisterQs8LayerNormBenchmarks();
void RegisterQs8LinearRes16Benchmarks();  // the 16-bit residual stream (issue 37)
void RegisterQs16LayerNormBenchmarks();
void RegisterQs8LutBenchmarks();
void RegisterQs16NarrowBenchmarks();
void RegisterQs8AddBenchmarks();
void RegisterQs8Add16Benchmarks();
void RegisterQs8AttentionBenchmarks();
void RegisterF32AttentionBenchmarks();

}  // namespace kbench

#endif  // EDGEATTN_BENCH_KERNELS_BENCH_UTIL_H_
