// Shared by the model fuzz targets (fuzz_model, fuzz_paths): the input format
// and the layer inputs derived from it.
//
// An input is a model file, optionally followed by a 16-byte trailer:
//   [0] q cap, [1] kv cap        run lengths are capped at 1 + byte % max_len
//   [2], [3] q_len               of even / odd layers: 1 + byte % (capped max)
//   [4], [5] kv_len              same, cross layers (self-attention: kv = q)
//   [6] bits: 1 NaN/Inf/huge/denormal float inputs, 2 attention weights out,
//       4 XNNPACK backend (fuzz_model only), 8 re-seal: the harness rewrites
//       the model's file checksum (its last 4 bytes, format 3) before
//       loading, so that mutated bytes reach the FlatBuffers verifier, the
//       semantic checks and the kernels instead of failing the checksum;
//       without it the checksum check itself is exercised
//   [7] bit 0: kv_valid_len = (byte >> 1) % (kv_len + 1); else 0 (all valid)
//   [8..15] seed of the layer inputs
// An input whose last 16 bytes are not a trailer (the model file alone) takes
// the trailer from a hash of its bytes, and is always re-sealed.
#ifndef EDGEATTN_TESTS_FUZZ_MODEL_INPUT_H_
#define EDGEATTN_TESTS_FUZZ_MODEL_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "runtime/src/crc32.h"

namespace eafuzz {

constexpr size_t kTrailerBytes = 16;

// 64-byte aligned storage (Model::Load needs EA_ALIGNMENT; arenas and SIMD
// loads like more). aligned_alloc wants a size that is a multiple of 64.
struct AlignedBuffer {
  void* p = nullptr;
  explicit AlignedBuffer(size_t size) { p = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64); }
  AlignedBuffer(const uint8_t* data, size_t size) : AlignedBuffer(size) {
    if (size != 0) std::memcpy(p, data, size);
  }
  ~AlignedBuffer() { std::free(p); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
};

[[noreturn]] inline void Die(const char* what, const char* error) {
  std::fprintf(stderr, "FINDING: %s failed on a verified model: %s\n", what, error);
  std::abort();
}

inline uint64_t Mix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// `bytes` of random int8, or floats in [-4, 4] (with special & 1, now and
// then NaN, +-Inf, 3e38 or a denormal).
// Bytes per element of `t` (S8 1, S16 2, F32 and S32 4).
inline size_t ElemBytes(ea_dtype t) { return t == EA_S8 ? 1 : t == EA_S16 ? 2 : 4; }

inline void Fill(std::vector<uint8_t>& v, size_t bytes, bool s8, uint64_t& seed, uint8_t special) {
  v.assign(bytes, 0);
  if (s8) {
    for (auto& b : v) b = static_cast<uint8_t>(Mix(seed));
    return;
  }
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    float f = static_cast<float>(static_cast<int64_t>(Mix(seed) % 2001) - 1000) / 250.0f;
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

// Re-seal: sets a model file's last 4 bytes to the CRC-32 of the bytes before
// them (little-endian), the format-3 file checksum Model::Load checks first.
inline void Reseal(void* bytes, size_t size) {
  if (size < 4) return;
  auto* p = static_cast<uint8_t*>(bytes);
  const uint32_t crc = edgeattn::crc32(p, size - 4);
  for (int i = 0; i < 4; ++i) p[size - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

// Loads `copy` (the input's bytes, aligned) as [model | trailer], else as a
// whole model. False when neither verifies. Every failure must carry a
// message (trap otherwise). On success `copy` holds the bytes that loaded
// (re-sealed or not). The trailer is tried first (the order from before
// format 3, when Model::Load accepted bytes after a valid FlatBuffer).
inline bool LoadModelInput(const uint8_t* data, size_t size, const AlignedBuffer& copy,
                           edgeattn::Model* model, uint8_t trailer[kTrailerBytes]) {
  if (size > kTrailerBytes + 12) {
    const size_t n = size - kTrailerBytes;
    if (data[n + 6] & 8) Reseal(copy.p, n);
    if (model->Load(copy.p, n) == edgeattn::Status::kOk) {
      std::memcpy(trailer, data + n, kTrailerBytes);
      return true;
    }
    if (model->error()[0] == '\0' || model->loaded()) __builtin_trap();
    std::memcpy(static_cast<uint8_t*>(copy.p) + n - 4, data + n - 4, 4);  // undo the re-seal
  }
  Reseal(copy.p, size);
  if (model->Load(size != 0 ? copy.p : nullptr, size) != edgeattn::Status::kOk) {
    if (model->error()[0] == '\0' || model->loaded()) __builtin_trap();
    return false;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  for (size_t i = 0; i < kTrailerBytes; ++i) trailer[i] = static_cast<uint8_t>(Mix(h));
  return true;
}

// A loaded input: the model, its trailer, the length caps
// (1 + trailer byte % max_len), the arena bytes at those caps and the seed of
// the layer inputs.
struct Input {
  edgeattn::Model model;
  uint8_t trailer[kTrailerBytes] = {};
  int q_cap = 0, kv_cap = 0;
  size_t arena_bytes = 0;
  uint64_t seed = 0;
};

// False when the input does not load or its model needs more than max_arena
// bytes at the caps. `copy` must outlive `in` (the model points into it).
inline bool OpenInput(const uint8_t* data, size_t size, const AlignedBuffer& copy, int max_len,
                      size_t max_arena, Input* in) {
  if (!LoadModelInput(data, size, copy, &in->model, in->trailer)) return false;
  in->q_cap = 1 + in->trailer[0] % max_len;
  in->kv_cap = 1 + in->trailer[1] % max_len;
  in->arena_bytes = in->model.ArenaBytesFor(in->q_cap, in->kv_cap);
  std::memcpy(&in->seed, in->trailer + 8, 8);
  return in->arena_bytes <= max_arena;
}

// One layer's run: lengths from the trailer, random inputs, the RunArgs
// (output / attn_weights left null for the caller).
struct LayerInput {
  edgeattn::LayerInfo info = {};
  bool s8 = false, pooling = false, self = false, cacheable = false;
  int q_len = 0, kv_len = 0;
  size_t out_bytes = 0, weight_bytes = 0;  // what Run writes (weights: when requested)
  bool want_weights = false;
  std::vector<uint8_t> q, k, v;
  edgeattn::RunArgs args = {};
};

// False (nothing to run) when inputs + outputs + scores would exceed max_io bytes.
inline bool PrepareLayer(const edgeattn::Model& model, int i, const uint8_t trailer[kTrailerBytes],
                         int q_cap, int kv_cap, size_t max_io, uint64_t& seed, LayerInput* in) {
  edgeattn::LayerInfo& info = in->info;
  if (model.GetLayerInfo(i, &info) != edgeattn::Status::kOk) __builtin_trap();
  in->s8 = info.dtype == EA_S8;
  const size_t es = in->s8 ? 1 : 4;
  in->pooling = info.kind == EA_LAYER_POOLING;
  in->self = !info.cross;
  in->cacheable = info.kind == EA_LAYER_ADDITIVE || (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) ||
                  info.kind == EA_LAYER_DECODER_BLOCK;
  int q_max = model.CappedQLen(i, q_cap);
  if (in->self && model.CappedKvLen(i, kv_cap) < q_max) q_max = model.CappedKvLen(i, kv_cap);
  const int q_len = in->pooling ? 1 : 1 + trailer[2 + (i % 2)] % q_max;
  const int kv_len = in->self ? q_len : 1 + trailer[4 + (i % 2)] % model.CappedKvLen(i, kv_cap);
  in->q_len = q_len;
  in->kv_len = kv_len;
  // A model's ends and the int16 stream have their own element types: token
  // ids (S32) and float rows into an int8 layer (quantize) in, int16 rows in
  // and out of a block, class indices (S32) and float rows (dequantize) out;
  // a positions layer writes its class rows too.
  const size_t in_es = ElemBytes(info.input_dtype), out_es = ElemBytes(info.output_dtype);
  // A pooling kind's rows are its keys, in its input's element type (a row_pool on the int16 stream).
  const size_t k_es = info.kind == EA_LAYER_ROW_POOL ? in_es : es;
  const size_t out_rows = static_cast<size_t>(q_len) + static_cast<size_t>(info.added_rows > 0 ? info.added_rows : 0);
  const size_t io = static_cast<size_t>(q_len) * info.query_dim * in_es + out_rows * info.output_dim * out_es +
                    static_cast<size_t>(kv_len) * (info.key_dim * k_es + info.value_dim * es) +
                    static_cast<size_t>(info.num_heads) * q_len * kv_len * 4;
  if (io > max_io) return false;
  const size_t q_bytes = static_cast<size_t>(q_len) * info.query_dim * in_es + 1;
  if (info.input_dtype == EA_S32) {  // ids inside the table: others are refused before any run
    in->q.assign(q_bytes, 0);
    for (size_t j = 0; j + 4 <= q_bytes; j += 4) {
      const int32_t id = info.input_range > 0 ? static_cast<int32_t>(Mix(seed) % static_cast<uint64_t>(info.input_range)) : 0;
      std::memcpy(&in->q[j], &id, 4);
    }
  } else if (info.input_dtype == EA_F32 && in->s8) {  // finite floats: a NaN is refused (quantize_test)
    Fill(in->q, q_bytes, false, seed, 0);
  } else if (info.input_dtype == EA_S16) {
    Fill(in->q, q_bytes, true, seed, trailer[6]);
  } else {
    Fill(in->q, q_bytes, in->s8, seed, trailer[6]);
  }
  Fill(in->k, static_cast<size_t>(kv_len) * info.key_dim * k_es + 1, in->s8, seed, trailer[6]);
  Fill(in->v, static_cast<size_t>(kv_len) * info.value_dim * es + 1, in->s8, seed, trailer[6]);
  in->out_bytes = out_rows * info.output_dim * out_es;
  in->weight_bytes = static_cast<size_t>(info.num_heads) * q_len * kv_len * (in->s8 ? 2 : 4);
  in->want_weights = (trailer[6] & 2) != 0 && info.num_heads > 0;  // layernorm, ffn: none
  edgeattn::RunArgs& a = in->args;
  a = {};
  a.query = in->pooling ? nullptr : in->q.data();
  a.key = in->self ? nullptr : in->k.data();
  a.value = in->self ? nullptr : in->v.data();
  a.q_len = q_len;
  a.kv_len = in->self ? 0 : kv_len;
  a.kv_valid_len = (trailer[7] & 1) ? static_cast<int>(trailer[7] >> 1) % (kv_len + 1) : 0;
  return true;
}

// After Run: CacheKeys with the same keys/values, then turns `args` into the
// cached-keys run (MHA: no key/value; additive: value still given).
inline void UseCachedKeys(edgeattn::Interpreter& interp, int i, LayerInput* in) {
  edgeattn::RunArgs& a = in->args;
  const edgeattn::Status s = interp.CacheKeys(i, in->k.data(), in->v.data(), in->kv_len, a.kv_valid_len);
  if (s != edgeattn::Status::kOk) Die("CacheKeys", interp.error());
  a.use_cached_keys = 1;
  a.key = nullptr;
  if (in->info.kind != EA_LAYER_ADDITIVE) a.value = nullptr;
}

}  // namespace eafuzz

#endif  // EDGEATTN_TESTS_FUZZ_MODEL_INPUT_H_
