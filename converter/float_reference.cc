#include "converter/float_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace edgeattn {
namespace convert {
namespace {

// Two doubles (GCC/Clang vector extension: SSE2 on x86-64, NEON on aarch64).
typedef double v2d __attribute__((vector_size(16)));

inline v2d load2(const double* p) {
  v2d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// y [rows][out] = x [rows][in] W^T + b.
// Every y[r][n] is summed exactly as the plain loop
//   acc = b[n] (or 0); for k in 0..in: acc += w[n][k] * x[r][k]
// would (the same products added in the same order, no contraction into
// fused multiply-adds), so results are bit for bit those of that loop. The
// loop itself, one dependent add chain per output, took ~80% of a large
// conversion; here 4 rows x 4 outputs are summed at once in registers from W
// transposed into stripes of 4 outputs ([out/4][in][4]).
std::vector<double> linear(const FloatLinear& l, const double* x, int rows) {
  const int in = l.in, out = l.out;
  const int out4 = out / 4 * 4, rows4 = rows / 4 * 4;
  std::vector<double> y(static_cast<size_t>(rows) * out);
  std::vector<double>& wt = l.stripes;
  if (wt.size() != static_cast<size_t>(out4) * in) {
    wt.assign(static_cast<size_t>(out4) * in, 0.0);
    for (int n = 0; n < out4; ++n) {
      double* stripe = wt.data() + static_cast<size_t>(n / 4) * in * 4 + n % 4;
      for (int k = 0; k < in; ++k) stripe[static_cast<size_t>(k) * 4] = l.w[static_cast<size_t>(n) * in + k];
    }
  }
  const auto bias = [&](int n) { return l.b.empty() ? 0.0 : l.b[static_cast<size_t>(n)]; };
  constexpr int kRowBlock = 32;  // rows of x kept in cache while the stripes pass
  for (int rb = 0; rb < rows4; rb += kRowBlock) {
    const int rb_end = std::min(rows4, rb + kRowBlock);
    for (int n0 = 0; n0 < out4; n0 += 4) {
      const double* stripe = wt.data() + static_cast<size_t>(n0 / 4) * in * 4;
      const v2d b_lo = {bias(n0), bias(n0 + 1)}, b_hi = {bias(n0 + 2), bias(n0 + 3)};
      for (int r = rb; r < rb_end; r += 4) {
        const double* x0 = x + static_cast<size_t>(r) * in;
        const double* x1 = x0 + in;
        const double* x2 = x1 + in;
        const double* x3 = x2 + in;
        v2d a0l = b_lo, a0h = b_hi, a1l = b_lo, a1h = b_hi, a2l = b_lo, a2h = b_hi, a3l = b_lo, a3h = b_hi;
        for (int k = 0; k < in; ++k) {
          const v2d wl = load2(stripe + static_cast<size_t>(k) * 4), wh = load2(stripe + static_cast<size_t>(k) * 4 + 2);
          const v2d v0 = {x0[k], x0[k]}, v1 = {x1[k], x1[k]}, v2 = {x2[k], x2[k]}, v3 = {x3[k], x3[k]};
          a0l += wl * v0;
          a0h += wh * v0;
          a1l += wl * v1;
          a1h += wh * v1;
          a2l += wl * v2;
          a2h += wh * v2;
          a3l += wl * v3;
          a3h += wh * v3;
        }
        const v2d res[4][2] = {{a0l, a0h}, {a1l, a1h}, {a2l, a2h}, {a3l, a3h}};
        for (int i = 0; i < 4; ++i) {
          std::memcpy(y.data() + static_cast<size_t>(r + i) * out + n0, res[i], 4 * sizeof(double));
        }
      }
    }
  }
  // Rows and outputs outside the 4 x 4 tiles: the plain loop.
  for (int r = 0; r < rows; ++r) {
    const double* xr = x + static_cast<size_t>(r) * in;
    for (int n = r < rows4 ? out4 : 0; n < out; ++n) {
      const double* wr = l.w.data() + static_cast<size_t>(n) * in;
      double acc = bias(n);
      for (int k = 0; k < in; ++k) acc += wr[k] * xr[k];
      y[static_cast<size_t>(r) * out + n] = acc;
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

// out[c] = sum over j = 0..n-1, in order, of coeff[j] * rows[j * stride + c]
// for c < width, each sum from 0.0; 8 columns at a time in registers (the
// sums are independent, so they vectorize while keeping each one's order).
void weighted_row_sum(int n, const double* coeff, const double* rows, size_t stride, int width,
                      double* out) {
  const int width8 = width / 8 * 8;
  for (int c0 = 0; c0 < width8; c0 += 8) {
    v2d a0 = {0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < n; ++j) {
      const double* rj = rows + static_cast<size_t>(j) * stride + c0;
      const v2d cj = {coeff[j], coeff[j]};
      a0 += cj * load2(rj);
      a1 += cj * load2(rj + 2);
      a2 += cj * load2(rj + 4);
      a3 += cj * load2(rj + 6);
    }
    std::memcpy(out + c0, &a0, sizeof a0);
    std::memcpy(out + c0 + 2, &a1, sizeof a1);
    std::memcpy(out + c0 + 4, &a2, sizeof a2);
    std::memcpy(out + c0 + 6, &a3, sizeof a3);
  }
  for (int c = width8; c < width; ++c) out[c] = 0.0;
  for (int j = 0; j < n; ++j) {
    const double* rj = rows + static_cast<size_t>(j) * stride;
    for (int c = width8; c < width; ++c) out[c] += coeff[j] * rj[c];
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
    // ctx_row[c] = sum over j in order of s[j] * v[j][c].
    const double* sr = s.data();
    weighted_row_sum(limit, sr, vals + v_off, static_cast<size_t>(v_stride), v_dim, ctx_row);
    if (weights != nullptr) {
      std::memcpy(weights->data() + (static_cast<size_t>(h) * lq + r) * lk, sr, static_cast<size_t>(limit) * sizeof(double));
    }
  };

  switch (L.kind) {
    case LayerKind::kMha: {
      const int E = L.q_proj.out, hd = L.head_dim;
      const int KV = L.k_proj.out;                    // num_kv_heads * head_dim
      const int group = H / (KV / hd);                // query heads per K/V head
      const std::vector<double> Q = linear(L.q_proj, in.query, lq);
      const std::vector<double> K = linear(L.k_proj, key, lk);
      const std::vector<double> V = linear(L.v_proj, value, lk);
      record(ranges, "q_proj", Q.data(), lq, E, E, q_rec);
      record(ranges, "k_proj", K.data(), lk, KV, KV, valid);
      record(ranges, "v_proj", V.data(), lk, KV, KV, valid);
      std::vector<double> ctx(static_cast<size_t>(lq) * E, 0.0);
      // This head's keys transposed ([hd][lk]): the scores of a row are summed
      // for all keys at once (independent sums that vectorize), each over
      // i = 0..hd-1 in order from 0.0 as a per-key dot product would be.
      std::vector<double> kt(static_cast<size_t>(hd) * lk);
      for (int h = 0; h < H; ++h) {
        for (int j = 0; j < lk; ++j) {
          const double* k = K.data() + static_cast<size_t>(j) * KV + (h / group) * hd;
          for (int i = 0; i < hd; ++i) kt[static_cast<size_t>(i) * lk + j] = k[i];
        }
        for (int r = 0; r < lq; ++r) {
          const int limit = row_limit(L, r, lq, lk, valid);
          const double* q = Q.data() + static_cast<size_t>(r) * E + h * hd;
          double* sr = s.data();
          weighted_row_sum(hd, q, kt.data(), static_cast<size_t>(lk), limit, sr);
          for (int j = 0; j < limit; ++j) sr[j] *= L.scale;
          attend(h, r, limit, V.data(), KV, (h / group) * hd, hd, ctx.data() + static_cast<size_t>(r) * E + h * hd);
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
      Range* cov_range = ranges != nullptr && L.coverage ? &(*ranges)["coverage"] : nullptr;
      std::vector<double> cov(static_cast<size_t>(L.coverage ? lk : 0), 0.0);  // c_j, from 0 per sample
      for (int r = 0; r < lq; ++r) {
        const int limit = row_limit(L, r, lq, lk, valid);
        for (int j = 0; j < limit; ++j) {
          double acc = 0.0;
          const double cj = L.coverage ? cov[static_cast<size_t>(j)] : 0.0;
          if (cov_range != nullptr) cov_range->add(cj);
          for (int c = 0; c < A; ++c) {
            double t = qp[static_cast<size_t>(r) * A + c] + kp[static_cast<size_t>(j) * A + c];
            if (L.coverage) t += L.w_c[static_cast<size_t>(c)] * cj;
            if (pre != nullptr && r < q_rec) pre->add(t);
            acc += L.v[static_cast<size_t>(c)] * std::tanh(t);
          }
          s[static_cast<size_t>(j)] = acc;
        }
        attend(0, r, limit, value, L.value_dim, 0, L.value_dim, out->data() + static_cast<size_t>(r) * L.output_dim);
        if (L.coverage) {
          for (int j = 0; j < limit; ++j) cov[static_cast<size_t>(j)] += s[static_cast<size_t>(j)];
        }
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
