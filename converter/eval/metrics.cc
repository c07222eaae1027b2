#include "converter/eval/metrics.h"

#include <algorithm>
#include <cmath>

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {
namespace {

// Sums over the compared outputs of one sample or of the whole set.
struct Sums {
  double err2 = 0.0, ref2 = 0.0, out2 = 0.0, dot = 0.0, max_abs = 0.0;
  void add(const Sums& o) {
    err2 += o.err2;
    ref2 += o.ref2;
    out2 += o.out2;
    dot += o.dot;
    max_abs = std::max(max_abs, o.max_abs);
  }
  double rel_l2() const { return ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2); }
  double cosine() const {
    return (ref2 > 0.0 && out2 > 0.0) ? dot / std::sqrt(ref2 * out2) : (ref2 == out2 ? 1.0 : 0.0);
  }
};

}  // namespace

Metrics compare(const FloatLayer& L, const LayerData& d, const std::vector<double>& out,
                const std::vector<double>& ref_out, const std::vector<double>& weights,
                const std::vector<double>& ref_weights) {
  Metrics m;
  const int lq = L.learned_query() ? 1 : d.lq;
  const int out_rows = L.output_rows(d.lq);  // lq plus any added rows (class tokens)
  const int H = L.heads();
  const bool row_mask = L.self_attention() && L.mask == MaskKind::kKeyPadding;
  Sums all;
  for (int i = 0; i < d.n; ++i) {
    const int valid = d.valid[static_cast<size_t>(i)];
    const int rows = row_mask && valid >= 0 ? std::min(valid, lq) : out_rows;
    m.rows += static_cast<size_t>(rows);
    Sums one;
    for (int r = 0; r < rows; ++r) {
      const size_t base = (static_cast<size_t>(i) * out_rows + r) * L.output_dim;
      if (L.kind != nullptr && L.kind->index_output) {
        m.indices = true;
        bool same = true;
        for (int c = 0; c < L.output_dim; ++c) same = same && out[base + c] == ref_out[base + c];
        if (same) ++m.agreeing_rows;
      }
      for (int c = 0; c < L.output_dim; ++c) {
        const double y = out[base + c], t = ref_out[base + c];
        one.max_abs = std::max(one.max_abs, std::fabs(y - t));
        m.ref_max_abs = std::max(m.ref_max_abs, std::fabs(t));
        one.err2 += (y - t) * (y - t);
        one.ref2 += t * t;
        one.out2 += y * y;
        one.dot += y * t;
      }
      if (weights.empty() || ref_weights.empty()) continue;
      for (int h = 0; h < H; ++h) {
        const size_t wb = ((static_cast<size_t>(i) * H + h) * lq + r) * d.lk;
        for (int j = 0; j < d.lk; ++j) {
          m.weights_max_abs = std::max(m.weights_max_abs, std::fabs(weights[wb + j] - ref_weights[wb + j]));
        }
      }
    }
    all.add(one);
    if (i == 0 || one.rel_l2() > m.worst_rel_l2) {
      m.worst_sample = i;
      m.worst_rel_l2 = one.rel_l2();
      m.worst_cosine = one.cosine();
      m.worst_max_abs = one.max_abs;
    }
  }
  if (m.indices) m.agreement = m.rows > 0 ? static_cast<double>(m.agreeing_rows) / static_cast<double>(m.rows) : 1.0;
  m.max_abs = all.max_abs;
  m.rel_l2 = all.rel_l2();
  m.cosine = all.cosine();
  return m;
}

void reference_forward(const FloatLayer& L, const LayerData& d, std::vector<double>* out,
                       std::vector<double>* weights) {
  forward_samples(L, d, out, weights, [&L](const SampleInput& in, double* o, double* w) {
    forward(L, in, o, w, nullptr);
  });
}

}  // namespace convert
}  // namespace edgeattn
