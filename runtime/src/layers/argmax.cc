// Argmax / top-k over each row, a model's last layer: row r of `dim` values
// gives the int32 indices of its k largest values, largest first; equal
// values are taken in increasing index order (so k = 1 is the lowest index
// of the maximum, as torch.argmax on a row without NaN).
//
// Numerics. int8: the bytes are compared as integers. Every value of the row
// stands for s (q - zp) with one scale s > 0 and one zero point, a strictly
// increasing function of q, so the order of the bytes is the order of the
// real values they stand for; two real values that rounded to the same byte
// (closer than one step s) tie, and the tie goes to the lower index, which
// may differ from the float model's choice. No arithmetic beyond comparisons:
// the same indices on every path. f32: values compared as floats; a NaN
// counts as larger than every number (torch.argmax returns a NaN's index),
// NaNs among themselves by index; -0 and +0 are equal.
//
// Selection without scratch: pick j is the largest element, in the order
// (value descending, index ascending), that comes after pick j - 1 in that
// order; k passes over the row, k * dim comparisons. No weights, no arena.
#include <cmath>

#include "layer_kind.h"

namespace edgeattn {
namespace {

// Whether element (a, i) comes before (b, j) in the output's order.
inline bool before(int8_t a, int i, int8_t b, int j) { return a != b ? a > b : i < j; }
inline bool before(float a, int i, float b, int j) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an && bn ? i < j : an;
  return a != b ? a > b : i < j;
}

template <typename T>
void top_k(const T* x, int dim, int k, int32_t* out) {
  int prev = -1;
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int i = 0; i < dim; ++i) {
      if (prev >= 0 && !before(x[prev], prev, x[i], i)) continue;  // already picked, or before a pick
      if (best < 0 || before(x[i], i, x[best], best)) best = i;
    }
    out[j] = best;  // k <= dim (verified): a best always exists
    prev = best;
  }
}

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* a = l.options_as_Argmax();
  if (!c.Dim(a->dim(), "dim")) return false;
  if (a->k() < 1 || a->k() > a->dim()) {
    c.Msg() << "k = " << a->k() << " is outside 1..dim (" << a->dim() << ")";
    return false;
  }
  return !s8 || c.Quant(a->input(), "argmax input");
}

void shape(const void* options, LayerShape* s) {
  s->embed_dim = static_cast<int>(static_cast<const fb::Argmax*>(options)->dim());
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* a = l.options_as_Argmax();
  row_layer_info(static_cast<int>(a->dim()), static_cast<int>(a->k()), a->input(), nullptr, info);
  info->output_dtype = EA_S32;  // class indices
}

// No buffers: each row's indices are written to the caller's output.
LayerPlan plan(const LayerShape&, int, int) { return LayerPlan{0, 0, 0}; }

void run(const fb::Model&, const Call& c, int) {
  const auto* a = c.layer->options_as_Argmax();
  const int dim = static_cast<int>(a->dim()), k = static_cast<int>(a->k());
  int32_t* out = static_cast<int32_t*>(c.output);
  for (int r = 0; r < c.q_len; ++r) {
    const size_t at = static_cast<size_t>(r) * static_cast<size_t>(dim);
    if (c.int8()) {
      top_k(static_cast<const int8_t*>(c.query) + at, dim, k, out + static_cast<size_t>(r) * k);
    } else {
      top_k(static_cast<const float*>(c.query) + at, dim, k, out + static_cast<size_t>(r) * k);
    }
  }
}

int linears(const fb::Layer&, const fb::Linear*[kMaxLayerLinears]) { return 0; }

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_ARGMAX);
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
const LayerKindModule kind_argmax = module();
}  // namespace layers

}  // namespace edgeattn
