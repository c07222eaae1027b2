#include "examples/runtime_attention.h"

#include "examples/layer_io.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "converter/base/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace demo {

using convert::fail;

namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

}  // namespace

RuntimeAttention::RuntimeAttention(const std::string& path, int d_model) : path_(path), d_(d_model) {
  model_ = std::make_unique<convert::LoadedModel>(convert::read_file(path), path);
  const Model& m = model_->model();
  auto find = [&](const char* name, LayerInfo* info) {
    const int i = m.FindLayer(name);
    if (i < 0) fail(path, ": no layer '", name, "'");
    m.GetLayerInfo(i, info);
    if (info->kind != EA_LAYER_MULTI_HEAD_ATTENTION || info->query_dim != d_model ||
        info->output_dim != d_model) {
      fail(path, ": layer '", name, "' is not multi-head attention of width ", d_model);
    }
    return i;
  };
  enc_ = find("enc_self", &enc_info_);
  self_ = find("dec_self", &self_info_);
  cross_ = find("dec_cross", &cross_info_);
  if (!self_info_.kv_cache) fail(path, ": 'dec_self' was not converted with \"kv_cache\": true");
  if (!cross_info_.cross) fail(path, ": 'dec_cross' is not cross-attention");
  if (enc_info_.dtype != self_info_.dtype || enc_info_.dtype != cross_info_.dtype) {
    fail(path, ": the attention layers have different dtypes");
  }
  dtype_ = enc_info_.dtype;
  self_max_len_ = self_info_.max_kv_len;
  // The runtime takes caller memory only: one 64-byte aligned arena.
  const size_t bytes = std::max<size_t>((m.arena_bytes() + 63) / 64 * 64, 64);
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  if (arena_ == nullptr) throw std::bad_alloc();
  Check(interp_.Init(&m, arena_, bytes), "Init");
}

RuntimeAttention::~RuntimeAttention() { std::free(arena_); }

void RuntimeAttention::Check(Status st, const char* what) {
  if (st != Status::kOk) fail(path_, ": ", what, " failed (", status_string(st), "): ", interp_.error());
}

const void* RuntimeAttention::Encode(const double* x, size_t n, const ea_quant& q,
                                     std::vector<uint8_t>* buf) const {
  return to_layer_input(x, n, dtype_, q, buf);
}

void RuntimeAttention::Decode(const std::vector<uint8_t>& buf, size_t offset, size_t n,
                              const ea_quant& q, double* out) const {
  from_layer_output(buf, offset, n, dtype_, q, out);
}

size_t RuntimeAttention::ElementBytes() const { return dtype_ == EA_S8 ? 1 : sizeof(float); }

void RuntimeAttention::Encoder(const double* x, int len, int valid, double* out) {
  const size_t n = static_cast<size_t>(len) * d_;
  RunArgs a = {};
  a.query = Encode(x, n, enc_info_.query_quant, &in_);
  a.q_len = len;
  a.kv_len = len;
  a.kv_valid_len = valid;
  out_.resize(n * ElementBytes());
  a.output = out_.data();
  Check(interp_.Run(enc_, a), "enc_self Run");
  Decode(out_, 0, n, enc_info_.output_quant, out);
}

void RuntimeAttention::CacheMemory(const double* memory, int len, int valid) {
  const size_t n = static_cast<size_t>(len) * d_;
  const void* key = Encode(memory, n, cross_info_.key_quant, &key_);
  // key == value in this model; int8 may still quantize them differently.
  std::vector<uint8_t> value_buf;
  const void* value = key;
  if (dtype_ == EA_S8 && (cross_info_.value_quant.scale != cross_info_.key_quant.scale ||
                          cross_info_.value_quant.zero_point != cross_info_.key_quant.zero_point)) {
    value = Encode(memory, n, cross_info_.value_quant, &value_buf);
  }
  Check(interp_.CacheKeys(cross_, key, value, len, valid), "dec_cross CacheKeys");
}

void RuntimeAttention::Cross(const double* query, double* out) {
  RunArgs a = {};
  a.query = Encode(query, static_cast<size_t>(d_), cross_info_.query_quant, &in_);
  a.q_len = 1;
  a.use_cached_keys = 1;
  out_.resize(static_cast<size_t>(d_) * ElementBytes());
  a.output = out_.data();
  Check(interp_.Run(cross_, a), "dec_cross Run (cached keys)");
  Decode(out_, 0, static_cast<size_t>(d_), cross_info_.output_quant, out);
}

void RuntimeAttention::BeginSequence() { Check(interp_.BeginSequence(self_), "dec_self BeginSequence"); }

void RuntimeAttention::SelfStep(const double* query, double* out) {
  const void* q = Encode(query, static_cast<size_t>(d_), self_info_.query_quant, &in_);
  out_.resize(static_cast<size_t>(d_) * ElementBytes());
  const Clock::time_point t0 = Clock::now();
  const Status st = interp_.Step(self_, q, out_.data());
  last_self_us_ = micros(t0, Clock::now());
  Check(st, "dec_self Step");
  Decode(out_, 0, static_cast<size_t>(d_), self_info_.output_quant, out);
}

void RuntimeAttention::SelfRerun(const double* rows, int n, double* out) {
  const size_t total = static_cast<size_t>(n) * d_;
  RunArgs a = {};
  a.query = Encode(rows, total, self_info_.query_quant, &in_);
  a.q_len = n;
  a.kv_len = n;
  out_.resize(total * ElementBytes());
  a.output = out_.data();
  const Clock::time_point t0 = Clock::now();
  const Status st = interp_.Run(self_, a);
  last_self_us_ = micros(t0, Clock::now());
  Check(st, "dec_self Run");
  Decode(out_, total - static_cast<size_t>(d_), static_cast<size_t>(d_), self_info_.output_quant, out);
}

}  // namespace demo
}  // namespace edgeattn
