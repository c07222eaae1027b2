// The float64 reference (converter/model/float_reference.cc) computes its sums in
// register tiles, vectorized per instruction set, but promises every value bit
// for bit as the plain loops it documents: each sum in order from its start,
// a multiply and an add per term (no fused multiply-add). Calibration ranges,
// hence the .eatn bytes, rest on that. Here the plain loops, written out
// naively, against forward() with memcmp, on shapes that exercise the tiles'
// edges (outputs not a multiple of 8, rows not a multiple of the tile, more
// than one block of 64 query rows, causal and padded rows, grouped K/V heads).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "converter/model/float_reference.h"
#include "converter/kinds/luong.h"
#include "converter/kinds/mha.h"

namespace edgeattn {
namespace convert {
namespace {

using Vec = std::vector<double>;

Vec random_vec(std::mt19937& g, size_t n, double a) {
  std::uniform_real_distribution<double> u(-a, a);
  Vec v(n);
  for (double& x : v) x = u(g);
  return v;
}

FloatLinear random_linear(std::mt19937& g, int in, int out, bool bias) {
  FloatLinear l;
  l.in = in;
  l.out = out;
  l.w = random_vec(g, static_cast<size_t>(in) * out, 1.0 / std::sqrt(in));
  if (bias) l.b = random_vec(g, static_cast<size_t>(out), 0.5);
  return l;
}

// y[r][n] = b[n] (or 0.0) + sum over k in order of w[n][k] * x[r][k].
Vec plain_linear(const FloatLinear& l, const double* x, int rows) {
  Vec y(static_cast<size_t>(rows) * l.out);
  for (int r = 0; r < rows; ++r) {
    for (int n = 0; n < l.out; ++n) {
      double acc = l.b.empty() ? 0.0 : l.b[static_cast<size_t>(n)];
      for (int k = 0; k < l.in; ++k) {
        acc += l.w[static_cast<size_t>(n) * l.in + k] * x[static_cast<size_t>(r) * l.in + k];
      }
      y[static_cast<size_t>(r) * l.out + n] = acc;
    }
  }
  return y;
}

void plain_softmax(double* s, int n) {
  if (n <= 0) return;
  double m = s[0];
  for (int j = 1; j < n; ++j) m = std::max(m, s[j]);
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
  for (int j = 0; j < n; ++j) s[j] /= sum;
}

int plain_limit(const FloatLayer& L, int r, int lq, int lk, int valid) {
  int limit = valid >= 0 && valid < lk ? valid : lk;
  if (L.mask == MaskKind::kCausal) limit = std::min(limit, std::max(r + 1 + (lk - lq), 0));
  return limit;
}

struct MhaCase {
  int E, heads, kv_heads, kdim, vdim, lq, lk, valid;
  bool cross, bias;
  MaskKind mask;
};

FloatLayer make_mha(const MhaCase& c, std::mt19937& g) {
  FloatLayer L;
  L.name = "mha";
  L.kind = &kinds::kind_mha;
  L.mask = c.mask;
  MhaParams& P = L.params.emplace<MhaParams>();
  P.cross = c.cross;
  P.num_heads = c.heads;
  P.head_dim = c.E / c.heads;
  P.num_kv_heads = c.kv_heads;
  L.query_dim = c.E;
  L.key_dim = c.kdim;
  L.value_dim = c.vdim;
  L.output_dim = c.E;
  L.max_q_len = c.lq;
  L.max_kv_len = c.lk;
  P.scale = 1.0 / std::sqrt(static_cast<double>(P.head_dim));
  const int KV = c.kv_heads * P.head_dim;
  P.q_proj = random_linear(g, c.E, c.E, c.bias);
  P.k_proj = random_linear(g, c.kdim, KV, c.bias);
  P.v_proj = random_linear(g, c.vdim, KV, c.bias);
  P.out_proj = random_linear(g, c.E, c.E, c.bias);
  return L;
}

// The documented loops: scores sum q[i] * k[j][i] over i in order from 0.0,
// times the scale; context sums p[j] * v[j][c] over j < limit from 0.0.
void plain_mha(const FloatLayer& L, const SampleInput& in, Vec* out, Vec* weights) {
  const MhaParams& P = L.as<MhaParams>();
  const int lq = in.q_len, lk = P.cross ? in.kv_len : in.q_len;
  const double* key = P.cross ? in.key : in.query;
  const double* value = P.cross ? in.value : in.query;
  const int E = L.query_dim, hd = P.head_dim, KV = P.num_kv_heads * hd, group = P.num_heads / P.num_kv_heads;
  const Vec Q = plain_linear(P.q_proj, in.query, lq);
  const Vec K = plain_linear(P.k_proj, key, lk);
  const Vec V = plain_linear(P.v_proj, value, lk);
  Vec ctx(static_cast<size_t>(lq) * E, 0.0);
  weights->assign(static_cast<size_t>(P.num_heads) * lq * lk, 0.0);
  Vec s(static_cast<size_t>(lk));
  for (int h = 0; h < P.num_heads; ++h) {
    const int kvh = h / group;
    for (int r = 0; r < lq; ++r) {
      const int limit = plain_limit(L, r, lq, lk, in.valid);
      for (int j = 0; j < limit; ++j) {
        double acc = 0.0;
        for (int i = 0; i < hd; ++i) {
          acc += Q[static_cast<size_t>(r) * E + h * hd + i] * K[static_cast<size_t>(j) * KV + kvh * hd + i];
        }
        s[static_cast<size_t>(j)] = acc * P.scale;
      }
      plain_softmax(s.data(), limit);
      for (int j = 0; j < limit; ++j) (*weights)[(static_cast<size_t>(h) * lq + r) * lk + j] = s[static_cast<size_t>(j)];
      for (int c = 0; c < hd; ++c) {
        double acc = 0.0;
        for (int j = 0; j < limit; ++j) acc += s[static_cast<size_t>(j)] * V[static_cast<size_t>(j) * KV + kvh * hd + c];
        ctx[static_cast<size_t>(r) * E + h * hd + c] = acc;
      }
    }
  }
  *out = plain_linear(P.out_proj, ctx.data(), lq);
}

// Bit for bit: memcmp, and the first differing index on failure.
void expect_bits(const Vec& got, const Vec& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0) return;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0) {
      ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs plain loop " << want[i] << " (of " << got.size()
                    << ")";
      return;
    }
  }
}

TEST(FloatReference, MhaIsThePlainLoopBitForBit) {
  const MhaCase cases[] = {
      // E, heads, kv_heads, kdim, vdim, lq, lk, valid, cross, bias, mask
      {20, 4, 4, 20, 20, 70, 70, 53, false, true, MaskKind::kKeyPadding},  // 20 outputs: 2 blocks of 8 + 4
      {32, 4, 2, 32, 32, 67, 67, -1, false, true, MaskKind::kCausal},      // grouped K/V heads
      {24, 3, 3, 13, 11, 9, 75, -1, true, false, MaskKind::kNone},         // cross, no bias
      {64, 2, 2, 64, 64, 130, 130, -1, false, true, MaskKind::kCausal},    // three blocks of 64 rows
      {16, 2, 2, 16, 16, 5, 5, 0, false, true, MaskKind::kKeyPadding},     // no valid key
  };
  std::mt19937 g(7);
  for (const MhaCase& c : cases) {
    SCOPED_TRACE("E " + std::to_string(c.E) + " lq " + std::to_string(c.lq) + " lk " + std::to_string(c.lk));
    const FloatLayer L = make_mha(c, g);
    const Vec q = random_vec(g, static_cast<size_t>(c.lq) * c.E, 2.0);
    const Vec k = random_vec(g, static_cast<size_t>(c.lk) * c.kdim, 2.0);
    const Vec v = random_vec(g, static_cast<size_t>(c.lk) * c.vdim, 2.0);
    SampleInput in;
    in.query = q.data();
    in.key = c.cross ? k.data() : nullptr;
    in.value = c.cross ? v.data() : nullptr;
    in.q_len = c.lq;
    in.kv_len = c.cross ? c.lk : c.lq;
    in.valid = c.valid;
    Vec out, w, want_out, want_w;
    forward(L, in, &out, &w, nullptr);
    plain_mha(L, in, &want_out, &want_w);
    expect_bits(out, want_out, "output");
    expect_bits(w, want_w, "attention weights");
    // Into caller storage (the calibration pass): the same bits, every element written.
    Vec out2(output_size(L, in), -7.0), w2(weights_size(L, in), -7.0);
    forward(L, in, out2.data(), w2.data(), nullptr);
    expect_bits(out2, want_out, "output (caller storage)");
    expect_bits(w2, want_w, "attention weights (caller storage)");
  }
}

// Luong "general" (a projection without bias) and a value width that is not a
// multiple of 8: the P.V sum of one row.
TEST(FloatReference, LuongGeneralIsThePlainLoopBitForBit) {
  std::mt19937 g(11);
  const int dq = 19, dk = 21, dv = 27, lq = 6, lk = 41, valid = 33;
  FloatLayer L;
  L.kind = &kinds::kind_luong;
  LuongParams& P = L.params.emplace<LuongParams>();
  P.score = LuongScore::kGeneral;
  L.mask = MaskKind::kKeyPadding;
  L.query_dim = dq;
  L.key_dim = dk;
  L.value_dim = dv;
  L.output_dim = dv;
  P.scale = 0.75;
  P.w = random_linear(g, dq, dk, false);
  const Vec q = random_vec(g, static_cast<size_t>(lq) * dq, 1.5);
  const Vec k = random_vec(g, static_cast<size_t>(lk) * dk, 1.5);
  const Vec v = random_vec(g, static_cast<size_t>(lk) * dv, 1.5);
  SampleInput in;
  in.query = q.data();
  in.key = k.data();
  in.value = v.data();
  in.q_len = lq;
  in.kv_len = lk;
  in.valid = valid;
  Vec out, w;
  forward(L, in, &out, &w, nullptr);

  const Vec qp = plain_linear(P.w, q.data(), lq);
  Vec want_out(static_cast<size_t>(lq) * dv), want_w(static_cast<size_t>(lq) * lk, 0.0), s(static_cast<size_t>(lk));
  for (int r = 0; r < lq; ++r) {
    for (int j = 0; j < valid; ++j) {
      double acc = 0.0;
      for (int i = 0; i < dk; ++i) acc += qp[static_cast<size_t>(r) * dk + i] * k[static_cast<size_t>(j) * dk + i];
      s[static_cast<size_t>(j)] = acc * P.scale;
    }
    plain_softmax(s.data(), valid);
    for (int j = 0; j < valid; ++j) want_w[static_cast<size_t>(r) * lk + j] = s[static_cast<size_t>(j)];
    for (int c = 0; c < dv; ++c) {
      double acc = 0.0;
      for (int j = 0; j < valid; ++j) acc += s[static_cast<size_t>(j)] * v[static_cast<size_t>(j) * dv + c];
      want_out[static_cast<size_t>(r) * dv + c] = acc;
    }
  }
  expect_bits(out, want_out, "output");
  expect_bits(w, want_w, "attention weights");
}

}  // namespace
}  // namespace convert
}  // namespace edgeattn
