// qs8_lut, every listed variant this CPU runs, by function name: 128 rows of
// 512 (the block's activation table at L 128, d 128).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs8Lut(benchmark::State& state, ek::Qs8LutFn fn, int rows, int n) {
  const auto x = RandS8(static_cast<size_t>(rows) * n, 24), table = RandS8(256, 25);
  std::vector<int8_t> y(x.size());
  for (auto _ : state) {
    fn(rows, n, x.data(), n, table.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
}

}  // namespace

void RegisterQs8LutBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  ForEachListed<ek::Qs8LutFn>(l.qs8_lut, [&](const char* name, ek::Qs8LutFn fn) {
    reg(std::string("qs8_lut/rows:128/n:512/") + name, [=](benchmark::State& st) { BM_Qs8Lut(st, fn, 128, 512); });
  });
}

}  // namespace kbench
