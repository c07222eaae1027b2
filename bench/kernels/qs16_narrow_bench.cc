// qs16_narrow, every listed variant this CPU runs, by function name: 99 rows
// of 64 (a KWT-1 block's stream, narrowed once per post-norm block, twice per
// branch-norm block on the 16-bit stream).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs16Narrow(benchmark::State& state, ek::Qs16NarrowFn fn, size_t n) {
  const auto x = RandS16(n, 26);
  std::vector<int8_t> y(n);
  for (auto _ : state) {
    fn(n, x.data(), 1518500250, -8, 3, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

}  // namespace

void RegisterQs16NarrowBenchmarks() {
  ForEachListed<ek::Qs16NarrowFn>(ek::microkernel_lists().qs16_narrow, [&](const char* name, ek::Qs16NarrowFn fn) {
    benchmark::RegisterBenchmark((std::string("qs16_narrow/rows:99/d:64/") + name).c_str(),
                                 [=](benchmark::State& st) { BM_Qs16Narrow(st, fn, 99 * 64); });
  });
}

}  // namespace kbench
