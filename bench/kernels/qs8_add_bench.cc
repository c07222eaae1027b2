// qs8_add, every listed variant this CPU runs, by function name: 99 rows of
// 64 (a KWT-1 branch-norm block's add on the int8 stream; two per block).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs8Add(benchmark::State& state, ek::Qs8AddFn fn, size_t n) {
  const auto x = RandS8(n, 27), r = RandS8(n, 28);
  std::vector<int8_t> y(n);
  const ek::QS8AddParams p{-3, 1 << 15, 0, 3 << 14, 16, 1};
  for (auto _ : state) {
    fn(n, x.data(), r.data(), p, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

}  // namespace

void RegisterQs8AddBenchmarks() {
  ForEachListed<ek::Qs8AddFn>(ek::microkernel_lists().qs8_add, [&](const char* name, ek::Qs8AddFn fn) {
    benchmark::RegisterBenchmark((std::string("qs8_add/rows:99/d:64/") + name).c_str(),
                                 [=](benchmark::State& st) { BM_Qs8Add(st, fn, 99 * 64); });
  });
}

}  // namespace kbench
