// qs8_attention (core SDPA, no projections), every listed variant this CPU
// runs (named by its path): q = kv = L {16,64,128} x hd {16,32,64,128}, plus
// L 256 x hd {32,64}; q 1 x kv {64,256,1024} x hd 64.
#include "kernels_bench_util.h"

namespace kbench {
namespace {

void BM_Qs8Attention(benchmark::State& state, const ek::KernelTable& t, int q_len, int kv, int hd) {
  const auto q = RandS8(static_cast<size_t>(q_len) * hd, 1);
  const auto k = RandS8(static_cast<size_t>(kv) * hd, 2);
  const auto v = RandS8(static_cast<size_t>(kv) * hd, 3);
  std::vector<int8_t> out(static_cast<size_t>(q_len) * hd);
  std::vector<int32_t> scratch(kv);
  std::vector<uint16_t> probs(kv);
  std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(kv, hd, hd));
  ek::QS8AttentionArgs a = Qs8Head(q_len, kv, hd, hd);
  a.q = q.data(); a.k = k.data(); a.v = v.data(); a.out = out.data();
  a.scratch = scratch.data(); a.prob_scratch = probs.data();
  a.tile_scratch = tile.data();  // as the runtime plans it (used when q_len >= 4)
  for (auto _ : state) {
    t.qs8_attention(a);
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, 4.0 * q_len * kv * hd);
  SetBytes(state, 2 * (static_cast<int64_t>(q_len) + kv) * hd);
}

}  // namespace

void RegisterQs8AttentionBenchmarks() {
  const ek::MicrokernelLists& l = ek::microkernel_lists();
  auto reg = [](const std::string& name, auto fn) { benchmark::RegisterBenchmark(name.c_str(), fn); };
  auto attention = [&](int q, int kv, int hd) {
    const std::string s = "/q:" + std::to_string(q) + "/kv:" + std::to_string(kv) + "/hd:" + std::to_string(hd);
    ForEachVariant(l.qs8_attention, &ek::KernelTable::qs8_attention, [&](const std::string& v, ek::KernelTable t) {
      reg("qs8_attention" + s + v, [=](benchmark::State& st) { BM_Qs8Attention(st, t, q, kv, hd); });
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
