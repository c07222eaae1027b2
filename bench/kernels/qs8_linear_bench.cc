// qs8_linear, every listed variant this CPU runs (named by its path):
// rows {1,16,64,128} x in = out {64,128,256}, and rows 64 x in 512 x out 128
// (a block's second FFN linear, next to qs8_linear_res).
#include "kernels_bench_util.h"

namespace kbench {

void BM_Qs8Linear(benchmark::State& state, const ek::KernelTable& t, int rows, int in, int out) {
  Qs8Linear lin(in, out, 1);
  const auto x = RandS8(static_cast<size_t>(rows) * in, 2);
  std::vector<int8_t> y(static_cast<size_t>(rows) * out);
  for (auto _ : state) {
    lin.Run(t, rows, x.data(), in, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
  SetBytes(state, LinearBytes(in, out, 1) + static_cast<int64_t>(rows) * (in + out));
}

void RegisterQs8LinearBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  for (int rows : {1, 16, 64, 128}) {
    for (int d : {64, 128, 256}) {
      const std::string s = "/rows:" + std::to_string(rows) + "/in:" + std::to_string(d) + "/out:" + std::to_string(d);
      ForEachVariant(l.qs8_linear, &ek::KernelTable::qs8_linear, [&](const std::string& v, ek::KernelTable t) {
        reg("qs8_linear" + s + v, [=](benchmark::State& st) { BM_Qs8Linear(st, t, rows, d, d); });
      });
    }
  }
  const std::string s = "/rows:64/in:512/out:128";
  ForEachVariant(l.qs8_linear, &ek::KernelTable::qs8_linear, [&](const std::string& v, ek::KernelTable t) {
    reg("qs8_linear" + s + v, [=](benchmark::State& st) { BM_Qs8Linear(st, t, 64, 512, 128); });
  });
}

}  // namespace kbench
