// qs8_layernorm, every listed variant this CPU runs, by function name: 128
// rows of d 128 (as the block at L 128, d 128 runs it).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs8LayerNorm(benchmark::State& state, ek::Qs8LayerNormFn fn, int rows, int d) {
  Qs8Norm n(d);
  const auto x = RandS8(static_cast<size_t>(rows) * d, 21);
  std::vector<int8_t> y(x.size());
  n.args.rows = rows;
  n.args.x = x.data(); n.args.x_stride = d;
  n.args.y = y.data(); n.args.y_stride = d;
  for (auto _ : state) {
    fn(n.args);
    benchmark::DoNotOptimize(y.data());
  }
}

}  // namespace

void RegisterQs8LayerNormBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  ForEachListed<ek::Qs8LayerNormFn>(l.qs8_layernorm, [&](const char* name, ek::Qs8LayerNormFn fn) {
    reg(std::string("qs8_layernorm/rows:128/d:128/") + name, [=](benchmark::State& st) { BM_Qs8LayerNorm(st, fn, 128, 128); });
  });
}

}  // namespace kbench
