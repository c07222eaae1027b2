// Helpers shared by the runtime and e2e tests: aligned model buffers, the
// list of converted test models, random layer inputs.
#ifndef EDGEATTN_TESTS_RUNTIME_TEST_MODELS_H_
#define EDGEATTN_TESTS_RUNTIME_TEST_MODELS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace eatest {

// A heap buffer with a chosen alignment and an optional misalignment offset
// (the data starts `offset` bytes after a 64-byte boundary).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(size_t size, size_t offset = 0) { Reset(size, offset); }
  AlignedBuffer(const AlignedBuffer& o) { *this = o; }
  AlignedBuffer& operator=(const AlignedBuffer& o) {
    if (this != &o) {
      Reset(o.size_, o.offset_);
      if (o.size_ != 0) std::memcpy(data(), o.data(), o.size_);
    }
    return *this;
  }
  ~AlignedBuffer() { std::free(raw_); }
  void Reset(size_t size, size_t offset = 0) {
    std::free(raw_);
    size_ = size;
    offset_ = offset;
    raw_ = static_cast<uint8_t*>(std::aligned_alloc(64, (size + offset + 64) / 64 * 64 + 64));
    std::memset(raw_, 0, (size + offset + 64) / 64 * 64 + 64);
  }
  uint8_t* data() { return raw_ + offset_; }
  const uint8_t* data() const { return raw_ + offset_; }
  size_t size() const { return size_; }

 private:
  uint8_t* raw_ = nullptr;
  size_t size_ = 0;
  size_t offset_ = 0;
};

inline bool ReadFile(const std::string& path, AlignedBuffer* out, size_t offset = 0) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fseek(f, 0, SEEK_END);
  const long n = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  out->Reset(static_cast<size_t>(n), offset);
  const size_t got = std::fread(out->data(), 1, static_cast<size_t>(n), f);
  std::fclose(f);
  return got == static_cast<size_t>(n);
}

// CRC-32 (IEEE, reflected, as zlib): independent of the runtime's
// implementation, for tests that build or patch model files. A byte table
// built from the bitwise definition (the mutation tests re-seal every
// mutated file, so bit by bit would dominate their time).
inline uint32_t Crc32(const uint8_t* p, size_t n) {
  struct Table {
    uint32_t t[256];
    Table() {
      for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        t[i] = c;
      }
    }
  };
  static const Table table;
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) crc = (crc >> 8) ^ table.t[(crc ^ p[i]) & 255u];
  return ~crc;
}

// Format 3: rewrites a model file's last 4 bytes with the CRC-32 of the bytes
// before them, so that a patched file reaches the checks behind the checksum.
inline void SealModel(uint8_t* file, size_t size) {
  if (size < 4) return;
  const uint32_t crc = Crc32(file, size - 4);
  for (int i = 0; i < 4; ++i) file[size - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
}
inline void SealModel(AlignedBuffer* file) { SealModel(file->data(), file->size()); }

inline std::string ModelPath(const std::string& name) {
  return std::string(EA_TEST_MODEL_DIR) + "/" + name + ".eatn";
}

// Every converted model (fixture_int8, fixture_f32, <bundled>_int8, ...).
// "a,b,,c" -> {a, b, c} (the CMake lists passed as compile definitions).
inline std::vector<std::string> SplitCommaList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

inline std::vector<std::string> AllModels() { return SplitCommaList(EA_TEST_MODELS); }

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int uniform_int(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  double normal() {
    const double u1 = std::max(1e-300, static_cast<double>(next() >> 11) / 9007199254740992.0);
    const double u2 = static_cast<double>(next() >> 11) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

inline size_t ElemSize(const edgeattn::LayerInfo& info) { return info.dtype == EA_S8 ? 1 : 4; }
inline size_t ElemBytes(ea_dtype t) { return t == EA_S8 ? 1 : t == EA_S16 ? 2 : 4; }

// n random elements of type t: int8 and int16 uniform (the int16 residual
// stream's ends included), float N(0, 1), S32 token ids in 0..range-1.
inline void FillElements(std::vector<uint8_t>& v, size_t n, ea_dtype t, int32_t range, Rng& rng) {
  v.assign(n * ElemBytes(t), 0);
  for (size_t i = 0; i < n; ++i) {
    if (t == EA_S16) {
      const int16_t x = static_cast<int16_t>(rng.next());
      std::memcpy(&v[i * 2], &x, 2);
    } else if (t == EA_S32) {
      const int32_t id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(range));
      std::memcpy(&v[i * 4], &id, 4);
    } else if (t == EA_S8) {
      v[i] = static_cast<uint8_t>(rng.next());
    } else {
      const float f = static_cast<float>(rng.normal());
      std::memcpy(&v[i * 4], &f, 4);
    }
  }
}

// Inputs and outputs of one Run, sized from the layer info.
struct LayerIo {
  std::vector<uint8_t> query, key, value, output, weights;
  int q_len = 0, kv_len = 0;
  bool self_attention = false, pooling = false;

  // Random inputs: int8 uniform, float N(0, 1).
  void Make(const edgeattn::LayerInfo& info, int ql, int kvl, Rng& rng) {
    pooling = info.query_dim == 0;  // one output row from the rows it takes as keys (pooling, row_pool)
    // Keys and values (if any) are the query rows: self-attention, encoder
    // blocks, and the per-row kinds (layernorm, ffn).
    self_attention = !info.cross;
    q_len = pooling ? 1 : ql;
    kv_len = self_attention ? ql : kvl;
    const size_t es = ElemSize(info);
    auto fill = [&](std::vector<uint8_t>& v, size_t n, ea_dtype t) { FillElements(v, n, t, info.input_range, rng); };
    if (!pooling) fill(query, static_cast<size_t>(q_len) * info.query_dim, info.input_dtype);
    // A pooling kind's keys are its input rows (input_dtype: int16 where it
    // reads the 16-bit residual stream).
    if (!self_attention) fill(key, static_cast<size_t>(kv_len) * info.key_dim, pooling ? info.input_dtype : info.dtype);
    if (!self_attention && !pooling) fill(value, static_cast<size_t>(kv_len) * info.value_dim, info.dtype);
    output.assign(static_cast<size_t>(q_len + info.added_rows) * info.output_dim * ElemBytes(info.output_dtype),
                  0xCD);
    weights.assign(static_cast<size_t>(info.num_heads) * q_len * kv_len * (es == 1 ? 2 : 4), 0xCD);
  }

  edgeattn::RunArgs Args(int kv_valid_len, bool with_weights = true) {
    edgeattn::RunArgs a = {};
    a.query = query.empty() ? nullptr : query.data();
    a.key = key.empty() ? nullptr : key.data();
    a.value = value.empty() ? nullptr : value.data();
    a.q_len = q_len;
    a.kv_len = self_attention ? 0 : kv_len;
    a.kv_valid_len = kv_valid_len;
    a.output = output.data();
    a.attn_weights = with_weights && !weights.empty() ? weights.data() : nullptr;  // none: layernorm, ffn
    return a;
  }
};

// Inputs and output of a whole-model run (Interpreter::Invoke) at the
// graph's maximum rows, the last quarter of the input rows padding; for a
// generating graph (decoder_start > 0) Interpreter::Generate of every token
// the plan holds (BOS 0, no EOS) into `tokens`.
struct GraphIo {
  std::vector<uint8_t> input, memory, output;
  std::vector<int32_t> tokens;
  edgeattn::ModelInputs in = {};
  edgeattn::ModelOutputs out = {};
  edgeattn::GenerateOptions options = {};
  int num_tokens = 0;

  bool generates() const { return options.max_tokens > 0; }
  edgeattn::Status Run(edgeattn::Interpreter& interp) {
    if (!generates()) return interp.Invoke(in, &out);
    return interp.Generate(in, options, tokens.data(), static_cast<int>(tokens.size()), &num_tokens);
  }
  // What the run wrote: the output rows, or the tokens' bytes.
  std::vector<uint8_t> Result() const {
    if (!generates()) return output;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(tokens.data());
    return std::vector<uint8_t>(p, p + static_cast<size_t>(num_tokens) * sizeof(int32_t));
  }

  void Make(const edgeattn::GraphInfo& g, Rng& rng) {
    auto fill = [&](std::vector<uint8_t>& v, size_t n, ea_dtype t) { FillElements(v, n, t, g.input_range, rng); };
    fill(input, static_cast<size_t>(g.max_input_rows) * g.input_dim, g.input_dtype);
    fill(memory, static_cast<size_t>(g.max_memory_rows) * g.memory_dim, g.dtype);
    output.assign(static_cast<size_t>(g.max_output_rows) * g.output_dim * ElemBytes(g.output_dtype), 0xCD);
    in.rows = input.data();
    in.num_rows = g.max_input_rows;
    in.valid_rows = g.max_input_rows - g.max_input_rows / 4;
    in.memory = g.memory_dim > 0 ? memory.data() : nullptr;
    in.memory_rows = g.max_memory_rows;
    in.memory_valid_rows = g.max_memory_rows - g.max_memory_rows / 4;
    out.rows = output.data();
    if (g.decoder_start > 0) {  // no memory; the tokens instead of output rows
      in.memory = nullptr;
      in.memory_rows = 0;
      in.memory_valid_rows = 0;
      tokens.assign(static_cast<size_t>(g.max_tokens), -1);
      options = {0, -1, g.max_tokens};
    }
  }
};

}  // namespace eatest

#endif  // EDGEATTN_TESTS_RUNTIME_TEST_MODELS_H_
