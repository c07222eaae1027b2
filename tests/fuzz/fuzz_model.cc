// libFuzzer target: model load + verification + one inference of every layer.
//
// The input is a model file, optionally followed by a 16-byte trailer that
// picks the run lengths, the kv_valid_len, whether attention weights are
// requested, NaN/Inf injection, the XNNPACK backend (when built) and the seed
// of the layer inputs (a whole file that loads as is takes these from a hash
// of its bytes). Models that need more than kMaxArena bytes at the capped
// lengths are loaded and verified but not run, so huge declared dimensions
// cannot make the fuzzer itself run out of memory or time.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace {

constexpr size_t kMaxArena = 4u << 20;   // skip models needing more at the capped lengths
constexpr size_t kMaxIo = 4u << 20;      // bytes of inputs + outputs per run
constexpr int kMaxLen = 8;               // run lengths are 1..kMaxLen
constexpr size_t kXnnpackTail = 2u << 20;  // arena after the plan for XNNPACK (when built)

struct AlignedCopy {
  void* p = nullptr;
  AlignedCopy(const uint8_t* data, size_t size) {
    p = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);  // size: a multiple of 64
    std::memcpy(p, data, size);
  }
  ~AlignedCopy() { std::free(p); }
};

[[noreturn]] void Die(const char* what, const char* error) {
  std::fprintf(stderr, "FINDING: %s failed on a verified model: %s\n", what, error);
  std::abort();
}

uint64_t Mix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void Fill(std::vector<uint8_t>& v, size_t bytes, bool s8, uint64_t& seed, uint8_t special) {
  v.assign(bytes, 0);
  if (s8) {
    for (auto& b : v) b = static_cast<uint8_t>(Mix(seed));
    return;
  }
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    float f = static_cast<float>(static_cast<int64_t>(Mix(seed) % 2001) - 1000) / 250.0f;
    // Occasionally extreme values: NaN, Inf, huge, denormal.
    if (special & 1) {
      switch (Mix(seed) % 64) {
        case 0: f = __builtin_nanf(""); break;
        case 1: f = __builtin_inff(); break;
        case 2: f = -__builtin_inff(); break;
        case 3: f = 3.0e38f; break;
        case 4: f = 1.0e-42f; break;
        default: break;
      }
    }
    std::memcpy(&v[i], &f, 4);
  }
}


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Whole input first (the seeds are whole .eatn files); run parameters then
  // come from a hash of the input. Otherwise [model | 16-byte trailer].
  uint8_t trailer[16] = {0};
  edgeattn::Model model;
  AlignedCopy whole(data, size);
  edgeattn::Status s = model.Load(size != 0 ? whole.p : nullptr, size);
  if (s != edgeattn::Status::kOk) {
    if (model.error()[0] == '\0' || model.loaded()) __builtin_trap();  // failures have a message
    if (size <= 16 + 8) return 0;
    std::memcpy(trailer, data + size - 16, 16);
    s = model.Load(whole.p, size - 16);
    if (s != edgeattn::Status::kOk) {
      if (model.error()[0] == '\0' || model.loaded()) __builtin_trap();
      return 0;
    }
  } else {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
    for (int i = 0; i < 16; ++i) trailer[i] = static_cast<uint8_t>(Mix(h));
  }
  const int q_cap = 1 + trailer[0] % kMaxLen;
  const int kv_cap = 1 + trailer[1] % kMaxLen;
  const size_t need = model.ArenaBytesFor(q_cap, kv_cap);
  if (need > kMaxArena) return 0;
  // Trailer bit: int8 projections through the XNNPACK backend (when built),
  // with its operators and packed weights in the arena after the plan.
  static const bool xnnpack = edgeattn::XnnpackBuilt() &&
                              edgeattn::XnnpackInitialize() == edgeattn::Status::kOk;
  const bool use_xnnpack = xnnpack && (trailer[6] & 4) != 0;
  const size_t arena_bytes = need + (use_xnnpack ? kXnnpackTail : 0);
  void* arena = std::aligned_alloc(64, (arena_bytes + 63) / 64 * 64 + 64);
  edgeattn::Interpreter interp;
  s = interp.Init(&model, arena, arena_bytes, q_cap, kv_cap);
  if (s != edgeattn::Status::kOk) Die("Init", interp.error());  // ArenaBytesFor promised enough
  if (use_xnnpack) {
    s = interp.UseXnnpack();  // too small a tail for huge weights is a valid answer
    if (s != edgeattn::Status::kOk && s != edgeattn::Status::kArenaTooSmall) Die("UseXnnpack", interp.error());
  }
  uint64_t seed = 0;
  std::memcpy(&seed, trailer + 8, 8);
  std::vector<uint8_t> q, k, v, out, w;
  for (int i = 0; i < model.num_layers(); ++i) {
    edgeattn::LayerInfo info;
    if (model.GetLayerInfo(i, &info) != edgeattn::Status::kOk) __builtin_trap();
    const bool s8 = info.dtype == EA_S8;
    const size_t es = s8 ? 1 : 4;
    const bool pooling = info.kind == EA_LAYER_POOLING;
    const bool self = info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && !info.cross;
    int q_max = model.CappedQLen(i, q_cap);
    if (self && model.CappedKvLen(i, kv_cap) < q_max) q_max = model.CappedKvLen(i, kv_cap);
    const int q_len = pooling ? 1 : 1 + trailer[2 + (i % 2)] % q_max;
    const int kv_len = self ? q_len : 1 + trailer[4 + (i % 2)] % model.CappedKvLen(i, kv_cap);
    const size_t io = (static_cast<size_t>(q_len) * (info.query_dim + info.output_dim) +
                       static_cast<size_t>(kv_len) * (info.key_dim + info.value_dim)) * es +
                      static_cast<size_t>(info.num_heads) * q_len * kv_len * 4;
    if (io > kMaxIo) continue;
    Fill(q, static_cast<size_t>(q_len) * info.query_dim * es + 1, s8, seed, trailer[6]);
    Fill(k, static_cast<size_t>(kv_len) * info.key_dim * es + 1, s8, seed, trailer[6]);
    Fill(v, static_cast<size_t>(kv_len) * info.value_dim * es + 1, s8, seed, trailer[6]);
    out.assign(static_cast<size_t>(q_len) * info.output_dim * es + 1, 0);
    w.assign(static_cast<size_t>(info.num_heads) * q_len * kv_len * (s8 ? 2 : 4) + 4, 0);
    edgeattn::RunArgs a = {};
    a.query = pooling ? nullptr : q.data();
    a.key = self ? nullptr : k.data();
    a.value = self ? nullptr : v.data();
    a.q_len = q_len;
    a.kv_len = self ? 0 : kv_len;
    a.kv_valid_len = (trailer[7] & 1) ? static_cast<int>(trailer[7] >> 1) % (kv_len + 1) : 0;
    a.output = out.data();
    a.attn_weights = (trailer[6] & 2) ? w.data() : nullptr;
    s = interp.Run(i, a);
    if (s != edgeattn::Status::kOk) Die("Run", interp.error());  // valid arguments, verified model
    const bool cacheable = info.kind == EA_LAYER_ADDITIVE ||
                           (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross);
    if (cacheable) {
      s = interp.CacheKeys(i, k.data(), v.data(), kv_len, a.kv_valid_len);
      if (s != edgeattn::Status::kOk) Die("CacheKeys", interp.error());
      a.use_cached_keys = 1;
      a.key = nullptr;
      if (info.kind != EA_LAYER_ADDITIVE) a.value = nullptr;
      s = interp.Run(i, a);
      if (s != edgeattn::Status::kOk) Die("Run (cached keys)", interp.error());
    }
  }
  std::free(arena);
  return 0;
}
