#include "examples/runtime_encoder.h"

#include <algorithm>
#include <cstdlib>

#include "examples/layer_io.h"
#include "converter/base/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace demo {

using convert::fail;

RuntimeEncoder::RuntimeEncoder(const std::string& path, int d_model) : path_(path), d_(d_model) {
  model_ = std::make_unique<convert::LoadedModel>(convert::read_file(path), path);
  const Model& m = model_->model();
  auto find = [&](const char* name, ea_layer_kind kind, const char* what, LayerInfo* info) {
    const int i = m.FindLayer(name);
    if (i < 0) fail(path, ": no layer '", name, "' (convert models/transformer/encoder_block.spec.json)");
    m.GetLayerInfo(i, info);
    if (info->kind != kind || info->query_dim != d_model || info->output_dim != d_model) {
      fail(path, ": layer '", name, "' is not ", what, " of width ", d_model);
    }
    return i;
  };
  block_ = find("encoder", EA_LAYER_ENCODER_BLOCK, "an encoder block", &block_info_);
  norm_ = find("enc_norm", EA_LAYER_LAYERNORM, "a LayerNorm", &norm_info_);
  if (block_info_.dtype != norm_info_.dtype) fail(path, ": 'encoder' and 'enc_norm' have different dtypes");
  const size_t bytes = std::max<size_t>((m.arena_bytes() + 63) / 64 * 64, 64);
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  if (arena_ == nullptr) throw std::bad_alloc();
  Check(interp_.Init(&m, arena_, bytes), "Init");
}

RuntimeEncoder::~RuntimeEncoder() { std::free(arena_); }

void RuntimeEncoder::Check(Status st, const char* what) {
  if (st != Status::kOk) fail(path_, ": ", what, " failed (", status_string(st), "): ", interp_.error());
}

void RuntimeEncoder::Encode(const double* x, int len, int valid, double* memory) {
  const size_t n = static_cast<size_t>(len) * d_;
  const ea_dtype dt = block_info_.dtype;
  RunArgs a = {};
  a.query = to_layer_input(x, n, dt, block_info_.query_quant, &in_);
  a.q_len = len;
  a.kv_valid_len = valid;
  mid_.resize(n * (dt == EA_S8 ? 1 : sizeof(float)));
  a.output = mid_.data();
  Check(interp_.Run(block_, a), "encoder Run");
  // The block's output at its quantization, enc_norm's input at its own (both
  // calibrated on the same rows; int8 may still differ): through float64.
  hidden_.resize(n);
  from_layer_output(mid_, 0, n, dt, block_info_.output_quant, hidden_.data());
  RunArgs b = {};
  b.query = to_layer_input(hidden_.data(), n, dt, norm_info_.query_quant, &in_);
  b.q_len = len;
  out_.resize(mid_.size());
  b.output = out_.data();
  Check(interp_.Run(norm_, b), "enc_norm Run");
  from_layer_output(out_, 0, n, dt, norm_info_.output_quant, memory);
}

}  // namespace demo
}  // namespace edgeattn
