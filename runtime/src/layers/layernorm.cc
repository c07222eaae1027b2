// LayerNorm over each row of the input (nn.LayerNorm(dim)): one output row per
// input row, no scratch. int8: requant.h's contract 4 (integer sums, one
// exact integer square root per row), so no FPU and the same bytes on every
// path. Also the normalization step of the transformer blocks (parts.h).
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/stage_profile.h"
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {

bool verify_layernorm(Checker& c, const fb::LayerNorm* n, bool s8, uint32_t dim, const char* what) {
  if (n == nullptr) {
    c.Msg() << "missing " << what;
    return false;
  }
  if (n->dim() != dim) {
    c.Msg() << what << " dim " << n->dim() << " != " << dim;
    return false;
  }
  if (!c.Positive(n->eps(), "LayerNorm eps")) return false;
  if (!s8) {
    return c.Tensor(n->gain(), fb::DType::F32, 1, dim, what) &&
           c.Tensor(n->bias(), fb::DType::F32, 1, dim, what);
  }
  if (n->eps_term() < 1 || n->eps_term() > kernels::kLayerNormMaxEpsTerm) {
    c.Msg() << what << " eps_term " << n->eps_term() << " is outside 1..2^60";
    return false;
  }
  if (!c.Tensor(n->gain(), fb::DType::S16, 1, dim, what) || !c.Tensor(n->bias(), fb::DType::S32, 1, dim, what) ||
      !c.Int32sWithin(n->bias(), kernels::kLayerNormMaxBias, "LayerNorm bias")) {
    return false;
  }
  // The 16-bit residual stream (contract 4b): int16 input, an int16 output
  // beside the int8 one or instead of it; at least one output.
  if ((n->input16() || n->output16() != nullptr) && !c.Stream16()) return false;
  if (!(n->input16() ? c.Quant16(n->input(), what) : c.Quant(n->input(), what))) return false;
  if (n->output16() != nullptr &&
      (!c.Quant16(n->output16(), what) || !c.Requant(n->requant16(), 1, what))) {
    return false;
  }
  if (n->output() == nullptr && n->output16() != nullptr) return true;
  return c.Quant(n->output(), what) && c.Requant(n->requant(), 1, what);
}

NormStep::NormStep(const fb::Model& model, const Call& c, const fb::LayerNorm* n, const void* x, void* y)
    : NormStep(model, c, n, x, y, nullptr) {}

NormStep::NormStep(const fb::Model& model, const Call& c, const fb::LayerNorm* n, const void* x, void* y8,
                   void* y16)
    : work_per_row(kernels::kLayerNormWorkPerElement * n->dim()), model_(model), c_(c), n_(n), x_(x), y_(y8),
      y16_(y16) {}

void NormStep::Rows(int r0, int r1, int) const {
  EA_STAGE_ENTER(outer, EA_STAGE_LAYERNORM);
  const int dim = static_cast<int>(n_->dim());
  const size_t row_bytes = static_cast<size_t>(dim) * elem_size(c_.int8());
  const size_t r = static_cast<size_t>(r0) * static_cast<size_t>(dim);
  if (kWithInt16Stream && c_.int8() && n_->input16()) {  // contract 4b: int16 rows in, int8 and/or int16 out
    kernels::QS16LayerNormArgs a = {};
    a.rows = r1 - r0;
    a.dim = dim;
    a.x = static_cast<const int16_t*>(x_) + r;
    a.x_stride = dim;
    a.eps_term = n_->eps_term();
    a.gain = tensor_data<int16_t>(model_, n_->gain());
    a.bias = tensor_data<int32_t>(model_, n_->bias());
    if (y_ != nullptr) {
      a.mult = n_->requant()->multiplier()->Get(0);
      a.shift = n_->requant()->shift()->Get(0);
      a.y_zp = n_->output()->zero_point();
      a.y8 = static_cast<int8_t*>(y_) + r;
      a.y8_stride = dim;
    }
    if (y16_ != nullptr) {
      a.mult16 = n_->requant16()->multiplier()->Get(0);
      a.shift16 = n_->requant16()->shift()->Get(0);
      a.y16 = static_cast<int16_t*>(y16_) + r;
      a.y16_stride = dim;
    }
    kernels::qs16_layernorm_kernel()(a);
    EA_STAGE_LEAVE(outer);
    return;
  }
  const void* xr = static_cast<const uint8_t*>(x_) + static_cast<size_t>(r0) * row_bytes;
  void* yr = static_cast<uint8_t*>(y_) + static_cast<size_t>(r0) * row_bytes;
  if (c_.int8()) {
    kernels::QS8LayerNormArgs a = {};
    a.rows = r1 - r0;
    a.dim = dim;
    a.x = static_cast<const int8_t*>(xr);
    a.x_stride = dim;
    a.eps_term = n_->eps_term();
    a.gain = tensor_data<int16_t>(model_, n_->gain());
    a.bias = tensor_data<int32_t>(model_, n_->bias());
    a.mult = n_->requant()->multiplier()->Get(0);
    a.shift = n_->requant()->shift()->Get(0);
    a.y_zp = n_->output()->zero_point();
    a.y = static_cast<int8_t*>(yr);
    a.y_stride = dim;
    kernels::qs8_layernorm_kernel()(a);
  } else {
    kernels::f32_layernorm_kernel()(r1 - r0, dim, static_cast<const float*>(xr), dim, n_->eps(),
                                    tensor_data<float>(model_, n_->gain()),
                                    tensor_data<float>(model_, n_->bias()), static_cast<float*>(yr), dim);
  }
  EA_STAGE_LEAVE(outer);
}

void run_layernorm(const fb::Model& model, const Call& c, const fb::LayerNorm* n, int rows, const void* x,
                   void* y) {
  // Rows on the pool (a row's statistics and output belong to one task).
  // A layer with only an int16 output writes that (the 16-bit stream).
  const bool only16 = kWithInt16Stream && c.int8() && n->output() == nullptr;
  NormStep(model, c, n, x, only16 ? nullptr : y, only16 ? y : nullptr).Alone(rows);
}

void NormStep::Alone(int rows) const {
  const uint64_t work = work_per_row * static_cast<uint64_t>(rows);
  parallel_ranges(c_.pool, rows, task_count(c_.pool, work, rows), [&](int r0, int r1, int w) { Rows(r0, r1, w); });
}

namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* n = l.options_as_LayerNorm();
  return c.Dim(n->dim(), "dim") && verify_layernorm(c, n, s8, n->dim(), "layernorm");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::LayerNorm*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* n = l.options_as_LayerNorm();
  const int d = static_cast<int>(n->dim());
  const bool s8 = l.dtype() == fb::DType::S8;
  const bool out16 = kWithInt16Stream && s8 && n->output() == nullptr;
  row_layer_info(d, d, n->input(), out16 ? n->output16() : n->output(), info);
  if (kWithInt16Stream && s8 && n->input16()) info->input_dtype = EA_S16;  // reads the 16-bit residual stream
  if (out16) info->output_dtype = EA_S16;
}

// No buffers: each row is normalized from the caller's input to its output.
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model& model, const Call& c, int) {
  run_layernorm(model, c, c.layer->options_as_LayerNorm(), c.q_len, c.query, c.output);
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_LAYERNORM);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  m.rows_independent = true;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_layernorm = module();
}  // namespace layers

}  // namespace edgeattn
