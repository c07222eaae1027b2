// Token preparation (ViT, keyword-spotting transformers): num_cls class rows
// prepended to the caller's rows and a positional table added to every
// output row. Output row r of q_len input rows x (q_len + num_cls rows,
// ea_layer_info.added_rows = num_cls):
//   r <  num_cls: cls[r] + pos[r]          r >= num_cls: x[r - num_cls] + pos[r]
// int8: the class rows are constants (their outputs, written by the
// converter) and every other element is requant.h's positions contract,
// y = sat8((A (x - zp_in) + P 2^(16 - b) + 2^15 + zp_out 2^16) >> 16), a plain
// scalar loop (one multiply-add per element, the same integers everywhere).
// int8 into the 16-bit residual stream (Positions.output16, issue 37): the
// positions16 contract, y = sat16((A (x - zp_in) + P 2^(n - b) + 2^(n-1)) >> n),
// int16 class-row constants, the same scalar loop. With input16 (the
// stream's 16-bit entry: a linear's int16 rows, zero point 0) the
// positions16-in contract, y = sat16((A x + P 2^(n - b) + 2^(n-1)) >> n) in
// 64-bit integers, n in 1..30.
// float: cls[r] + pos[r] and x + pos[r], one float add per element.
#include <cstring>

#include "layer_kind.h"

namespace edgeattn {
namespace {

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* p = l.options_as_Positions();
  if (!c.Dim(p->dim(), "dim")) return false;
  const uint64_t rows = uint64_t{l.max_q_len()} + p->num_cls();
  if (p->num_cls() > kMaxLength || rows > kMaxLength) {
    c.Msg() << "max_q_len " << l.max_q_len() << " + num_cls " << p->num_cls() << " output rows exceed "
            << kMaxLength;
    return false;
  }
  if (p->table_rows() < rows) {
    c.Msg() << "positional table has " << p->table_rows() << " rows, max_q_len " << l.max_q_len()
            << " + num_cls " << p->num_cls() << " output rows need " << rows;
    return false;
  }
  // int16 output (the residual stream, positions16 contract): the shift n in
  // 1..16 and the table's fraction bits b in n-13..n; no shift otherwise.
  // int16 input too (positions16-in): n in 1..30, b in 0..n.
  const bool out16 = p->output16(), in16 = p->input16();
  if (in16 && (!s8 || !out16)) {
    c.Msg() << "input16 (int16 input rows) " << (!s8 ? "in a float (F32) layer: it is for int8 (S8) models"
                                                       : "without output16: int16 rows in give int16 rows out")
            << " only";
    return false;
  }
  if (out16 && s8 && !c.Stream16()) return false;
  const int32_t n = p->shift(), b = p->pos_bits();
  if (in16 && (n < kernels::kPositions16MinShift || n > kernels::kPositions16InMaxShift || b < 0 || b > n)) {
    c.Msg() << "int16 input shift " << n << " fraction bits " << b << ": shift 1.."
            << kernels::kPositions16InMaxShift << ", bits 0..shift";
    return false;
  }
  if (!in16 && (out16 || n != 0) &&
      (!s8 || n < kernels::kPositions16MinShift || n > kernels::kPositions16MaxShift || b < 0 || b > n ||
       n - b > kernels::kPositions16MaxTableShift || !out16)) {
    c.Msg() << "int16 output " << out16 << " shift " << n << " fraction bits " << b
            << ": int8 only, shift 1..16, bits shift-13..shift";
    return false;
  }
  if (p->num_cls() > 0) {
    if (!c.Tensor(p->cls(), s8 ? (out16 ? fb::DType::S16 : fb::DType::S8) : fb::DType::F32, p->num_cls(), p->dim(),
                  "class tokens")) {
      return false;
    }
  } else if (p->cls() != nullptr) {
    c.Msg() << "class tokens given for num_cls 0";
    return false;
  }
  if (!c.Tensor(p->table(), s8 ? fb::DType::S16 : fb::DType::F32, p->table_rows(), p->dim(), "positional table")) {
    return false;
  }
  if (!s8) return true;
  if (!(in16 ? c.Quant16(p->input(), "input16's input") : c.Quant(p->input(), "input"))) return false;
  if (p->input_multiplier() < 0 || p->input_multiplier() > kernels::kPositionsMaxMultiplier) {
    c.Msg() << "input multiplier " << p->input_multiplier() << " is outside 0.." << kernels::kPositionsMaxMultiplier;
    return false;
  }
  if (out16) return c.Quant16(p->output(), "output");
  if (!c.Quant(p->output(), "output")) return false;
  if (p->pos_bits() < kernels::kPositionsMinBits || p->pos_bits() > kernels::kPositionsMaxBits) {
    c.Msg() << "positional table fraction bits " << p->pos_bits() << " are outside " << kernels::kPositionsMinBits
            << ".." << kernels::kPositionsMaxBits;
    return false;
  }
  return true;
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Positions*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* p = l.options_as_Positions();
  const int d = static_cast<int>(p->dim());
  row_layer_info(d, d, p->input(), p->output(), info);
  info->added_rows = static_cast<int32_t>(p->num_cls());
  if (l.dtype() == fb::DType::S8 && p->output16()) info->output_dtype = EA_S16;  // the residual stream
  if (l.dtype() == fb::DType::S8 && p->input16()) info->input_dtype = EA_S16;    // its 16-bit entry
}

// No buffers: each output row is made from one input row (or a constant).
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

// Output rows 0..q_len+num_cls-1 of a sequence whose row 0 is the table's
// row `first` (a generation step: one row at its position, no class rows).
void run_from(const fb::Model& model, const Call& c, int first) {
  const auto* p = c.layer->options_as_Positions();
  const int d = static_cast<int>(p->dim());
  const int num_cls = first == 0 ? static_cast<int>(p->num_cls()) : 0;
  const int rows = c.q_len + num_cls;
  const size_t row = static_cast<size_t>(d);
  if (c.int8()) {  // int8 out, or (output16) the positions16 contract's int16 rows of the residual stream
    const bool out16 = kWithInt16Stream && p->output16();
    const bool in16 = out16 && p->input16();
    const size_t es = out16 ? 2 : 1;
    const uint8_t* cls = tensor_data<uint8_t>(model, p->cls());
    const int16_t* table = tensor_data<int16_t>(model, p->table());
    const size_t stride = p->table()->row_stride();
    const int8_t* x = static_cast<const int8_t*>(c.query);
    uint8_t* y = static_cast<uint8_t*>(c.output);
    for (int r = 0; r < num_cls; ++r) {  // the class rows' outputs
      std::memcpy(y + static_cast<size_t>(r) * row * es, cls + static_cast<size_t>(r) * p->cls()->row_stride() * es,
                  row * es);
    }
    const int32_t zp_in = p->input()->zero_point(), zp_out = p->output()->zero_point();
    const int32_t a = p->input_multiplier(), bits = p->pos_bits(), n = p->shift();
    for (int r = num_cls; r < rows; ++r) {
      const int8_t* xr = x + static_cast<size_t>(r - num_cls) * row;
      const int16_t* pr = table + static_cast<size_t>(first + r) * stride;
      if (in16) {
        const int16_t* xr16 = static_cast<const int16_t*>(c.query) + static_cast<size_t>(r - num_cls) * row;
        int16_t* yr = reinterpret_cast<int16_t*>(y) + static_cast<size_t>(r) * row;
        for (int k = 0; k < d; ++k) yr[k] = kernels::positions_s16_in16(xr16[k], a, pr[k], bits, n);
      } else if (out16) {
        int16_t* yr = reinterpret_cast<int16_t*>(y) + static_cast<size_t>(r) * row;
        for (int k = 0; k < d; ++k) yr[k] = kernels::positions_s16(xr[k], zp_in, a, pr[k], bits, n);
      } else {
        int8_t* yr = reinterpret_cast<int8_t*>(y) + static_cast<size_t>(r) * row;
        for (int k = 0; k < d; ++k) yr[k] = kernels::positions_s8(xr[k], zp_in, a, pr[k], bits, zp_out);
      }
    }
  } else {
    const float* cls = tensor_data<float>(model, p->cls());
    const float* table = tensor_data<float>(model, p->table());
    const size_t stride = p->table()->row_stride();
    const size_t cls_stride = num_cls > 0 ? p->cls()->row_stride() : 0;
    const float* x = static_cast<const float*>(c.query);
    float* y = static_cast<float*>(c.output);
    for (int r = 0; r < rows; ++r) {
      const float* src = r < num_cls ? cls + static_cast<size_t>(r) * cls_stride
                                     : x + static_cast<size_t>(r - num_cls) * row;
      const float* pr = table + static_cast<size_t>(first + r) * stride;
      float* yr = y + static_cast<size_t>(r) * row;
      for (int k = 0; k < d; ++k) yr[k] = src[k] + pr[k];
    }
  }
}

void run(const fb::Model& model, const Call& c, int) { run_from(model, c, 0); }

// One row at `position` (Interpreter::Generate; the graph check allows it
// only without class tokens, so the row is the table's row `position`).
void step(const fb::Model& model, const Call& c, int, int position) { run_from(model, c, position); }

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_POSITIONS);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.step = step;
  m.linears = linears;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_positions = module();
}  // namespace layers

}  // namespace edgeattn
