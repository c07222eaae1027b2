// Google Benchmark suite for the kernel tables: every kernel family and the
// attention layers built from them, for every dispatch path this build and
// CPU support (ref, avx2, avxvnni on x86; neon, neondot on Arm). Inputs are
// random in-memory tensors (no model file); the layer benchmarks mirror
// run_mha / run_additive in runtime/src/interpreter.cc (projections, per-head
// attention, output projection) calling the table entries directly.
//
// Counter GFLOPS = useful floating-point-equivalent operations per second
// (one multiply-add = 2), with these conventions:
//   linear            2 * rows * out * in
//   attention (head)  4 * q_len * kv * head_dim          (Q.K and P.V)
//   MHA self-attn     8 * L * d^2 + 4 * L^2 * d          (4 projections + attention)
//   MHA decoder step  4 * d^2 + 4 * kv * d               (q/out projections, cached K/V)
//   additive step     2 * d * a + 4 * kv * a + 2 * kv * v (query projection, scores, P.V)
//
// Run: build/host/bench/kernels_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true [--benchmark_filter=mha]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/quantize_multiplier.h"

namespace ek = edgeattn::kernels;

namespace {

std::vector<int8_t> RandS8(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<float> RandF32(size_t n, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void Mult(double r, int32_t* m, int32_t* s) {
  if (!ek::quantize_multiplier(r, m, s)) { *m = 1 << 30; *s = 0; }
}

int RoundUp16(int x) { return (x + 15) / 16 * 16; }

// One int8 linear layer in the canonical layout ([out][round_up(in, 16)]).
struct Qs8Linear {
  int in, out, stride;
  std::vector<int8_t> w;
  std::vector<int32_t> bias, mult, shift;
  Qs8Linear(int in_, int out_, uint64_t seed) : in(in_), out(out_), stride(RoundUp16(in_)) {
    w = RandS8(static_cast<size_t>(out) * stride, seed);
    for (int n = 0; n < out; ++n)
      for (int k = in; k < stride; ++k) w[static_cast<size_t>(n) * stride + k] = 0;
    bias.assign(out, 100);
    mult.resize(1);
    shift.resize(1);
    Mult(1.0 / (8.0 * std::sqrt(static_cast<double>(in)) * 64.0), &mult[0], &shift[0]);
  }
  void Run(const ek::KernelTable& t, int rows, const int8_t* x, int x_stride, int8_t* y, int y_stride) const {
    t.qs8_linear(rows, out, in, x, x_stride, w.data(), stride, bias.data(), mult.data(),
                 shift.data(), 0, -3, y, y_stride);
  }
};

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

void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------ kernels ----

void BM_Qs8Linear(benchmark::State& state, ek::KernelPath path, int rows, int in, int out) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  Qs8Linear lin(in, out, 1);
  const auto x = RandS8(static_cast<size_t>(rows) * in, 2);
  std::vector<int8_t> y(static_cast<size_t>(rows) * out);
  for (auto _ : state) {
    lin.Run(t, rows, x.data(), in, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
}

void BM_F32Linear(benchmark::State& state, ek::KernelPath path, int rows, int in, int out) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  F32Linear lin(in, out, 1);
  const auto x = RandF32(static_cast<size_t>(rows) * in, 2, 1.0f);
  std::vector<float> y(static_cast<size_t>(rows) * out);
  for (auto _ : state) {
    lin.Run(t, rows, x.data(), in, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
}

ek::QS8AttentionArgs Qs8Head(int q_len, int kv, int hd, int stride) {
  ek::QS8AttentionArgs a = {};
  a.q_len = q_len; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
  a.q_stride = a.k_stride = a.v_stride = a.out_stride = stride;
  a.q_zp = 3; a.k_zp = -5; a.v_zp = 2; a.out_zp = -1;
  Mult(1.0 / (std::sqrt(static_cast<double>(hd)) * 64.0 * 64.0) * 65536.0 * 1.4427, &a.score_mult, &a.score_shift);
  Mult(1.0 / 32768.0, &a.pv_mult, &a.pv_shift);
  a.kv_valid_len = kv;
  return a;
}

void BM_Qs8Attention(benchmark::State& state, ek::KernelPath path, int q_len, int kv, int hd) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const auto q = RandS8(static_cast<size_t>(q_len) * hd, 1);
  const auto k = RandS8(static_cast<size_t>(kv) * hd, 2);
  const auto v = RandS8(static_cast<size_t>(kv) * hd, 3);
  std::vector<int8_t> out(static_cast<size_t>(q_len) * hd);
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  ek::QS8AttentionArgs a = Qs8Head(q_len, kv, hd, hd);
  a.q = q.data(); a.k = k.data(); a.v = v.data(); a.out = out.data();
  a.scratch = scratch.data(); a.prob_scratch = probs.data();
  for (auto _ : state) {
    t.qs8_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * q_len * kv * hd);
}

void BM_F32Attention(benchmark::State& state, ek::KernelPath path, int q_len, int kv, int hd) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const auto q = RandF32(static_cast<size_t>(q_len) * hd, 1, 1.0f);
  const auto k = RandF32(static_cast<size_t>(kv) * hd, 2, 1.0f);
  const auto v = RandF32(static_cast<size_t>(kv) * hd, 3, 1.0f);
  std::vector<float> out(static_cast<size_t>(q_len) * hd), scratch(kv);
  ek::F32AttentionArgs a = {};
  a.q_len = q_len; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
  a.q = q.data(); a.k = k.data(); a.v = v.data(); a.out = out.data();
  a.q_stride = a.k_stride = a.v_stride = a.out_stride = hd;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.kv_valid_len = kv;
  a.scratch = scratch.data();
  for (auto _ : state) {
    t.f32_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * q_len * kv * hd);
}

// ------------------------------------------------------------- layers ----

// Multi-head attention, int8. decoder: q_len = 1 against kv cached keys (K/V
// projections not timed, like a cached decoder step); else self-attention.
void BM_Qs8Mha(benchmark::State& state, ek::KernelPath path, int L, int kv, int d, int heads, bool decoder) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads;
  Qs8Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandS8(static_cast<size_t>(std::max(L, kv)) * d, 15);
  std::vector<int8_t> q(static_cast<size_t>(L) * d), ctx(q.size()), y(q.size());
  std::vector<int8_t> kp(static_cast<size_t>(kv) * d), vp(kp.size());
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  if (decoder) {
    wk.Run(t, kv, x.data(), d, kp.data(), d);
    wv.Run(t, kv, x.data(), d, vp.data(), d);
  }
  for (auto _ : state) {
    wq.Run(t, L, x.data(), d, q.data(), d);
    if (!decoder) {
      wk.Run(t, kv, x.data(), d, kp.data(), d);
      wv.Run(t, kv, x.data(), d, vp.data(), d);
    }
    for (int h = 0; h < heads; ++h) {
      ek::QS8AttentionArgs a = Qs8Head(L, kv, hd, d);
      a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd;
      a.out = ctx.data() + h * hd;
      a.scratch = scratch.data(); a.prob_scratch = probs.data();
      t.qs8_attention(a);
    }
    wo.Run(t, L, ctx.data(), d, y.data(), d);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = decoder ? 4.0 * d * d + 4.0 * kv * d
                               : 8.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d;
  SetFlops(state, flops);
}

void BM_F32Mha(benchmark::State& state, ek::KernelPath path, int L, int kv, int d, int heads, bool decoder) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int hd = d / heads;
  F32Linear wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
  const auto x = RandF32(static_cast<size_t>(std::max(L, kv)) * d, 15, 1.0f);
  std::vector<float> q(static_cast<size_t>(L) * d), ctx(q.size()), y(q.size());
  std::vector<float> kp(static_cast<size_t>(kv) * d), vp(kp.size()), scratch(kv);
  if (decoder) {
    wk.Run(t, kv, x.data(), d, kp.data(), d);
    wv.Run(t, kv, x.data(), d, vp.data(), d);
  }
  for (auto _ : state) {
    wq.Run(t, L, x.data(), d, q.data(), d);
    if (!decoder) {
      wk.Run(t, kv, x.data(), d, kp.data(), d);
      wv.Run(t, kv, x.data(), d, vp.data(), d);
    }
    for (int h = 0; h < heads; ++h) {
      ek::F32AttentionArgs a = {};
      a.q_len = L; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
      a.q = q.data() + h * hd; a.k = kp.data() + h * hd; a.v = vp.data() + h * hd;
      a.out = ctx.data() + h * hd;
      a.q_stride = a.k_stride = a.v_stride = a.out_stride = d;
      a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
      a.kv_valid_len = kv;
      a.scratch = scratch.data();
      t.f32_attention(a);
    }
    wo.Run(t, L, ctx.data(), d, y.data(), d);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = decoder ? 4.0 * d * d + 4.0 * kv * d
                               : 8.0 * L * d * static_cast<double>(d) + 4.0 * L * static_cast<double>(L) * d;
  SetFlops(state, flops);
}

// Additive (Bahdanau) decoder step: query projection (d -> a) + scores over
// kv cached projected keys + P.V. d = a = v = 128.
void BM_Qs8Additive(benchmark::State& state, ek::KernelPath path, int kv) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int d = 128, ad = 128, vd = 128;
  Qs8Linear wq(d, ad, 21);
  const auto x = RandS8(d, 22);
  const auto kp = RandS8(static_cast<size_t>(kv) * ad, 23);
  const auto values = RandS8(static_cast<size_t>(kv) * vd, 24);
  const auto table = RandS8(256, 25);
  const auto v_w = RandS8(ad, 26);
  std::vector<int8_t> qp(ad), out(vd);
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  ek::QS8AdditiveArgs a = {};
  a.q_len = 1; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
  a.qp = qp.data(); a.qp_stride = ad; a.qp_zp = 1;
  a.kp = kp.data(); a.kp_stride = ad; a.kp_zp = -2;
  Mult(0.5, &a.pre_mult, &a.pre_shift); a.pre_zp = 0;
  a.tanh_table = table.data(); a.v_w = v_w.data();
  Mult(1.0 / (std::sqrt(128.0) * 127.0 * 127.0) * 65536.0 * 4.0, &a.score_mult, &a.score_shift);
  Mult(1.0 / 32768.0, &a.pv_mult, &a.pv_shift);
  a.values = values.data(); a.values_stride = vd; a.values_zp = 0; a.out_zp = 0;
  a.kv_valid_len = kv;
  a.out = out.data(); a.out_stride = vd;
  a.scratch = scratch.data(); a.prob_scratch = probs.data();
  for (auto _ : state) {
    wq.Run(t, 1, x.data(), d, qp.data(), ad);
    t.qs8_additive(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 2.0 * d * ad + 4.0 * kv * ad + 2.0 * kv * vd);
}

void BM_F32Additive(benchmark::State& state, ek::KernelPath path, int kv) {
  const ek::KernelTable& t = *ek::kernel_table(path);
  const int d = 128, ad = 128, vd = 128;
  F32Linear wq(d, ad, 21);
  const auto x = RandF32(d, 22, 1.0f);
  const auto kp = RandF32(static_cast<size_t>(kv) * ad, 23, 1.0f);
  const auto values = RandF32(static_cast<size_t>(kv) * vd, 24, 1.0f);
  const auto v_w = RandF32(ad, 26, 0.1f);
  std::vector<float> qp(ad), out(vd), scratch(kv);
  ek::F32AdditiveArgs a = {};
  a.q_len = 1; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
  a.qp = qp.data(); a.qp_stride = ad; a.kp = kp.data(); a.kp_stride = ad;
  a.v_w = v_w.data(); a.values = values.data(); a.values_stride = vd;
  a.kv_valid_len = kv; a.out = out.data(); a.out_stride = vd; a.scratch = scratch.data();
  for (auto _ : state) {
    wq.Run(t, 1, x.data(), d, qp.data(), ad);
    t.f32_additive(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 2.0 * d * ad + 4.0 * kv * ad + 2.0 * kv * vd);
}

void RegisterAll() {
  for (int i = 0; i < static_cast<int>(ek::KernelPath::kCount); ++i) {
    const auto p = static_cast<ek::KernelPath>(i);
    if (!ek::kernel_path_supported(p)) continue;
    const std::string pn = ek::kernel_path_name(p);
    auto reg = [&](const std::string& name, auto fn) {
      benchmark::RegisterBenchmark((name + "/" + pn).c_str(), fn);
    };
    // Kernels.
    for (int rows : {1, 16, 64, 128}) {
      for (int d : {64, 128, 256}) {
        const std::string s = "/rows:" + std::to_string(rows) + "/in:" + std::to_string(d) + "/out:" + std::to_string(d);
        reg("qs8_linear" + s, [=](benchmark::State& st) { BM_Qs8Linear(st, p, rows, d, d); });
        reg("f32_linear" + s, [=](benchmark::State& st) { BM_F32Linear(st, p, rows, d, d); });
      }
    }
    for (int L : {16, 64, 128}) {
      for (int hd : {16, 32, 64, 128}) {
        const std::string s = "/q:" + std::to_string(L) + "/kv:" + std::to_string(L) + "/hd:" + std::to_string(hd);
        reg("qs8_attention" + s, [=](benchmark::State& st) { BM_Qs8Attention(st, p, L, L, hd); });
        reg("f32_attention" + s, [=](benchmark::State& st) { BM_F32Attention(st, p, L, L, hd); });
      }
    }
    for (int kv : {64, 256, 1024}) {
      const std::string s = "/q:1/kv:" + std::to_string(kv) + "/hd:64";
      reg("qs8_attention" + s, [=](benchmark::State& st) { BM_Qs8Attention(st, p, 1, kv, 64); });
      reg("f32_attention" + s, [=](benchmark::State& st) { BM_F32Attention(st, p, 1, kv, 64); });
    }
    // Layers.
    for (int L : {16, 64, 128}) {
      for (int d : {64, 128}) {
        for (int h : {1, 4}) {
          const std::string s = "/L:" + std::to_string(L) + "/d:" + std::to_string(d) + "/heads:" + std::to_string(h);
          reg("mha_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, L, L, d, h, false); });
          reg("mha_f32" + s, [=](benchmark::State& st) { BM_F32Mha(st, p, L, L, d, h, false); });
        }
      }
    }
    for (int kv : {64, 256, 1024}) {
      const std::string s = "/kv:" + std::to_string(kv) + "/d:256/heads:4";
      reg("mha_decoder_qs8" + s, [=](benchmark::State& st) { BM_Qs8Mha(st, p, 1, kv, 256, 4, true); });
      reg("mha_decoder_f32" + s, [=](benchmark::State& st) { BM_F32Mha(st, p, 1, kv, 256, 4, true); });
    }
    for (int kv : {32, 128}) {
      const std::string s = "/q:1/kv:" + std::to_string(kv) + "/d:128";
      reg("additive_qs8" + s, [=](benchmark::State& st) { BM_Qs8Additive(st, p, kv); });
      reg("additive_f32" + s, [=](benchmark::State& st) { BM_F32Additive(st, p, kv); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
