// f32_attention (core SDPA, no projections), every listed variant this CPU
// runs (named by its path), on qs8_attention_bench.cc's grid.
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_F32Attention(benchmark::State& state, const ek::KernelTable& t, int q_len, int kv, int hd) {
  const auto q = RandF32(static_cast<size_t>(q_len) * hd, 1, 1.0f);
  const auto k = RandF32(static_cast<size_t>(kv) * hd, 2, 1.0f);
  const auto v = RandF32(static_cast<size_t>(kv) * hd, 3, 1.0f);
  std::vector<float> out(static_cast<size_t>(q_len) * hd), scratch(kv);
  ek::F32AttentionArgs a = {};
  a.q_len = q_len; a.kv_len = kv; a.head_dim = hd; a.v_dim = hd;
  a.q = q.data(); a.k = k.data(); a.v = v.data(); a.out = out.data();
  a.q_stride = a.k_stride = a.v_stride = a.out_stride = hd;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  a.kv_valid_len = kv;
  a.scratch = scratch.data();
  for (auto _ : state) {
    t.f32_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * q_len * kv * hd);
  SetBytes(state, 2 * (static_cast<int64_t>(q_len) + kv) * hd * 4);
}

}  // namespace

void RegisterF32AttentionBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  auto attention = [&](int q, int kv, int hd) {
    const std::string s = "/q:" + std::to_string(q) + "/kv:" + std::to_string(kv) + "/hd:" + std::to_string(hd);
    ForEachVariant(l.f32_attention, &ek::KernelTable::f32_attention, [&](const std::string& v, ek::KernelTable t) {
      reg("f32_attention" + s + v, [=](benchmark::State& st) { BM_F32Attention(st, t, q, kv, hd); });
    });
  };
  for (int L : {16, 64, 128, 256}) {
    for (int hd : {16, 32, 64, 128}) {
      if (L == 256 && (hd == 16 || hd == 128)) continue;  // L 256: the hd 32/64 SDPA grid only
      attention(L, L, hd);
    }
  }
  for (int kv : {64, 256, 1024}) attention(1, kv, 64);
}

}  // namespace kbench
