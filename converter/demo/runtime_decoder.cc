#include "converter/demo/runtime_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "converter/demo/layer_io.h"
#include "converter/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace demo {

using convert::fail;
using Clock = std::chrono::steady_clock;

RuntimeDecoder::RuntimeDecoder(const std::string& path, int d_model) : path_(path), d_(d_model) {
  model_ = std::make_unique<convert::LoadedModel>(convert::read_file(path), path);
  const Model& m = model_->model();
  auto find = [&](const char* name, ea_layer_kind kind, const char* what, LayerInfo* info) {
    const int i = m.FindLayer(name);
    if (i < 0) fail(path, ": no layer '", name, "' (convert models/transformer/decoder_block.spec.json)");
    m.GetLayerInfo(i, info);
    if (info->kind != kind || info->query_dim != d_model || info->output_dim != d_model) {
      fail(path, ": layer '", name, "' is not ", what, " of width ", d_model);
    }
    return i;
  };
  block_ = find("decoder", EA_LAYER_DECODER_BLOCK, "a decoder block", &block_info_);
  norm_ = find("dec_norm", EA_LAYER_LAYERNORM, "a LayerNorm", &norm_info_);
  if (block_info_.dtype != norm_info_.dtype) fail(path, ": 'decoder' and 'dec_norm' have different dtypes");
  const size_t bytes = std::max<size_t>((m.arena_bytes() + 63) / 64 * 64, 64);
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  if (arena_ == nullptr) throw std::bad_alloc();
  Check(interp_.Init(&m, arena_, bytes), "Init");
  const size_t es = block_info_.dtype == EA_S8 ? 1 : sizeof(float);
  out_.resize(static_cast<size_t>(block_info_.max_q_len) * d_ * es);  // sized once: timed calls do not allocate
  in_.reserve(out_.size());
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

void RuntimeDecoder::Norm(size_t row, double* out) {
  // The block's output at its quantization, dec_norm's input at its own
  // (calibrated on the same rows; int8 may still differ): through float64.
  const ea_dtype dt = block_info_.dtype;
  hidden_.resize(static_cast<size_t>(d_));
  from_layer_output(out_, row * d_, static_cast<size_t>(d_), dt, block_info_.output_quant, hidden_.data());
  RunArgs b = {};
  b.query = to_layer_input(hidden_.data(), static_cast<size_t>(d_), dt, norm_info_.query_quant, &norm_in_);
  b.q_len = 1;
  norm_out_.resize(static_cast<size_t>(d_) * (dt == EA_S8 ? 1 : sizeof(float)));
  b.output = norm_out_.data();
  Check(interp_.Run(norm_, b), "dec_norm Run");
  from_layer_output(norm_out_, 0, static_cast<size_t>(d_), dt, norm_info_.output_quant, out);
}

void RuntimeDecoder::Step(const double* x, double* out) {
  const void* q = to_layer_input(x, static_cast<size_t>(d_), block_info_.dtype, block_info_.query_quant, &in_);
  const Clock::time_point t0 = Clock::now();
  Check(interp_.Step(block_, q, out_.data()), "decoder Step");
  last_block_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  Norm(0, out);
}

void RuntimeDecoder::Rerun(const double* rows, int n, double* out) {
  RunArgs a = {};
  a.query = to_layer_input(rows, static_cast<size_t>(n) * d_, block_info_.dtype, block_info_.query_quant, &in_);
  a.q_len = n;
  a.use_cached_keys = 1;
  a.output = out_.data();
  const Clock::time_point t0 = Clock::now();
  Check(interp_.Run(block_, a), "decoder Run");
  last_block_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  Norm(static_cast<size_t>(n - 1), out);
}

}  // namespace demo
}  // namespace edgeattn
