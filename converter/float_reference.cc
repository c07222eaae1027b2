#include "converter/float_reference.h"

#include <algorithm>
#include <cmath>

namespace edgeattn {
namespace convert {
namespace {

// y [rows][out] = x [rows][in] W^T + b
std::vector<double> linear(const FloatLinear& l, const double* x, int rows) {
  std::vector<double> y(static_cast<size_t>(rows) * l.out);
  for (int r = 0; r < rows; ++r) {
    const double* xr = x + static_cast<size_t>(r) * l.in;
    for (int n = 0; n < l.out; ++n) {
      const double* wr = l.w.data() + static_cast<size_t>(n) * l.in;
      double acc = l.b.empty() ? 0.0 : l.b[static_cast<size_t>(n)];
      for (int k = 0; k < l.in; ++k) acc += wr[k] * xr[k];
      y[static_cast<size_t>(r) * l.out + n] = acc;
    }
  }
  return y;
}

void record(RangeMap* ranges, const char* key, const double* x, int rows, int cols, int stride,
            int first_row_excluded) {
  if (ranges == nullptr) return;
  Range& r = (*ranges)[key];
  const int n = std::min(rows, first_row_excluded);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < cols; ++c) r.add(x[static_cast<size_t>(i) * stride + c]);
  }
}

// Softmax over s[0..n) in place.
void softmax(double* s, int n) {
  if (n <= 0) return;
  double m = s[0];
  for (int j = 1; j < n; ++j) m = std::max(m, s[j]);
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
  for (int j = 0; j < n; ++j) s[j] /= sum;
}

}  // namespace

const char* kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::kMha: return "mha";
    case LayerKind::kAdditive: return "additive";
    case LayerKind::kLuong: return "luong";
    case LayerKind::kPooling: return "pooling";
  }
  return "?";
}

int row_limit(const FloatLayer& layer, int row, int q_len, int kv_len, int valid) {
  int limit = valid >= 0 && valid < kv_len ? valid : kv_len;
  if (layer.mask == MaskKind::kCausal) {
    const int c = row + 1 + (kv_len - q_len);
    if (c < limit) limit = std::max(c, 0);
  }
  return limit;
}

void forward(const FloatLayer& L, const SampleInput& in, std::vector<double>* out,
             std::vector<double>* weights, RangeMap* ranges) {
  const int lq = L.kind == LayerKind::kPooling ? 1 : in.q_len;
  const bool self = L.self_attention();
  const double* key = self ? in.query : in.key;
  const int lk = self ? in.q_len : in.kv_len;
  const double* value = self ? in.query : (in.value != nullptr ? in.value : key);
  const int valid = in.valid >= 0 ? std::min(in.valid, lk) : lk;
  // Query-side rows to record: self-attention with key padding skips padded rows.
  const int q_rec = (self && L.mask == MaskKind::kKeyPadding) ? valid : lq;
  const int H = L.heads();
  out->assign(static_cast<size_t>(lq) * L.output_dim, 0.0);
  if (weights != nullptr) weights->assign(static_cast<size_t>(H) * lq * lk, 0.0);
  std::vector<double> s(static_cast<size_t>(std::max(lk, 1)));

  if (L.kind != LayerKind::kPooling) record(ranges, "query", in.query, lq, L.query_dim, L.query_dim, q_rec);
  if (!self) {
    record(ranges, "key", key, lk, L.key_dim, L.key_dim, valid);
    if (in.value != nullptr) record(ranges, "value", value, lk, L.value_dim, L.value_dim, valid);
  }

  auto attend = [&](int h, int r, int limit, const double* vals, int v_stride, int v_off, int v_dim,
                    double* ctx_row) {
    softmax(s.data(), limit);
    for (int c = 0; c < v_dim; ++c) ctx_row[c] = 0.0;
    for (int j = 0; j < limit; ++j) {
      const double* vr = vals + static_cast<size_t>(j) * v_stride + v_off;
      for (int c = 0; c < v_dim; ++c) ctx_row[c] += s[static_cast<size_t>(j)] * vr[c];
      if (weights != nullptr) (*weights)[(static_cast<size_t>(h) * lq + r) * lk + j] = s[static_cast<size_t>(j)];
    }
  };

  switch (L.kind) {
    case LayerKind::kMha: {
      const int E = L.q_proj.out, hd = L.head_dim;
      const std::vector<double> Q = linear(L.q_proj, in.query, lq);
      const std::vector<double> K = linear(L.k_proj, key, lk);
      const std::vector<double> V = linear(L.v_proj, value, lk);
      record(ranges, "q_proj", Q.data(), lq, E, E, q_rec);
      record(ranges, "k_proj", K.data(), lk, E, E, valid);
      record(ranges, "v_proj", V.data(), lk, E, E, valid);
      std::vector<double> ctx(static_cast<size_t>(lq) * E, 0.0);
      for (int h = 0; h < H; ++h) {
        for (int r = 0; r < lq; ++r) {
          const int limit = row_limit(L, r, lq, lk, valid);
          const double* q = Q.data() + static_cast<size_t>(r) * E + h * hd;
          for (int j = 0; j < limit; ++j) {
            const double* k = K.data() + static_cast<size_t>(j) * E + h * hd;
            double acc = 0.0;
            for (int i = 0; i < hd; ++i) acc += q[i] * k[i];
            s[static_cast<size_t>(j)] = acc * L.scale;
          }
          attend(h, r, limit, V.data(), E, h * hd, hd, ctx.data() + static_cast<size_t>(r) * E + h * hd);
        }
      }
      record(ranges, "context", ctx.data(), lq, E, E, q_rec);
      *out = linear(L.out_proj, ctx.data(), lq);
      break;
    }
    case LayerKind::kAdditive: {
      const int A = L.attn_dim;
      const std::vector<double> qp = linear(L.w_q, in.query, lq);
      const std::vector<double> kp = linear(L.w_k, key, lk);
      record(ranges, "w_q", qp.data(), lq, A, A, q_rec);
      record(ranges, "w_k", kp.data(), lk, A, A, valid);
      Range* pre = ranges != nullptr ? &(*ranges)["pre_tanh"] : nullptr;
      for (int r = 0; r < lq; ++r) {
        const int limit = row_limit(L, r, lq, lk, valid);
        for (int j = 0; j < limit; ++j) {
          double acc = 0.0;
          for (int c = 0; c < A; ++c) {
            const double t = qp[static_cast<size_t>(r) * A + c] + kp[static_cast<size_t>(j) * A + c];
            if (pre != nullptr && r < q_rec) pre->add(t);
            acc += L.v[static_cast<size_t>(c)] * std::tanh(t);
          }
          s[static_cast<size_t>(j)] = acc;
        }
        attend(0, r, limit, value, L.value_dim, 0, L.value_dim, out->data() + static_cast<size_t>(r) * L.output_dim);
      }
      record(ranges, "output", out->data(), lq, L.output_dim, L.output_dim, q_rec);
      break;
    }
    case LayerKind::kLuong: {
      std::vector<double> qp;
      const double* q = in.query;
      if (L.luong == LuongKind::kGeneral) {
        qp = linear(L.w, in.query, lq);
        record(ranges, "w", qp.data(), lq, L.key_dim, L.key_dim, q_rec);
        q = qp.data();
      }
      const int D = L.key_dim;
      for (int r = 0; r < lq; ++r) {
        const int limit = row_limit(L, r, lq, lk, valid);
        for (int j = 0; j < limit; ++j) {
          double acc = 0.0;
          for (int i = 0; i < D; ++i) acc += q[static_cast<size_t>(r) * D + i] * key[static_cast<size_t>(j) * D + i];
          s[static_cast<size_t>(j)] = acc * L.scale;
        }
        attend(0, r, limit, value, L.value_dim, 0, L.value_dim, out->data() + static_cast<size_t>(r) * L.output_dim);
      }
      record(ranges, "output", out->data(), lq, L.output_dim, L.output_dim, q_rec);
      break;
    }
    case LayerKind::kPooling: {
      const int D = L.key_dim;
      const int limit = row_limit(L, 0, 1, lk, valid);
      for (int j = 0; j < limit; ++j) {
        double acc = 0.0;
        for (int i = 0; i < D; ++i) acc += L.v[static_cast<size_t>(i)] * key[static_cast<size_t>(j) * D + i];
        s[static_cast<size_t>(j)] = acc;
      }
      attend(0, 0, limit, key, D, 0, D, out->data());
      record(ranges, "output", out->data(), 1, D, D, 1);
      break;
    }
  }
  if (L.kind == LayerKind::kMha) record(ranges, "output", out->data(), lq, L.output_dim, L.output_dim, q_rec);
}

}  // namespace convert
}  // namespace edgeattn
