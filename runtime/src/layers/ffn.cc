// Feed-forward network (the MLP of a transformer block): y = fc2(act(fc1(x)))
// row by row, the hidden rows in the scratch. The linears are the tiled
// qs8_linear / f32_linear kernels; the int8 activation (ReLU, GELU in its erf
// and tanh forms, SiLU) is the converter's 256-entry table (requant.h
// contract 6: exact for int8 input, no libm on the device). Also the FFN step
// of the transformer blocks (parts.h).
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/stage_profile.h"
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {

bool verify_ffn(Checker& c, const fb::FeedForward* f, bool s8, uint32_t dim, const char* what) {
  if (f == nullptr) {
    c.Msg() << "missing " << what;
    return false;
  }
  if (f->dim() != dim) {
    c.Msg() << what << " dim " << f->dim() << " != " << dim;
    return false;
  }
  if (!c.Dim(f->hidden_dim(), "hidden_dim")) return false;
  if (f->activation() < fb::Activation::MIN || f->activation() > fb::Activation::MAX) {
    c.Msg() << what << " has unknown activation " << static_cast<int>(f->activation());
    return false;
  }
  if (!c.Linear(f->fc1(), s8, dim, f->hidden_dim(), "fc1") ||
      !c.Linear(f->fc2(), s8, f->hidden_dim(), dim, "fc2")) {
    return false;
  }
  if (s8 && (f->act_table() == nullptr || f->act_table()->size() != 256)) {
    c.Msg() << what << " needs a 256-entry activation table";
    return false;
  }
  return true;
}

uint64_t ffn_hidden_bytes(int hidden_dim, bool s8, int rows) {
  return align_up(static_cast<uint64_t>(rows) * static_cast<uint64_t>(hidden_dim) * (s8 ? 1 : 4));
}

TableStep::TableStep(const Call& c, const fb::FeedForward* f, void* hidden)
    : work_per_row(kernels::kTableWorkPerElement * f->hidden_dim()), c_(c), f_(f), hidden_(hidden) {}

void TableStep::Rows(int r0, int r1, int) const {
  EA_STAGE_ENTER(outer, EA_STAGE_FFN);
  const int h = static_cast<int>(f_->hidden_dim());
  uint8_t* hr =
      static_cast<uint8_t*>(hidden_) + static_cast<size_t>(r0) * static_cast<size_t>(h) * elem_size(c_.int8());
  if (c_.int8()) {
    auto* hq = reinterpret_cast<int8_t*>(hr);
    kernels::qs8_lut_kernel()(r1 - r0, h, hq, h, f_->act_table()->data(), hq, h);
  } else {
    kernels::f32_activation_kernel()(r1 - r0, h, reinterpret_cast<float*>(hr), h,
                                     static_cast<int32_t>(f_->activation()));
  }
  EA_STAGE_LEAVE(outer);
}

void TableStep::Alone(int rows) const {
  const uint64_t work = work_per_row * static_cast<uint64_t>(rows);
  parallel_ranges(c_.pool, rows, task_count(c_.pool, work, rows), [&](int r0, int r1, int w) { Rows(r0, r1, w); });
}

void run_ffn(const fb::Model& model, const Call& c, const fb::FeedForward* f, int rows, const void* x,
             void* hidden, void* y, const Residual* r) {
  // fc1, the activation and fc2 of a row tile in one task (run_chain).
  run_chain(c, rows, kernels::kLinearRowUnit, EA_FFN_STEP(LinearStep(model, c, f->fc1(), x, hidden)),
            TableStep(c, f, hidden), EA_FFN_STEP(LinearStep(model, c, f->fc2(), hidden, y, r)));
}

namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* f = l.options_as_FeedForward();
  return c.Dim(f->dim(), "dim") && verify_ffn(c, f, s8, f->dim(), "ffn");
}

void shape(const void* options, LayerShape* s) {
  const auto* f = static_cast<const fb::FeedForward*>(options);
  s->embed_dim = static_cast<int>(f->dim());
  s->hidden_dim = static_cast<int>(f->hidden_dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* f = l.options_as_FeedForward();
  const int d = static_cast<int>(f->dim());
  row_layer_info(d, d, f->fc1()->input(), f->fc2()->output(), info);
}

// Scratch: the hidden rows [q][hidden_dim].
LayerPlan plan(const LayerShape& s, int q_len, int) {
  return LayerPlan{0, ffn_hidden_bytes(s.hidden_dim, s.dtype == EA_S8, q_len), 0};
}

void run(const fb::Model& model, const Call& c, int) {
  run_ffn(model, c, c.layer->options_as_FeedForward(), c.q_len, c.query, c.scratch, c.output);
}

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  out[0] = l.options_as_FeedForward()->fc1();
  out[1] = l.options_as_FeedForward()->fc2();
  return 2;
}

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_FEED_FORWARD);
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
const LayerKindModule kind_ffn = module();
}  // namespace layers

}  // namespace edgeattn
