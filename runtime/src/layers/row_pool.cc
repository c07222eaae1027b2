// A sequence to one row (ViT / keyword-spotting classification): the first
// row (the class row, mode First) or the mean over the valid rows (Mean:
// rows 0..kv_valid_len-1, the key padding of the call). Like attention
// pooling its rows come in as the keys (no query, one output row), so Run
// and Invoke treat it the same way. int8: requant.h's row-mean contract per
// column, Q = round(2^16 sum_j (x_j - zp_in) / n) exactly in integers, then
// one requantization to the output; First is the mean of n = 1 row. A plain
// scalar loop (a few operations per element, the same integers everywhere).
// The 16-bit residual stream (RowPool.input16 / output16, issue 37): int16
// rows (zero point 0) summed in int32 and averaged in 2^-8 input steps
// (requant.h's row-mean contract 16); the output int8 for the head, or
// int16 (zero point 0) for a layernorm reading the stream.
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
  if (!s8) {
    if (p->input16() || p->output16()) {
      c.Msg() << "float layer with int16 fields";
      return false;
    }
    return true;
  }
  // The 16-bit residual stream (issue 37): int16 rows in and/or out, zero point 0.
  if ((p->input16() || p->output16()) && !c.Stream16()) return false;
  return (p->input16() ? c.Quant16(p->input(), "input") : c.Quant(p->input(), "input")) &&
         (p->output16() ? c.Quant16(p->output(), "output") : c.Quant(p->output(), "output")) &&
         c.Requant(p->requant(), 1, "row pool");
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
  if (l.dtype() == fb::DType::S8 && p->input16()) info->input_dtype = EA_S16;  // reads the residual stream
  if (l.dtype() == fb::DType::S8 && p->output16()) info->output_dtype = EA_S16;
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
  if (c.int8()) {  // int8 rows, or (input16) the int16 rows of the residual stream; int8 or (output16) int16 out
    const bool in16 = kWithInt16Stream && p->input16(), out16 = kWithInt16Stream && p->output16();
    const int32_t zp_in = p->input()->zero_point(), zp_out = p->output()->zero_point();  // 0 when int16
    const int32_t m = p->requant()->multiplier()->Get(0), shift = p->requant()->shift()->Get(0);
    const int bits = in16 ? kernels::kRowMean16Bits : kernels::kRowMeanBits;
    for (int k = 0; k < d; ++k) {
      int32_t sum = 0;  // int8: |sum| <= 255 n < 2^24; int16: <= 2^15 n < 2^31
      for (int j = 0; j < n; ++j) {
        const size_t i = static_cast<size_t>(j) * row + static_cast<size_t>(k);
        sum += (in16 ? static_cast<const int16_t*>(c.key)[i] : static_cast<const int8_t*>(c.key)[i]) - zp_in;
      }
      const int32_t q = kernels::row_mean_q(sum, n, bits);
      if (out16) {
        static_cast<int16_t*>(c.output)[k] = kernels::requantize_s16(q, m, shift);
      } else {
        static_cast<int8_t*>(c.output)[k] = kernels::requantize_s8(q, m, shift, zp_out);
      }
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
