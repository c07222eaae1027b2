// f32_linear, every listed variant this CPU runs (named by its path): rows
// {1,16,64,128} x in = out {64,128,256}.
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_F32Linear(benchmark::State& state, const ek::KernelTable& t, int rows, int in, int out) {
  F32Linear lin(in, out, 1);
  const auto x = RandF32(static_cast<size_t>(rows) * in, 2, 1.0f);
  std::vector<float> y(static_cast<size_t>(rows) * out);
  for (auto _ : state) {
    lin.Run(t, rows, x.data(), in, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
  SetBytes(state, LinearBytes(in, out, 4) + static_cast<int64_t>(rows) * (in + out) * 4);
}

}  // namespace

void RegisterF32LinearBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  for (int rows : {1, 16, 64, 128}) {
    for (int d : {64, 128, 256}) {
      const std::string s = "/rows:" + std::to_string(rows) + "/in:" + std::to_string(d) + "/out:" + std::to_string(d);
      ForEachVariant(l.f32_linear, &ek::KernelTable::f32_linear, [&](const std::string& v, ek::KernelTable t) {
        reg("f32_linear" + s + v, [=](benchmark::State& st) { BM_F32Linear(st, t, rows, d, d); });
      });
    }
  }
}

}  // namespace kbench
