// qs8_add16, every listed variant this CPU runs, by function name: 99 rows
// of 64 (a KWT-1 branch-norm block's add on the 16-bit stream; two per block).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs8Add16(benchmark::State& state, ek::Qs8Add16Fn fn, size_t n) {
  const auto x = RandS8(n, 29);
  const auto r = RandS16(n, 30);
  std::vector<int16_t> y(n);
  ek::QS8AddParams p{};
  p.zp_x = -3;
  p.a = 1 << 20;
  p.b = 1 << 13;
  p.shift = 13;
  for (auto _ : state) {
    fn(n, x.data(), r.data(), p, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

}  // namespace

void RegisterQs8Add16Benchmarks() {
  ForEachListed<ek::Qs8Add16Fn>(ek::microkernel_lists().qs8_add16, [&](const char* name, ek::Qs8Add16Fn fn) {
    benchmark::RegisterBenchmark((std::string("qs8_add16/rows:99/d:64/") + name).c_str(),
                                 [=](benchmark::State& st) { BM_Qs8Add16(st, fn, 99 * 64); });
  });
}

}  // namespace kbench
