// qs8_linear_res16 (an int16 residual and output in the epilogue, contract
// 5c), every listed variant this CPU runs (named by its path), at a block's
// second FFN linear (rows 64 x in 512 x out 128), beside
// qs8_linear_res_bench.cc's int8-stream qs8_linear_res on the same shape.
#include "kernels_bench_util.h"

namespace kbench {
namespace {

// The converter's usual choice when the residual and the output share one
// scale: n = 13, A = 2^13; the projection's multiplier times 2^n.
void BM_Qs8LinearRes16(benchmark::State& state, const ek::KernelTable& t, int rows, int in, int out) {
  Qs8Linear lin(in, out, 1);
  const auto x = RandS8(static_cast<size_t>(rows) * in, 2);
  std::vector<int16_t> res(static_cast<size_t>(rows) * out);
  std::mt19937_64 rng(3);
  for (auto& v : res) v = static_cast<int16_t>(rng());
  std::vector<int16_t> y(static_cast<size_t>(rows) * out);
  constexpr int32_t kShift = 13;
  int32_t mult = 0, shift = 0;
  Mult(std::ldexp(256.0 / (8.0 * std::sqrt(static_cast<double>(in)) * 64.0), kShift), &mult, &shift);
  const ek::QS16Residual r = {res.data(), out, {1 << kShift, kShift}};
  for (auto _ : state) {
    t.qs8_linear_res16(rows, out, in, x.data(), in, lin.w_packed.data(), lin.bias.data(), &mult, &shift, 0, r,
                       y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * rows * in * out);
  SetBytes(state, LinearBytes(in, out, 1) + static_cast<int64_t>(rows) * (in + 4 * out));
}

}  // namespace

void RegisterQs8LinearRes16Benchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  const std::string s = "/rows:64/in:512/out:128";
  ForEachVariant(l.qs8_linear_res16, &ek::KernelTable::qs8_linear_res16, [&](const std::string& v, ek::KernelTable t) {
    reg("qs8_linear_res16" + s + v, [=](benchmark::State& st) { BM_Qs8LinearRes16(st, t, 64, 512, 128); });
  });
}

}  // namespace kbench
