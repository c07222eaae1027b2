// Token embedding (nn.Embedding), a model's first layer: each query row is
// one int32 token id, and its output row is that id's row of the table
// [vocab][dim]. The interpreter checks every id against vocab
// (ea_layer_info.input_range) before run() is called, so every row read is
// inside the table.
//
// Numerics. int8: the table is stored already quantized at the output's
// (scale, zero point): the converter rounds each float value once,
// q = clamp(round(x / s_out) + zp_out, -128, 127), with s_out from the range
// of the whole table, so run() copies bytes. There is no arithmetic at run
// time, hence nothing that could differ between paths, and the int8 output
// equals the converter's rounding of the float table exactly. int8 with the
// 16-bit residual stream after it (Embedding.output16, issue 37): the table
// is int16 at the stream's scale (zero point 0), rounded once by the
// converter, and the run copies its 2-byte rows the same way. f32: the float
// rows are copied as they are. No attention weights, no arena.
#include <cstring>

#include "layer_kind.h"

namespace edgeattn {
namespace {

// Vocabularies may be larger than a layer's widths (kMaxDim); a table of
// 2^20 rows of 16384 int8 values is still within 32-bit row indices.
constexpr uint32_t kMaxVocab = 1u << 20;

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* e = l.options_as_Embedding();
  if (e->vocab() == 0 || e->vocab() > kMaxVocab) {
    c.Msg() << "vocab = " << e->vocab() << " is outside 1.." << kMaxVocab;
    return false;
  }
  if (!c.Dim(e->dim(), "dim")) return false;
  // int8, or (output16) the 16-bit residual stream: an int16 table at zero point 0
  const bool out16 = e->output16();
  if (out16 && s8 && !c.Stream16()) return false;
  if (!s8) return !out16 && c.Tensor(e->table(), fb::DType::F32, e->vocab(), e->dim(), "embedding table");
  return c.Tensor(e->table(), out16 ? fb::DType::S16 : fb::DType::S8, e->vocab(), e->dim(), "embedding table") &&
         (out16 ? c.Quant16(e->output(), "embedding output") : c.Quant(e->output(), "embedding output"));
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Embedding*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* e = l.options_as_Embedding();
  row_layer_info(1, static_cast<int>(e->dim()), nullptr, e->output(), info);
  info->input_dtype = EA_S32;  // one token id per row
  info->input_range = static_cast<int32_t>(e->vocab());
  if (l.dtype() == fb::DType::S8 && e->output16()) info->output_dtype = EA_S16;  // the residual stream
}

// No buffers: rows are copied from the table to the caller's output.
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model& model, const Call& c, int) {
  const auto* e = c.layer->options_as_Embedding();
  const size_t es = kWithInt16Stream && c.int8() && e->output16() ? sizeof(int16_t) : elem_size(c.int8());
  const size_t row_bytes = static_cast<size_t>(e->dim()) * es;
  const size_t stride_bytes = static_cast<size_t>(e->table()->row_stride()) * es;
  const uint8_t* table = tensor_data<uint8_t>(model, e->table());
  const int32_t* ids = static_cast<const int32_t*>(c.query);
  uint8_t* out = static_cast<uint8_t*>(c.output);
  for (int r = 0; r < c.q_len; ++r) {
    std::memcpy(out + static_cast<size_t>(r) * row_bytes, table + static_cast<size_t>(ids[r]) * stride_bytes,
                row_bytes);
  }
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_EMBEDDING);
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
const LayerKindModule kind_embedding = module();
}  // namespace layers

}  // namespace edgeattn
