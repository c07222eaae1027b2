// A sequence to one row (ViT / keyword-spotting classification): the first
// row (the class row, mode First) or the mean over the valid rows (Mean:
// rows 0..kv_valid_len-1, the key padding of the call). Like attention
// pooling its rows come in as the keys (no query, one output row), so Run
// and Invoke treat it the same way. int8: requant.h's row-mean contract per
// column, Q = round(2^16 sum_j (x_j - zp_in) / n) exactly in integers, then
// one requantization to the output; First is the mean of n = 1 row. A plain
// scalar loop (a few operations per element, the same integers everywhere).
// float: the sum in row order divided by n.
#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_RowPool();
  if (!c.Dim(p->dim(), "dim")) return false;
  if (p->mode() != fb::RowPoolMode::First && p->mode() != fb::RowPoolMode::Mean) {
    c.Msg() << "row pooling mode " << static_cast<int>(p->mode()) << " is neither first (0) nor mean (1)";
    return false;
  }
  if (!s8) return true;
  return c.Quant(p->input(), "input") && c.Quant(p->output(), "output") && c.Requant(p->requant(), 1, "row pool");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::RowPool*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_RowPool();
  info->key_dim = static_cast<int32_t>(p->dim());
  info->value_dim = info->key_dim;
  info->output_dim = info->key_dim;
  info->num_heads = 0;  // no attention weights
  info->cross = 1;      // its rows are the keys
  info->max_q_len = 1;
  info->key_quant = quant_of(p->input());
  info->value_quant = info->key_quant;
  info->output_quant = quant_of(p->output());
}

// No buffers: each output element is one column's sum.
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model& model, const Call& c, int) {
  (void)model;
  const auto* p = c.layer->options_as_RowPool();
  const int d = static_cast<int>(p->dim());
  // Run made kv_valid_len 1..kv_len (<= 0 from the caller: every row).
  const int n = p->mode() == fb::RowPoolMode::First ? 1 : c.kv_valid_len;
  const size_t row = static_cast<size_t>(d);
  if (c.s8) {
    const int8_t* x = static_cast<const int8_t*>(c.key);
    int8_t* y = static_cast<int8_t*>(c.output);
    const int32_t zp_in = p->input()->zero_point(), zp_out = p->output()->zero_point();
    const int32_t m = p->requant()->multiplier()->Get(0), shift = p->requant()->shift()->Get(0);
    for (int k = 0; k < d; ++k) {
      int32_t sum = 0;  // |sum| <= 255 n < 2^24
      for (int j = 0; j < n; ++j) sum += x[static_cast<size_t>(j) * row + static_cast<size_t>(k)] - zp_in;
      y[k] = kernels::requantize_s8(kernels::row_mean_q16(sum, n), m, shift, zp_out);
    }
  } else {
    const float* x = static_cast<const float*>(c.key);
    float* y = static_cast<float*>(c.output);
    for (int k = 0; k < d; ++k) {
      float sum = 0.0f;
      for (int j = 0; j < n; ++j) sum += x[static_cast<size_t>(j) * row + static_cast<size_t>(k)];
      y[k] = sum / static_cast<float>(n);
    }
  }
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_ROW_POOL);
  m.learned_query = true;
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_row_pool = module();
}  // namespace layers

}  // namespace edgeattn
