#include "examples/runtime_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "examples/layer_io.h"
#include "converter/base/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace demo {

using convert::fail;
using Clock = std::chrono::steady_clock;

RuntimeDecoder::RuntimeDecoder(const std::string& path, int d_model, int vocab)
    : path_(path), d_(d_model), vocab_(vocab) {
  model_ = std::make_unique<convert::LoadedModel>(convert::read_file(path), path);
  const Model& m = model_->model();
  auto find = [&](const char* name, ea_layer_kind kind, const char* what, int out_dim, LayerInfo* info) {
    const int i = m.FindLayer(name);
    if (i < 0) fail(path, ": no layer '", name, "' (convert models/transformer/decoder_block.spec.json)");
    m.GetLayerInfo(i, info);
    if (info->kind != kind || info->query_dim != d_model || info->output_dim != out_dim) {
      fail(path, ": layer '", name, "' is not ", what, " of width ", d_model, " -> ", out_dim);
    }
    return i;
  };
  block_ = find("decoder", EA_LAYER_DECODER_BLOCK, "a decoder block", d_model, &block_info_);
  norm_ = find("dec_norm", EA_LAYER_LAYERNORM, "a LayerNorm", d_model, &norm_info_);
  head_ = find("head", EA_LAYER_LINEAR, "a linear layer (the output head)", vocab, &head_info_);
  if (block_info_.dtype != norm_info_.dtype || block_info_.dtype != head_info_.dtype) {
    fail(path, ": 'decoder', 'dec_norm' and 'head' have different dtypes");
  }
  const size_t bytes = std::max<size_t>((m.arena_bytes() + 63) / 64 * 64, 64);
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  if (arena_ == nullptr) throw std::bad_alloc();
  Check(interp_.Init(&m, arena_, bytes), "Init");
  const size_t es = block_info_.dtype == EA_S8 ? 1 : sizeof(float);
  out_.resize(static_cast<size_t>(block_info_.max_q_len) * d_ * es);  // sized once: timed calls do not allocate
  in_.reserve(out_.size());
  norm_out_.resize(static_cast<size_t>(d_) * es);
  head_out_.resize(static_cast<size_t>(vocab_) * es);
}

RuntimeDecoder::~RuntimeDecoder() { std::free(arena_); }

void RuntimeDecoder::Check(Status st, const char* what) {
  if (st != Status::kOk) fail(path_, ": ", what, " failed (", status_string(st), "): ", interp_.error());
}

void RuntimeDecoder::CacheMemory(const double* memory, int len, int valid) {
  const void* k = to_layer_input(memory, static_cast<size_t>(len) * d_, block_info_.dtype, block_info_.key_quant, &in_);
  Check(interp_.CacheKeys(block_, k, nullptr, len, valid), "decoder CacheKeys");
}

void RuntimeDecoder::BeginSequence() { Check(interp_.BeginSequence(block_), "decoder BeginSequence"); }

const void* RuntimeDecoder::Chain(const std::vector<uint8_t>& bytes, size_t offset, size_t n,
                                  const LayerInfo& from, const LayerInfo& to, std::vector<uint8_t>* buf) {
  const ea_dtype dt = from.dtype;
  const bool same = dt == EA_F32 || (from.output_quant.scale == to.query_quant.scale &&
                                     from.output_quant.zero_point == to.query_quant.zero_point);
  if (same) return bytes.data() + offset * (dt == EA_S8 ? 1 : sizeof(float));
  // Calibrated on the same rows, but each layer from its own data: the scales
  // may differ in the last bits, so int8 is requantized (through float64).
  hidden_.resize(n);
  from_layer_output(bytes, offset, n, dt, from.output_quant, hidden_.data());
  return to_layer_input(hidden_.data(), n, dt, to.query_quant, buf);
}

void RuntimeDecoder::Head(size_t row, double* logits) {
  RunArgs b = {};
  b.query = Chain(out_, row * d_, static_cast<size_t>(d_), block_info_, norm_info_, &norm_in_);
  b.q_len = 1;
  b.output = norm_out_.data();
  Check(interp_.Run(norm_, b), "dec_norm Run");
  RunArgs h = {};
  h.query = Chain(norm_out_, 0, static_cast<size_t>(d_), norm_info_, head_info_, &head_in_);
  h.q_len = 1;
  h.output = head_out_.data();
  Check(interp_.Run(head_, h), "head Run");
  from_layer_output(head_out_, 0, static_cast<size_t>(vocab_), head_info_.dtype, head_info_.output_quant, logits);
}

void RuntimeDecoder::Step(const double* x, double* logits) {
  const void* q = to_layer_input(x, static_cast<size_t>(d_), block_info_.dtype, block_info_.query_quant, &in_);
  const Clock::time_point t0 = Clock::now();
  Check(interp_.Step(block_, q, out_.data()), "decoder Step");
  last_block_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  Head(0, logits);
}

void RuntimeDecoder::Rerun(const double* rows, int n, double* logits) {
  RunArgs a = {};
  a.query = to_layer_input(rows, static_cast<size_t>(n) * d_, block_info_.dtype, block_info_.query_quant, &in_);
  a.q_len = n;
  a.use_cached_keys = 1;
  a.output = out_.data();
  const Clock::time_point t0 = Clock::now();
  Check(interp_.Run(block_, a), "decoder Run");
  last_block_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  Head(static_cast<size_t>(n - 1), logits);
}

}  // namespace demo
}  // namespace edgeattn
