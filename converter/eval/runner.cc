#include "converter/eval/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "converter/base/error.h"
#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) {
    const size_t n = std::max<size_t>((bytes + 63) / 64 * 64, 64);
    p = static_cast<uint8_t*>(std::aligned_alloc(64, n));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, n);
  }
  ~AlignedBuffer() { std::free(p); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  uint8_t* p;
};

int8_t quantize(double x, const ea_quant& q) {
  const double v = std::round(x / q.scale) + q.zero_point;
  return static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
}

// One input tensor of all samples in the layer's dtype.
std::vector<uint8_t> encode(const std::vector<double>& x, ea_dtype dtype, const ea_quant& q) {
  std::vector<uint8_t> out;
  if (dtype == EA_S32) {  // token ids (checked integers in range when read)
    resize_large(&out, x.size() * sizeof(int32_t));
    for (size_t i = 0; i < x.size(); ++i) {
      const int32_t id = static_cast<int32_t>(x[i]);
      std::memcpy(out.data() + i * sizeof(int32_t), &id, sizeof id);
    }
  } else if (dtype == EA_S8) {
    resize_large(&out, x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<uint8_t>(quantize(x[i], q));
  } else if (dtype == EA_S16) {  // the 16-bit residual stream: symmetric, zero point 0
    resize_large(&out, x.size() * sizeof(int16_t));
    for (size_t i = 0; i < x.size(); ++i) {
      const int16_t v = static_cast<int16_t>(std::clamp(std::round(x[i] / q.scale), -32768.0, 32767.0));
      std::memcpy(out.data() + i * sizeof(int16_t), &v, sizeof v);
    }
  } else {
    resize_large(&out, x.size() * sizeof(float));
    for (size_t i = 0; i < x.size(); ++i) {
      const float f = static_cast<float>(x[i]);
      std::memcpy(out.data() + i * sizeof(float), &f, sizeof f);
    }
  }
  return out;
}

// Output elements of `dtype` back to values: class indices as they are, int8
// dequantized, f32 widened; `values` has the size of the element count.
void decode_into(const std::vector<uint8_t>& bytes, ea_dtype dtype, const ea_quant& q, std::vector<double>* values) {
  for (size_t i = 0; i < values->size(); ++i) {
    if (dtype == EA_S32) {
      int32_t index;
      std::memcpy(&index, bytes.data() + i * 4, 4);
      (*values)[i] = index;
    } else if (dtype == EA_S8) {
      (*values)[i] = q.scale * (static_cast<int8_t>(bytes[i]) - q.zero_point);
    } else if (dtype == EA_S16) {  // the 16-bit residual stream: symmetric
      int16_t v;
      std::memcpy(&v, bytes.data() + i * 2, 2);
      (*values)[i] = q.scale * v;
    } else {
      float f;
      std::memcpy(&f, bytes.data() + i * 4, 4);
      (*values)[i] = f;
    }
  }
}

size_t element_bytes(ea_dtype dtype) { return dtype == EA_S8 ? 1 : dtype == EA_S16 ? 2 : 4; }

}  // namespace

void LoadedModel::Free::operator()(uint8_t* p) const { std::free(p); }

LoadedModel::LoadedModel(const std::vector<uint8_t>& bytes, const std::string& what) {
  const size_t n = std::max<size_t>((bytes.size() + 63) / 64 * 64, 64);
  storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, n)));
  if (!storage_) throw std::bad_alloc();
  std::memset(storage_.get(), 0, n);
  if (!bytes.empty()) std::memcpy(storage_.get(), bytes.data(), bytes.size());
  size_ = bytes.size();
  status_ = model_.Load(storage_.get(), size_);
  if (status_ != Status::kOk) {
    fail(what, ": the runtime rejects the model (", status_string(status_), "): ", model_.error());
  }
}

FloatLayer layer_shell(const Model& model, int layer) {
  LayerInfo info;
  if (model.GetLayerInfo(layer, &info) != Status::kOk) fail("layer index ", layer, " is out of range");
  FloatLayer L;
  L.name = info.name;
  L.kind = find_kind(info.kind);
  if (L.kind == nullptr) fail("layer '", L.name, "': kind ", static_cast<int>(info.kind), " is unknown to the converter");
  L.mask = info.causal ? MaskKind::kCausal : MaskKind::kKeyPadding;
  L.query_dim = info.query_dim;
  L.key_dim = info.key_dim;
  L.value_dim = info.value_dim;
  L.output_dim = info.output_dim;
  L.max_q_len = info.max_q_len;
  L.max_kv_len = info.max_kv_len;
  L.added_rows = info.added_rows;
  L.kind->shell(info, &L);
  return L;
}

ea_range_policy parse_range_mode(const std::string& name) {
  if (name == "static") return EA_RANGE_STATIC;
  if (name == "dynamic") return EA_RANGE_DYNAMIC;
  if (name == "dynamic-pow2") return EA_RANGE_DYNAMIC_POW2;
  fail("--range-mode must be static, dynamic or dynamic-pow2, got '", name, "'");
}

const char* range_mode_name(ea_range_policy policy) {
  switch (policy) {
    case EA_RANGE_STATIC: return "static";
    case EA_RANGE_DYNAMIC: return "dynamic";
    case EA_RANGE_DYNAMIC_POW2: return "dynamic-pow2";
  }
  return "?";
}

namespace {

// Range mode: float inputs through Interpreter::RunFloat.
RunResult run_layer_float(const LoadedModel& lm, int layer, const LayerData& d, int repeat,
                          ea_range_policy policy) {
  const Model& model = lm.model();
  LayerInfo info;
  model.GetLayerInfo(layer, &info);
  const FloatLayer shell = layer_shell(model, layer);
  const bool self = !shell.io().keys;
  auto to_float = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
  const std::vector<float> q = to_float(d.query), k = to_float(d.key), v = to_float(d.value);
  const int lq = shell.learned_query() ? 1 : d.lq;
  const int lk = d.lk;
  const size_t out_per = static_cast<size_t>(shell.output_rows(d.lq)) * info.output_dim;
  const size_t w_per = static_cast<size_t>(shell.heads()) * lq * lk;  // 0: a kind without attention weights
  std::vector<float> out(static_cast<size_t>(d.n) * out_per);
  std::vector<uint16_t> wts(static_cast<size_t>(d.n) * w_per);
  const size_t bytes = model.arena_bytes() + model.RangeBytes(0, 0);
  AlignedBuffer arena(bytes);
  Interpreter interp;
  Status st = interp.Init(&model, arena.p, bytes);
  if (st != Status::kOk) fail("layer '", info.name, "': interpreter init failed: ", interp.error());
  RunResult r;
  r.ranges.assign(static_cast<size_t>(d.n), 0);
  for (int rep = 0; rep < std::max(repeat, 1); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < d.n; ++i) {
      const size_t si = static_cast<size_t>(i);
      RunArgs a = {};
      if (!q.empty()) a.query = q.data() + si * static_cast<size_t>(d.lq) * info.query_dim;
      if (!self && !k.empty()) a.key = k.data() + si * static_cast<size_t>(lk) * info.key_dim;
      if (!self && !v.empty()) a.value = v.data() + si * static_cast<size_t>(lk) * info.value_dim;
      a.q_len = lq;
      a.kv_len = self ? d.lq : lk;
      a.kv_valid_len = d.valid[si];
      a.output = out.data() + si * out_per;
      a.attn_weights = w_per != 0 ? wts.data() + si * w_per : nullptr;
      st = interp.RunFloat(layer, a, policy, &r.ranges[si]);
      if (st != Status::kOk) {
        fail("layer '", info.name, "' sample ", i, ": runtime error (", status_string(st), "): ", interp.error());
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    r.set_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  r.output.assign(out.begin(), out.end());
  r.weights.resize(wts.size());
  for (size_t i = 0; i < wts.size(); ++i) r.weights[i] = wts[i] / 32768.0;
  return r;
}

}  // namespace

RunResult run_layer(const LoadedModel& lm, int layer, const LayerData& d, int repeat,
                    ea_range_policy policy) {
  LayerInfo li;
  if (policy != EA_RANGE_STATIC && lm.model().GetLayerInfo(layer, &li) == Status::kOk &&
      li.dtype == EA_S8) {
    return run_layer_float(lm, layer, d, repeat, policy);
  }
  const Model& model = lm.model();
  LayerInfo info;
  if (model.GetLayerInfo(layer, &info) != Status::kOk) fail("layer index ", layer, " is out of range");
  const bool s8 = info.dtype == EA_S8;
  const size_t elem = s8 ? 1 : sizeof(float);
  const FloatLayer shell = layer_shell(model, layer);
  const bool self = !shell.io().keys;
  const std::vector<uint8_t> q = encode(d.query, info.input_dtype, info.query_quant);
  const size_t in_elem = element_bytes(info.input_dtype);
  const size_t out_elem = element_bytes(info.output_dtype);
  // A pooling kind's rows (its keys) are in its input's element type (int16: the residual stream).
  const ea_dtype key_dtype = shell.learned_query() ? info.input_dtype : info.dtype;
  const size_t key_elem = element_bytes(key_dtype);
  const std::vector<uint8_t> k = encode(d.key, key_dtype, info.key_quant);
  const std::vector<uint8_t> v = encode(d.value, info.dtype, info.value_quant);
  const int lq = shell.learned_query() ? 1 : d.lq;
  const int lk = d.lk;
  const int H = shell.heads();  // 0: a kind without attention weights
  const size_t out_per = static_cast<size_t>(shell.output_rows(d.lq)) * info.output_dim;
  const size_t w_per = static_cast<size_t>(H) * lq * lk;
  std::vector<uint8_t> out, wts;
  resize_large(&out, static_cast<size_t>(d.n) * out_per * out_elem);
  resize_large(&wts, static_cast<size_t>(d.n) * w_per * (s8 ? 2 : 4));

  AlignedBuffer arena(model.arena_bytes());
  Interpreter interp;
  Status st = interp.Init(&model, arena.p, model.arena_bytes());
  if (st != Status::kOk) fail("layer '", info.name, "': interpreter init failed: ", interp.error());

  RunResult r;
  repeat = std::max(repeat, 1);
  for (int rep = 0; rep < repeat; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < d.n; ++i) {
      const size_t si = static_cast<size_t>(i);
      RunArgs a = {};
      if (!q.empty()) a.query = q.data() + si * static_cast<size_t>(d.lq) * info.query_dim * in_elem;
      if (!self && !k.empty()) a.key = k.data() + si * static_cast<size_t>(lk) * info.key_dim * key_elem;
      if (!self && !v.empty()) a.value = v.data() + si * static_cast<size_t>(lk) * info.value_dim * elem;
      a.q_len = lq;
      a.kv_len = self ? d.lq : lk;
      a.kv_valid_len = d.valid[si];
      a.use_cached_keys = 0;
      a.output = out.data() + si * out_per * out_elem;
      a.attn_weights = w_per != 0 ? wts.data() + si * w_per * (s8 ? 2 : 4) : nullptr;
      // (A coverage layer's uncached run is one sequence: its rows are the steps.)
      st = interp.Run(layer, a);
      if (st != Status::kOk) {
        fail("layer '", info.name, "' sample ", i, ": runtime error (", status_string(st), "): ", interp.error());
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    r.set_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  resize_large(&r.output, static_cast<size_t>(d.n) * out_per);
  resize_large(&r.weights, static_cast<size_t>(d.n) * w_per);
  decode_into(out, info.output_dtype, info.output_quant, &r.output);
  for (size_t i = 0; i < r.weights.size(); ++i) {
    if (s8) {
      uint16_t p;
      std::memcpy(&p, wts.data() + i * 2, 2);
      r.weights[i] = p / 32768.0;
    } else {
      float f;
      std::memcpy(&f, wts.data() + i * 4, 4);
      r.weights[i] = f;
    }
  }
  return r;
}

RunResult run_model(const LoadedModel& lm, const LayerData& input, const LayerData* memory, int repeat) {
  const Model& model = lm.model();
  GraphInfo g;
  int out_rows = 0;
  const bool rows_are_keys = input.query.empty();
  const int rows = rows_are_keys ? input.lk : input.lq;
  if (model.GetGraphInfo(&g, rows, &out_rows) != Status::kOk) fail("the model has no graph: ", model.error());
  const std::vector<uint8_t> in = encode(rows_are_keys ? input.key : input.query, g.input_dtype, g.input_quant);
  std::vector<uint8_t> mem;
  if (memory != nullptr) mem = encode(memory->key, g.dtype, g.memory_quant);
  const size_t in_per = static_cast<size_t>(rows) * g.input_dim * element_bytes(g.input_dtype);
  const size_t mem_per = memory ? static_cast<size_t>(memory->lk) * g.memory_dim * element_bytes(g.dtype) : 0;
  const size_t out_per = static_cast<size_t>(out_rows) * g.output_dim;
  std::vector<uint8_t> out;
  resize_large(&out, static_cast<size_t>(input.n) * out_per * element_bytes(g.output_dtype));
  AlignedBuffer arena(model.arena_bytes());
  Interpreter interp;
  Status st = interp.Init(&model, arena.p, model.arena_bytes());
  if (st != Status::kOk) fail("interpreter init failed: ", interp.error());
  RunResult r;
  for (int rep = 0; rep < std::max(repeat, 1); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < input.n; ++i) {
      const size_t si = static_cast<size_t>(i);
      ModelInputs a = {};
      a.rows = in.data() + si * in_per;
      a.num_rows = rows;
      a.valid_rows = input.valid[si] < 0 ? rows : input.valid[si];
      if (memory != nullptr) {
        a.memory = mem.data() + si * mem_per;
        a.memory_rows = memory->lk;
        a.memory_valid_rows = memory->valid[si] < 0 ? memory->lk : memory->valid[si];
      }
      ModelOutputs o = {};
      o.rows = out.data() + si * out_per * element_bytes(g.output_dtype);
      st = interp.Invoke(a, &o);
      if (st != Status::kOk) fail("sample ", i, ": runtime error (", status_string(st), "): ", interp.error());
    }
    const auto t1 = std::chrono::steady_clock::now();
    r.set_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  resize_large(&r.output, static_cast<size_t>(input.n) * out_per);
  decode_into(out, g.output_dtype, g.output_quant, &r.output);
  return r;
}

}  // namespace convert
}  // namespace edgeattn
