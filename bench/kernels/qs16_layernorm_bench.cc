// qs16_layernorm (contract 4b), every listed variant this CPU runs, by
// function name: 128 rows of d 128 (as qs8_layernorm_bench.cc), writing the
// int8 output (pre-norm: the GEMM's input), the int16 output and both
// (post-norm: the stream and the GEMM's input); and the int8 output at the
// peers' whole-model shapes.
#include "kernels_bench_util.h"

namespace kbench {
namespace {

enum Outputs { kOut8 = 1, kOut16 = 2 };

void BM_Qs16LayerNorm(benchmark::State& state, ek::Qs16LayerNormFn fn, int rows, int d, int outputs) {
  std::mt19937_64 rng(d);
  std::vector<int16_t> x(static_cast<size_t>(rows) * d), gain(d), y16(x.size());
  std::vector<int32_t> bias(d);
  std::vector<int8_t> y8(x.size());
  for (auto& v : x) v = static_cast<int16_t>(static_cast<int32_t>(rng() % 20001) - 10000);
  for (auto& g : gain) g = static_cast<int16_t>(16000 + rng() % 16767);
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 4001) - 2000;
  ek::QS16LayerNormArgs a = {};
  a.rows = rows;
  a.dim = d;
  a.x = x.data();
  a.x_stride = d;
  a.eps_term = int64_t{1} << 28;
  a.gain = gain.data();
  a.bias = bias.data();
  const double out_unit = std::ldexp(1.0, -ek::layernorm_frac_bits(d)) / 32767.0;
  Mult(out_unit / (4.0 / 127.0), &a.mult, &a.shift);
  Mult(out_unit / (8.0 / 32767.0), &a.mult16, &a.shift16);
  a.y8 = (outputs & kOut8) ? y8.data() : nullptr;
  a.y8_stride = d;
  a.y16 = (outputs & kOut16) ? y16.data() : nullptr;
  a.y16_stride = d;
  for (auto _ : state) {
    fn(a);
    benchmark::DoNotOptimize(y8.data());
    benchmark::DoNotOptimize(y16.data());
  }
}

}  // namespace

void RegisterQs16LayerNormBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  ForEachListed<ek::Qs16LayerNormFn>(l.qs16_layernorm, [&](const char* name, ek::Qs16LayerNormFn fn) {
    for (int o : {int{kOut8}, int{kOut16}, kOut8 | kOut16}) {
      const std::string out = o == kOut8 ? "s8" : (o == kOut16 ? "s16" : "s8+s16");
      reg(std::string("qs16_layernorm/rows:128/d:128/out:") + out + "/" + name,
          [=](benchmark::State& st) { BM_Qs16LayerNorm(st, fn, 128, 128, o); });
    }
    // The pre-norm LayerNorms of the peers' whole models (docs/performance.md):
    // KWT-1 (99 rows of 64) and DeiT-tiny (197 rows of 192).
    for (const auto& [rows, d] : {std::pair<int, int>{99, 64}, std::pair<int, int>{197, 192}}) {
      reg("qs16_layernorm/rows:" + std::to_string(rows) + "/d:" + std::to_string(d) + "/out:s8/" + name,
          [=, r = rows, dim = d](benchmark::State& st) { BM_Qs16LayerNorm(st, fn, r, dim, kOut8); });
    }
  });
}

}  // namespace kbench
