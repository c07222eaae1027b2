// qs8_linear_res (the residual in the epilogue, contract 5b), every listed
// variant this CPU runs (named by its path), at a block's second FFN linear
// (rows 64 x in 512 x out 128; qs8_linear_bench.cc times qs8_linear there).
#include "kernels_bench_util.h"

namespace kbench {
namespace {

// qs8_linear with the residual in its epilogue (contract 5b) as a block's
// second FFN linear uses it: the layer's multiplier times 2^n, n = 12,
// A = 2^n (residual and output at one scale), zero points 5 and -3.
void BM_Qs8LinearRes(benchmark::State& state, const ek::KernelTable& t, int rows, int in, int out) {
  Qs8Linear lin(in, out, 1);
  const auto x = RandS8(static_cast<size_t>(rows) * in, 2);
  const auto res = RandS8(static_cast<size_t>(rows) * out, 3);
  std::vector<int8_t> y(static_cast<size_t>(rows) * out);
  constexpr int32_t kShift = 12, kAZp = 5, kYZp = -3;
  int32_t mult = 0, shift = 0;
  Mult(std::ldexp(1.0 / (8.0 * std::sqrt(static_cast<double>(in)) * 64.0), kShift), &mult, &shift);
  const ek::QS8Residual r = {res.data(), out, {1 << kShift, kShift, kAZp, kYZp}};
  for (auto _ : state) {
    t.qs8_linear_res(rows, out, in, x.data(), in, lin.w_packed.data(), lin.bias.data(), &mult, &shift, 0, r,
                     y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
  SetBytes(state, LinearBytes(in, out, 1) + static_cast<int64_t>(rows) * (in + 2 * out));
}

}  // namespace

void RegisterQs8LinearResBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  const std::string s = "/rows:64/in:512/out:128";
  ForEachVariant(l.qs8_linear_res, &ek::KernelTable::qs8_linear_res, [&](const std::string& v, ek::KernelTable t) {
    reg("qs8_linear_res" + s + v, [=](benchmark::State& st) { BM_Qs8LinearRes(st, t, 64, 512, 128); });
  });
}

}  // namespace kbench
