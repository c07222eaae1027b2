// Reference attention kernels (float32 and int8, dot-product and additive)
// against an independent float64 implementation written here, with error
// bounds derived below (not fitted to observed errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"
#include "test_util.h"

namespace ek = edgeattn::kernels;
using eatest::gamma_f32;
using eatest::kF32U;
using eatest::key_visible;
using eatest::kSentinel;
using eatest::kSentinel8;
using eatest::Rng;

namespace {

constexpr uint16_t kSentinelQ15 = 0xBEEF;
const double kLog2E = 1.4426950408889634;

int SampleKvLen(Rng& rng) {
  static const int kLens[] = {1, 2, 3, 5, 16, 31, 64, 100, 257, 512, 1000, 1024};
  if (rng.uniform_int(0, 1)) return kLens[rng.uniform_int(0, 11)];
  return static_cast<int>(rng.uniform_int(1, 1024));
}

int SampleValidLen(Rng& rng, int kv_len) {
  const int64_t u = rng.uniform_int(0, 99);
  if (u < 50) return kv_len;
  if (u < 85) return static_cast<int>(rng.uniform_int(0, kv_len));
  if (u < 90) return 0;
  return kv_len + 5;  // larger than kv_len: clamps to kv_len
}

// Masks: causal with an offset near the usual kv_len - q_len, or anywhere.
int SampleCausalOffset(Rng& rng, int q_len, int kv_len) {
  if (rng.uniform_int(0, 1)) return kv_len - q_len + static_cast<int>(rng.uniform_int(-3, 3));
  return static_cast<int>(rng.uniform_int(-3, kv_len));
}

// ---------------------------------------------------------------------------
// Float32 error model (used for f32_attention and f32_additive).
//
// Given exact float64 scores S_j (before softmax) and a bound ds_j on the
// float32 error of each computed score s_j:
//   t_j = fl(s_j - m): error <= u |s_j - m| <= u (|S_j - S_max| + 2 ds_max)
//   e_j = expf(t_j): relative error <= 2u (glibc expf is < 1 ulp; 2u is a margin)
//   sum: gamma_(n-1); 1/sum and e_j * inv: one rounding each.
// So w_j / P_j lies within exp(+-(k_j + k_max)) (1 +- gamma_(n+6)) with
// k_j = ds_j + u (|S_j - S_max| + 2 ds_max), i.e.
//   |w_j - P_j| <= rel_j P_j,  rel_j = exp(k_j + k_max)(1 + gamma_(n+6)) - 1,
// and out_c = fl(sum_j w_j v_jc) (from 0, n products and n-1 additions):
//   |out_c - ref_c| <= sum_j rel_j P_j |v_jc| + gamma_n sum_j (1 + rel_j) P_j |v_jc|.
// An absolute 1e-37 per term covers expf underflow to subnormals / zero.
// These are first-principles worst-case bounds; any indexing, masking,
// scaling or normalization bug produces errors orders of magnitude larger.
// ---------------------------------------------------------------------------
struct F32Bounds {
  std::vector<double> p;    // float64 probabilities of the visible keys
  std::vector<double> rel;  // relative bound per key
};

F32Bounds MakeF32Bounds(const std::vector<double>& s, const std::vector<double>& ds) {
  F32Bounds b;
  b.p = eatest::softmax64(s);
  const size_t n = s.size();
  if (n == 0) return b;
  const double smax = *std::max_element(s.begin(), s.end());
  const double ds_max = *std::max_element(ds.begin(), ds.end());
  std::vector<double> k(n);
  double k_max = 0.0;
  for (size_t j = 0; j < n; ++j) {
    k[j] = ds[j] + kF32U * (std::fabs(s[j] - smax) + 2 * ds_max);
    k_max = std::max(k_max, k[j]);
  }
  b.rel.resize(n);
  for (size_t j = 0; j < n; ++j) {
    b.rel[j] = std::exp(k[j] + k_max) * (1 + gamma_f32(static_cast<int>(n) + 6)) - 1;
  }
  return b;
}

// Checks one output row and one weight row of a float kernel.
//   visible: number of visible keys (masks are prefixes), kv_len: weight row length
void CheckF32Row(const char* what, uint64_t seed, int row, const F32Bounds& b, int visible, int kv_len,
                 int v_dim, const float* v, int v_stride, const float* out, int out_stride_pad,
                 const float* w, int w_stride_pad) {
  // Output.
  for (int c = 0; c < v_dim; ++c) {
    double ref = 0.0, tol = 0.0, mag = 0.0;
    for (int j = 0; j < visible; ++j) {
      const double vj = v[static_cast<size_t>(j) * v_stride + c];
      ref += b.p[j] * vj;
      tol += b.rel[j] * b.p[j] * std::fabs(vj) + 1e-37 * std::fabs(vj);
      mag += (1 + b.rel[j]) * b.p[j] * std::fabs(vj);
    }
    tol += gamma_f32(visible) * mag;
    ASSERT_LE(std::fabs(out[c] - ref), tol) << what << " seed " << seed << " row " << row << " out[" << c
                                             << "] got " << out[c] << " ref " << ref << " visible " << visible;
    if (visible == 0) {
      ASSERT_EQ(out[c], 0.0f) << what << " seed " << seed << " row " << row << " c " << c;
    }
  }
  for (int c = v_dim; c < out_stride_pad; ++c) {
    ASSERT_EQ(out[c], kSentinel) << what << " seed " << seed << " row " << row << " wrote output padding " << c;
  }
  if (w == nullptr) return;
  double wsum = 0.0;
  for (int j = 0; j < kv_len; ++j) {
    if (j >= visible) {
      ASSERT_EQ(w[j], 0.0f) << what << " seed " << seed << " row " << row << " masked weight " << j;
      continue;
    }
    wsum += w[j];
    ASSERT_LE(std::fabs(w[j] - b.p[j]), b.rel[j] * b.p[j] + 1e-37)
        << what << " seed " << seed << " row " << row << " weight " << j << " got " << w[j] << " ref " << b.p[j];
  }
  for (int j = kv_len; j < w_stride_pad; ++j) {
    ASSERT_EQ(w[j], kSentinel) << what << " seed " << seed << " row " << row << " wrote weight padding " << j;
  }
  if (visible > 0) {
    // Sum of n weights each within rel_j: <= max rel + n rounding in the ref sum (float64, negligible).
    double max_rel = *std::max_element(b.rel.begin(), b.rel.end());
    ASSERT_LE(std::fabs(wsum - 1.0), max_rel + 1e-12) << what << " seed " << seed << " row " << row;
  }
}

// ------------------------------------------------------- f32_attention ----

void RunF32AttentionCase(uint64_t seed, int q_len, int kv_len, int hd, int vd, bool causal, int offset,
                         int valid, double scale_factor, bool with_weights) {
  Rng rng(seed);
  const int q_stride = hd + static_cast<int>(rng.uniform_int(0, 3));
  const int k_stride = hd + static_cast<int>(rng.uniform_int(0, 3));
  const int v_stride = vd + static_cast<int>(rng.uniform_int(0, 3));
  const int o_stride = vd + static_cast<int>(rng.uniform_int(0, 2));
  const int w_stride = kv_len + static_cast<int>(rng.uniform_int(0, 2));
  std::vector<float> q(static_cast<size_t>(q_len) * q_stride), k(static_cast<size_t>(kv_len) * k_stride),
      v(static_cast<size_t>(kv_len) * v_stride);
  for (float& x : q) x = static_cast<float>(rng.normal());
  for (float& x : k) x = static_cast<float>(rng.normal());
  for (float& x : v) x = static_cast<float>(rng.uniform(-1, 1));
  const float scale = static_cast<float>(scale_factor / std::sqrt(static_cast<double>(hd)));
  std::vector<float> out(static_cast<size_t>(q_len) * o_stride, kSentinel);
  std::vector<float> w(static_cast<size_t>(q_len) * w_stride, kSentinel);
  std::vector<float> scratch(kv_len, kSentinel);
  ek::F32AttentionArgs a{};
  a.q_len = q_len; a.kv_len = kv_len; a.head_dim = hd; a.v_dim = vd;
  a.q = q.data(); a.q_stride = q_stride;
  a.k = k.data(); a.k_stride = k_stride;
  a.v = v.data(); a.v_stride = v_stride;
  a.scale = scale;
  a.causal = causal; a.causal_offset = offset; a.kv_valid_len = valid;
  a.out = out.data(); a.out_stride = o_stride;
  a.weights = with_weights ? w.data() : nullptr; a.weights_stride = w_stride;
  a.scratch = scratch.data();
  ek::f32_attention__ref(a);

  for (int r = 0; r < q_len; ++r) {
    int visible = 0;
    while (visible < kv_len && key_visible(r, visible, kv_len, valid, causal, offset)) ++visible;
    for (int j = visible; j < kv_len; ++j) {
      ASSERT_FALSE(key_visible(r, j, kv_len, valid, causal, offset)) << "mask is not a prefix?";
    }
    std::vector<double> s(visible), ds(visible);
    for (int j = 0; j < visible; ++j) {
      double dot = 0.0, mag = 0.0;
      for (int i = 0; i < hd; ++i) {
        const double t = static_cast<double>(q[static_cast<size_t>(r) * q_stride + i]) * k[static_cast<size_t>(j) * k_stride + i];
        dot += t;
        mag += std::fabs(t);
      }
      s[j] = dot * scale;
      // float dot of hd products then one multiply by scale: gamma_(hd+1).
      ds[j] = gamma_f32(hd + 1) * mag * std::fabs(scale);
    }
    const F32Bounds b = MakeF32Bounds(s, ds);
    CheckF32Row("f32_attention", seed, r, b, visible, kv_len, vd, v.data(), v_stride,
                out.data() + static_cast<size_t>(r) * o_stride, o_stride,
                with_weights ? w.data() + static_cast<size_t>(r) * w_stride : nullptr, w_stride);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(F32Attention, RandomShapesAgainstFloat64) {
  const int head_dims[] = {1, 15, 17, 64};
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 0xA77E);
    const int hd = rng.uniform_int(0, 4) == 0 ? static_cast<int>(rng.uniform_int(1, 80)) : head_dims[rng.uniform_int(0, 3)];
    const int vd = static_cast<int>(rng.uniform_int(1, 40));
    const int kv = SampleKvLen(rng);
    const int ql = static_cast<int>(kv > 300 ? rng.uniform_int(1, 4) : rng.uniform_int(1, 16));
    const bool causal = rng.uniform_int(0, 2) == 0;
    const int offset = causal ? SampleCausalOffset(rng, ql, kv) : 0;
    const int valid = SampleValidLen(rng, kv);
    const double sf = rng.log_uniform(0.2, 8.0);  // flat to very peaked rows
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " q_len " << ql << " kv_len " << kv << " hd " << hd
                                      << " vd " << vd << " causal " << causal << " offset " << offset
                                      << " valid " << valid);
    RunF32AttentionCase(seed, ql, kv, hd, vd, causal, offset, valid, sf, rng.uniform_int(0, 3) != 0);
    if (HasFatalFailure()) return;
  }
}

TEST(F32Attention, ZeroValidLenAndFullyMaskedRows) {
  // kv_valid_len = 0: every row outputs 0 and all-zero weights.
  RunF32AttentionCase(11, 3, 7, 8, 5, false, 0, 0, 1.0, true);
  // causal with offset -2: rows 0 and 1 see nothing.
  RunF32AttentionCase(12, 4, 4, 8, 5, true, -2, 4, 1.0, true);
}

TEST(F32Attention, WeightsOutputIsOptional) {
  Rng rng(99);
  const int ql = 5, kv = 37, hd = 16, vd = 9;
  std::vector<float> q(ql * hd), k(kv * hd), v(kv * vd), o1(ql * vd), o2(ql * vd), w(ql * kv), sc(kv);
  for (float& x : q) x = static_cast<float>(rng.normal());
  for (float& x : k) x = static_cast<float>(rng.normal());
  for (float& x : v) x = static_cast<float>(rng.normal());
  ek::F32AttentionArgs a{ql, kv, hd, vd, q.data(), hd, k.data(), hd, v.data(), vd, 0.25f, true, 30, 33,
                         o1.data(), vd, nullptr, kv, sc.data()};
  ek::f32_attention__ref(a);
  a.out = o2.data();
  a.weights = w.data();
  ek::f32_attention__ref(a);
  EXPECT_EQ(0, std::memcmp(o1.data(), o2.data(), o1.size() * sizeof(float)));
}

// -------------------------------------------------------- f32_additive ----

TEST(F32Additive, RandomAgainstFloat64) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed * 0xADD1);
    const int ql = static_cast<int>(rng.uniform_int(1, 6));
    const int kv = static_cast<int>(rng.uniform_int(0, 2) == 0 ? rng.uniform_int(1, 1024) : rng.uniform_int(1, 40));
    const int ad = static_cast<int>(rng.uniform_int(1, 48));
    const int vd = static_cast<int>(rng.uniform_int(1, 40));
    const int valid = SampleValidLen(rng, kv);
    const bool with_weights = rng.uniform_int(0, 3) != 0;
    const int qs = ad + static_cast<int>(rng.uniform_int(0, 3)), ks = ad + static_cast<int>(rng.uniform_int(0, 3));
    const int vs = vd + static_cast<int>(rng.uniform_int(0, 3)), os = vd + 1, ws = kv + 1;
    const double spread = rng.log_uniform(0.1, 3.0);
    std::vector<float> qp(static_cast<size_t>(ql) * qs), kp(static_cast<size_t>(kv) * ks), vw(ad),
        vals(static_cast<size_t>(kv) * vs);
    for (float& x : qp) x = static_cast<float>(rng.normal() * spread);
    for (float& x : kp) x = static_cast<float>(rng.normal() * spread);
    for (float& x : vw) x = static_cast<float>(rng.normal());
    for (float& x : vals) x = static_cast<float>(rng.uniform(-2, 2));
    std::vector<float> out(static_cast<size_t>(ql) * os, kSentinel), w(static_cast<size_t>(ql) * ws, kSentinel),
        sc(kv);
    ek::F32AdditiveArgs a{};
    a.q_len = ql; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
    a.qp = qp.data(); a.qp_stride = qs; a.kp = kp.data(); a.kp_stride = ks;
    a.v_w = vw.data(); a.values = vals.data(); a.values_stride = vs; a.kv_valid_len = valid;
    a.out = out.data(); a.out_stride = os;
    a.weights = with_weights ? w.data() : nullptr; a.weights_stride = ws;
    a.scratch = sc.data();
    ek::f32_additive__ref(a);
    for (int r = 0; r < ql; ++r) {
      const int visible = std::min(valid, kv);
      std::vector<double> s(visible), ds(visible);
      for (int j = 0; j < visible; ++j) {
        double acc = 0.0, mag = 0.0, err = 0.0;
        for (int c = 0; c < ad; ++c) {
          const double x = static_cast<double>(qp[static_cast<size_t>(r) * qs + c]) + kp[static_cast<size_t>(j) * ks + c];
          const double t = std::tanh(x);
          acc += vw[c] * t;
          mag += std::fabs(vw[c] * t);
          // fl(qp + kp) moves tanh by <= u |x| (slope <= 1); tanhf itself is
          // within 2 ulp (glibc documents <= 2 ulp for tanhf): 4u |t| with margin.
          err += std::fabs(vw[c]) * (kF32U * std::fabs(x) + 4 * kF32U * std::fabs(t) + 1e-45);
        }
        s[j] = acc;
        ds[j] = err * (1 + gamma_f32(ad)) + gamma_f32(ad) * mag;
      }
      const F32Bounds b = MakeF32Bounds(s, ds);
      CheckF32Row("f32_additive", seed, r, b, visible, kv, vd, vals.data(), vs,
                  out.data() + static_cast<size_t>(r) * os, os,
                  with_weights ? w.data() + static_cast<size_t>(r) * ws : nullptr, ws);
      if (HasFatalFailure()) return;
    }
  }
}

// ---------------------------------------------------------------------------
// Int8 error model (qs8_attention, qs8_additive).
//
// Let x_j be the real softmax arguments the kernel's integer scores stand for
// and E_j = 2^15 exp(x_j - x_max). The kernel computes, per the spec
// (requant.h, numerics contract 2):
//   z_j within 2 + z 2^-16 Q12 steps of (x_max - x_j) log2(e) 2^12
//        (requant_test: two floors and the 16-bit multiplier), z <= 65535
//        -> relative error of 2^(-z/4096) <= 2^(3/4096) - 1 = 5.08e-4
//        -> alpha0 = 5.1e-4;
//   e_j = exp2_neg_q15(z_j): within 1.66 LSB of 32767 2^(-z_j/4096) (checked
//        for all inputs in requant_test), cut-off terms have E <= 0.5.
// So e_j = G E_j (1 + a_j) + b'_j with |a_j| <= alpha, |b'_j| <= 1.66, and G a
// common factor (cancels in the ratio). If the scores themselves carry an
// error |x'_j - x_j| <= delta (additive: tanh table), G absorbs the shift of
// the maximum, alpha = (1 + alpha0) e^(2 delta) - 1 and |b'_j| <= 1.66 e^delta.
// With b_j = 1.66 e^delta + alpha E_j, T = sum E, B = sum b (all scaled by 1/G):
//   |e_j/sum e - P_j| <= (b_j + P_j B) / (T - B)
// and p_j = min(32767, round(e_j 2^15 / sum e)) within 1/2 + 2 P'_j (the
// 16-bit reciprocal, requant_test) plus 1 for the cap, P'_j <= P_j + the
// bound above, giving
//   |p_j - 2^15 P_j| <= 1/2 + 3 (P_j + eps_j) + 2^15 (b_j + P_j B) / (T - B)   [LSB].
// ---------------------------------------------------------------------------
std::vector<double> Q15Bounds(const std::vector<double>& x, double delta, std::vector<double>* p_out) {
  const size_t n = x.size();
  std::vector<double> bound(n);
  *p_out = eatest::softmax64(x);
  if (n == 0) return bound;
  const double xmax = *std::max_element(x.begin(), x.end());
  const double alpha = (1 + 5.1e-4) * std::exp(2 * delta) - 1;
  double t = 0.0, bsum = 0.0;
  std::vector<double> b(n);
  for (size_t j = 0; j < n; ++j) {
    const double e = 32768.0 * std::exp(x[j] - xmax);
    b[j] = 1.66 * std::exp(delta) + alpha * e;
    t += e;
    bsum += b[j];
  }
  for (size_t j = 0; j < n; ++j) {
    const double eps = (b[j] + (*p_out)[j] * bsum) / (t - bsum);
    bound[j] = t > bsum ? 0.5 + 3.0 * ((*p_out)[j] + eps) + 32768.0 * eps + 1e-9
                        : std::numeric_limits<double>::infinity();
  }
  return bound;
}

struct Q15Stats {
  double max_w_err = 0, max_w_ratio = 0, max_o_err = 0, max_o_ratio = 0;
};

// Checks one int8 row: weights vs float64 within Q15Bounds, masked weights 0,
// row sum 32768 +- n/2 + 3, output vs float64 within the propagated bound, and
// the documented relation out = sat8(requant(sum_j p_j (v_jc - zv)) + out_zp)
// with the reported p_j (exact, integer).
void CheckQ15Row(const char* what, uint64_t seed, int row, const std::vector<double>& x, double delta,
                 int kv_len, const uint16_t* w, int w_pad, int v_dim, const int8_t* v, int v_stride, int32_t v_zp,
                 double s_v, double s_out, int32_t out_zp, int32_t pv_mult, int32_t pv_shift, const int8_t* out,
                 int out_pad, Q15Stats* stats) {
  const int visible = static_cast<int>(x.size());
  std::vector<double> p;
  const std::vector<double> bound = Q15Bounds(x, delta, &p);
  int64_t wsum = 0;
  for (int j = 0; j < kv_len; ++j) {
    if (j >= visible) {
      ASSERT_EQ(w[j], 0) << what << " seed " << seed << " row " << row << " masked weight " << j;
      continue;
    }
    wsum += w[j];
    const double err = std::fabs(w[j] - 32768.0 * p[j]);
    stats->max_w_err = std::max(stats->max_w_err, err);
    stats->max_w_ratio = std::max(stats->max_w_ratio, err / bound[j]);
    ASSERT_LE(err, bound[j]) << what << " seed " << seed << " row " << row << " weight " << j << " got " << w[j]
                             << " ref " << 32768.0 * p[j] << " (Q15)";
  }
  for (int j = kv_len; j < w_pad; ++j) {
    ASSERT_EQ(w[j], kSentinelQ15) << what << " seed " << seed << " row " << row << " wrote weight padding " << j;
  }
  if (visible > 0) {
    ASSERT_LE(std::llabs(wsum - 32768), visible / 2 + 3)
        << what << " seed " << seed << " row " << row << " Q15 row sum " << wsum << " n " << visible;
  }
  const double r_pv = s_v / (32768.0 * s_out);
  for (int c = 0; c < v_dim; ++c) {
    int64_t acc = 0;
    double ref = 0.0, tol = 0.0;
    for (int j = 0; j < visible; ++j) {
      const int32_t dv = v[static_cast<size_t>(j) * v_stride + c] - v_zp;
      acc += int64_t{w[j]} * dv;
      ref += p[j] * dv;
      if (dv != 0) tol += bound[j] * std::abs(dv);
    }
    ASSERT_EQ(out[c], eatest::exact_requantize_s8(acc, pv_mult, pv_shift, out_zp))
        << what << " seed " << seed << " row " << row << " out[" << c << "] is not requant(sum p (v - zv))";
    const double ref_q = out_zp + ref * s_v / s_out;
    const double ref_clamped = std::min(127.0, std::max(-128.0, ref_q));
    // 0.5: final rounding; r_pv sum_j bound_j |v - zv|: probability error
    // propagated; 2^-30 |.|: multiplier quantization (2^-31, doubled); 1e-6 slack
    // for float64 evaluation of the reference.
    const double tol_q = 0.5 + r_pv * tol + std::fabs(ref_q - out_zp) * std::ldexp(1.0, -30) + 1e-6;
    const double err = std::fabs(out[c] - ref_clamped);
    stats->max_o_err = std::max(stats->max_o_err, err);
    stats->max_o_ratio = std::max(stats->max_o_ratio, err / tol_q);
    ASSERT_LE(err, tol_q) << what << " seed " << seed << " row " << row << " out[" << c << "] got " << int{out[c]}
                          << " ref " << ref_q << " tol " << tol_q;
  }
  for (int c = v_dim; c < out_pad; ++c) {
    ASSERT_EQ(out[c], kSentinel8) << what << " seed " << seed << " row " << row << " wrote output padding " << c;
  }
}

// ------------------------------------------------------- qs8_attention ----

struct QS8AttnCase {
  int q_len, kv_len, hd, vd;
  bool causal = false;
  int offset = 0, valid = 0;
  double s_q, s_k, s_v, s_out, scale;
  int32_t q_zp, k_zp, v_zp, out_zp;
  int q_stride, k_stride, v_stride, o_stride, w_stride;
  std::vector<int8_t> q, k, v;
  bool with_weights = true;
  // results
  std::vector<int8_t> out;
  std::vector<uint16_t> w;
  int32_t score_mult = 0, score_shift = 0, pv_mult = 0, pv_shift = 0;
};

void RunQS8Attention(QS8AttnCase* c) {
  const double score_real = c->s_q * c->s_k * c->scale * kLog2E * 65536.0;
  ASSERT_TRUE(ek::quantize_multiplier(score_real, &c->score_mult, &c->score_shift)) << score_real;
  ASSERT_TRUE(ek::quantize_multiplier(c->s_v / (32768.0 * c->s_out), &c->pv_mult, &c->pv_shift));
  c->out.assign(static_cast<size_t>(c->q_len) * c->o_stride, kSentinel8);
  c->w.assign(static_cast<size_t>(c->q_len) * c->w_stride, kSentinelQ15);
  std::vector<int32_t> scratch(c->kv_len + 1, 0x7EADBEEF);
  std::vector<uint16_t> prob_scratch(c->kv_len + 1, kSentinelQ15);
  ek::QS8AttentionArgs a{};
  a.q_len = c->q_len; a.kv_len = c->kv_len; a.head_dim = c->hd; a.v_dim = c->vd;
  a.q = c->q.data(); a.q_stride = c->q_stride; a.q_zp = c->q_zp;
  a.k = c->k.data(); a.k_stride = c->k_stride; a.k_zp = c->k_zp;
  a.v = c->v.data(); a.v_stride = c->v_stride; a.v_zp = c->v_zp;
  a.score_mult = c->score_mult; a.score_shift = c->score_shift;
  a.pv_mult = c->pv_mult; a.pv_shift = c->pv_shift;
  a.out_zp = c->out_zp;
  a.causal = c->causal; a.causal_offset = c->offset; a.kv_valid_len = c->valid;
  a.out = c->out.data(); a.out_stride = c->o_stride;
  a.weights = c->with_weights ? c->w.data() : nullptr; a.weights_stride = c->w_stride;
  a.scratch = scratch.data();
  a.prob_scratch = prob_scratch.data();
  ek::qs8_attention__ref(a);
  ASSERT_EQ(scratch[c->kv_len], 0x7EADBEEF) << "scratch overrun";
  ASSERT_EQ(prob_scratch[c->kv_len], kSentinelQ15) << "prob_scratch overrun";
}

QS8AttnCase MakeQS8AttnCase(Rng& rng, int q_len, int kv_len, int hd, int vd) {
  QS8AttnCase c;
  c.q_len = q_len; c.kv_len = kv_len; c.hd = hd; c.vd = vd;
  c.valid = kv_len;
  c.s_q = rng.log_uniform(0.002, 0.06);
  c.s_k = rng.log_uniform(0.002, 0.06);
  c.s_v = rng.log_uniform(0.001, 0.1);
  c.s_out = c.s_v * rng.log_uniform(0.3, 3.0);
  c.scale = 1.0 / std::sqrt(static_cast<double>(hd));
  c.q_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
  c.k_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
  c.v_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
  c.out_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
  c.q_stride = hd + static_cast<int>(rng.uniform_int(0, 3));
  c.k_stride = hd + static_cast<int>(rng.uniform_int(0, 3));
  c.v_stride = vd + static_cast<int>(rng.uniform_int(0, 3));
  c.o_stride = vd + static_cast<int>(rng.uniform_int(0, 2));
  c.w_stride = kv_len + static_cast<int>(rng.uniform_int(0, 2));
  c.q.resize(static_cast<size_t>(q_len) * c.q_stride);
  c.k.resize(static_cast<size_t>(kv_len) * c.k_stride);
  c.v.resize(static_cast<size_t>(kv_len) * c.v_stride);
  for (int8_t& x : c.q) x = rng.s8();
  for (int8_t& x : c.k) x = rng.s8();
  for (int8_t& x : c.v) x = rng.s8();
  return c;
}

// Float64 reference of one row: x_j = s_q s_k scale * sum_i (q - zq)(k - zk)
// for the visible keys (dequantized inputs; the integer dot product is exact).
std::vector<double> QS8AttnRowArgs(const QS8AttnCase& c, int r) {
  std::vector<double> x;
  for (int j = 0; j < c.kv_len && key_visible(r, j, c.kv_len, c.valid, c.causal, c.offset); ++j) {
    int64_t dot = 0;
    for (int i = 0; i < c.hd; ++i) {
      dot += (int64_t{c.q[static_cast<size_t>(r) * c.q_stride + i]} - c.q_zp) *
             (int64_t{c.k[static_cast<size_t>(j) * c.k_stride + i]} - c.k_zp);
    }
    x.push_back(c.s_q * c.s_k * c.scale * static_cast<double>(dot));
  }
  return x;
}

void CheckQS8Attention(const QS8AttnCase& c, uint64_t seed, Q15Stats* stats) {
  for (int r = 0; r < c.q_len; ++r) {
    const std::vector<double> x = QS8AttnRowArgs(c, r);
    for (size_t j = x.size(); j < static_cast<size_t>(c.kv_len); ++j) {
      ASSERT_FALSE(key_visible(r, static_cast<int>(j), c.kv_len, c.valid, c.causal, c.offset));
    }
    if (!c.with_weights) return;  // callers check outputs of weight-less runs against a weighted run
    const uint16_t* w = c.w.data() + static_cast<size_t>(r) * c.w_stride;
    CheckQ15Row("qs8_attention", seed, r, x, 0.0, c.kv_len, w, c.w_stride, c.vd, c.v.data(), c.v_stride, c.v_zp,
                c.s_v, c.s_out, c.out_zp, c.pv_mult, c.pv_shift, c.out.data() + static_cast<size_t>(r) * c.o_stride,
                c.o_stride, stats);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(QS8Attention, RandomShapesAgainstFloat64) {
  const int head_dims[] = {1, 15, 17, 64};
  Q15Stats stats;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Rng rng(seed * 0x5187);
    const int hd = rng.uniform_int(0, 4) == 0 ? static_cast<int>(rng.uniform_int(1, 80)) : head_dims[rng.uniform_int(0, 3)];
    const int vd = static_cast<int>(rng.uniform_int(1, 40));
    const int kv = SampleKvLen(rng);
    const int ql = static_cast<int>(kv > 300 ? rng.uniform_int(1, 4) : rng.uniform_int(1, 16));
    QS8AttnCase c = MakeQS8AttnCase(rng, ql, kv, hd, vd);
    c.causal = rng.uniform_int(0, 2) == 0;
    c.offset = c.causal ? SampleCausalOffset(rng, ql, kv) : 0;
    c.valid = SampleValidLen(rng, kv);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " q_len " << ql << " kv_len " << kv << " hd " << hd
                                      << " vd " << vd << " causal " << c.causal << " offset " << c.offset
                                      << " valid " << c.valid);
    RunQS8Attention(&c);
    if (HasFatalFailure()) return;
    CheckQS8Attention(c, seed, &stats);
    if (HasFatalFailure()) return;
  }
  std::printf("qs8_attention: max |w - ref| = %.3f LSB (%.2f of bound), max |out - ref| = %.3f LSB (%.2f of bound)\n",
              stats.max_w_err, stats.max_w_ratio, stats.max_o_err, stats.max_o_ratio);
}

TEST(QS8Attention, WeightsOutputIsOptional) {
  Rng rng(0x0F7);
  QS8AttnCase c = MakeQS8AttnCase(rng, 6, 50, 17, 9);
  c.causal = true;
  c.offset = 44;
  c.valid = 47;
  RunQS8Attention(&c);
  const std::vector<int8_t> with = c.out;
  c.with_weights = false;
  RunQS8Attention(&c);
  EXPECT_EQ(with, c.out);
  for (uint16_t w : c.w) ASSERT_EQ(w, kSentinelQ15) << "weights written although not requested";
}

TEST(QS8Attention, NearUniform1024Keys) {
  // 1024 keys whose scores differ by far less than one softmax unit: every
  // probability is ~32 LSB and must be nonzero; the row sums to 32768 +- n/2.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed * 0x1024);
    QS8AttnCase c = MakeQS8AttnCase(rng, 2, 1024, 64, 8);
    c.s_q = 0.001;
    c.s_k = 0.001;  // |x| <= 1e-6 * 255^2 * 64 / 8 = 0.52, typically ~0.02
    RunQS8Attention(&c);
    if (HasFatalFailure()) return;
    Q15Stats stats;
    CheckQS8Attention(c, seed, &stats);
    if (HasFatalFailure()) return;
    for (int r = 0; r < c.q_len; ++r) {
      int64_t sum = 0;
      for (int j = 0; j < 1024; ++j) {
        const uint16_t p = c.w[static_cast<size_t>(r) * c.w_stride + j];
        ASSERT_GT(p, 0) << "seed " << seed << " row " << r << " key " << j;
        sum += p;
      }
      ASSERT_LE(std::llabs(sum - 32768), 512) << "seed " << seed << " row " << r;
    }
  }
  // Exactly equal scores (q = zq): each p must be exactly 32768 / 1024 = 32.
  Rng rng(77);
  QS8AttnCase c = MakeQS8AttnCase(rng, 1, 1024, 16, 4);
  for (int8_t& x : c.q) x = static_cast<int8_t>(c.q_zp);
  RunQS8Attention(&c);
  for (int j = 0; j < 1024; ++j) ASSERT_EQ(c.w[j], 32) << "key " << j;
}

TEST(QS8Attention, ZeroPointInvariance) {
  // Shifting q and zq (k and zk, v and zv) together leaves the real inputs,
  // hence the integer scores and everything after them, unchanged.
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Rng rng(seed * 0x2E80);
    QS8AttnCase c = MakeQS8AttnCase(rng, 4, static_cast<int>(rng.uniform_int(1, 200)), 16, 6);
    c.q_zp = static_cast<int32_t>(rng.uniform_int(-20, 20));
    c.k_zp = static_cast<int32_t>(rng.uniform_int(-20, 20));
    c.v_zp = static_cast<int32_t>(rng.uniform_int(-20, 20));
    for (int8_t& x : c.q) x = static_cast<int8_t>(rng.uniform_int(-100, 100));
    for (int8_t& x : c.k) x = static_cast<int8_t>(rng.uniform_int(-100, 100));
    for (int8_t& x : c.v) x = static_cast<int8_t>(rng.uniform_int(-100, 100));
    c.causal = rng.uniform_int(0, 1) != 0;
    c.offset = c.kv_len - c.q_len;
    RunQS8Attention(&c);
    const std::vector<uint16_t> w0 = c.w;
    const std::vector<int8_t> o0 = c.out;
    const int dq = static_cast<int>(rng.uniform_int(-27, 27)), dk = static_cast<int>(rng.uniform_int(-27, 27)),
              dv = static_cast<int>(rng.uniform_int(-27, 27));
    for (int8_t& x : c.q) x = static_cast<int8_t>(x + dq);
    for (int8_t& x : c.k) x = static_cast<int8_t>(x + dk);
    for (int8_t& x : c.v) x = static_cast<int8_t>(x + dv);
    c.q_zp += dq;
    c.k_zp += dk;
    c.v_zp += dv;
    RunQS8Attention(&c);
    ASSERT_EQ(w0, c.w) << "seed " << seed << " probabilities depend on the zero points (dq " << dq << " dk " << dk << ")";
    ASSERT_EQ(o0, c.out) << "seed " << seed << " output depends on the zero points (dv " << dv << ")";
  }
}

TEST(QS8Attention, LimitZeroRowsGiveZeroPointAndZeroWeights) {
  Rng rng(0x0);
  QS8AttnCase c = MakeQS8AttnCase(rng, 5, 9, 8, 7);
  c.valid = 0;
  RunQS8Attention(&c);
  for (int r = 0; r < c.q_len; ++r) {
    for (int i = 0; i < c.vd; ++i) ASSERT_EQ(c.out[static_cast<size_t>(r) * c.o_stride + i], c.out_zp) << "row " << r;
    for (int j = 0; j < c.kv_len; ++j) ASSERT_EQ(c.w[static_cast<size_t>(r) * c.w_stride + j], 0) << "row " << r;
  }
  // causal offset -3: rows 0..2 see nothing, rows 3, 4 see 1, 2 keys.
  QS8AttnCase d = MakeQS8AttnCase(rng, 5, 9, 8, 7);
  d.causal = true;
  d.offset = -3;
  RunQS8Attention(&d);
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < d.vd; ++i) ASSERT_EQ(d.out[static_cast<size_t>(r) * d.o_stride + i], d.out_zp) << "row " << r;
    for (int j = 0; j < d.kv_len; ++j) ASSERT_EQ(d.w[static_cast<size_t>(r) * d.w_stride + j], 0) << "row " << r;
  }
  EXPECT_EQ(d.w[3 * static_cast<size_t>(d.w_stride)], 32767);  // one key: 1.0, capped at 32767
  Q15Stats stats;
  CheckQS8Attention(d, 0, &stats);
}

TEST(QS8Attention, PeakedRowsSaturateCleanly) {
  // Large scales: score differences reach millions of Q16 units (d and z
  // saturate); the winner gets 32767 (1.0, capped) and the rest exactly 0.
  Rng rng(0xBEAC);
  QS8AttnCase c = MakeQS8AttnCase(rng, 3, 40, 64, 5);
  c.s_q = c.s_k = 2.0;  // x differences ~ 4 * 255^2 * 8 per unit step
  RunQS8Attention(&c);
  Q15Stats stats;
  CheckQS8Attention(c, 0, &stats);
  for (int r = 0; r < c.q_len; ++r) {
    int winners = 0;
    for (int j = 0; j < c.kv_len; ++j) {
      const uint16_t p = c.w[static_cast<size_t>(r) * c.w_stride + j];
      ASSERT_TRUE(p == 0 || p == 32767) << "row " << r << " key " << j << " p " << p;
      winners += p == 32767;
    }
    ASSERT_EQ(winners, 1) << "row " << r;
  }
}

// -------------------------------------------------------- qs8_additive ----

TEST(QS8Additive, AgainstExactScoresAndFloat64) {
  Q15Stats tight_stats, loose_stats;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed * 0xADD8);
    const int ql = static_cast<int>(rng.uniform_int(1, 6));
    const int kv = static_cast<int>(rng.uniform_int(0, 3) == 0 ? rng.uniform_int(1, 1024) : rng.uniform_int(1, 40));
    const int ad = static_cast<int>(rng.uniform_int(1, 40));
    const int vd = static_cast<int>(rng.uniform_int(1, 24));
    const int valid = SampleValidLen(rng, kv);
    const int qs = ad + 1, ks = ad + 2, vs = vd + 1, os = vd + 1, ws = kv + 1;
    const double s_p = rng.log_uniform(0.002, 0.008);  // shared scale of qp and kp
    const int32_t qp_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t kp_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t pre_zp = static_cast<int32_t>(rng.uniform_int(-10, 10));
    // |(qp - zq) + (kp - zk)| <= 510; choosing r_pre <= (127 - |pre_zp|)/510
    // keeps the table index unsaturated, so the real error of the index is
    // <= s_t/2 (+ 2^-31 relative): the float64 comparison below relies on it.
    const double r_pre = (127.0 - std::abs(pre_zp)) / 510.0 * rng.uniform(0.9, 1.0);
    const double s_t = s_p / r_pre;
    int32_t pre_mult, pre_shift;
    ASSERT_TRUE(ek::quantize_multiplier(r_pre, &pre_mult, &pre_shift));
    int8_t table[256];
    for (int i = 0; i < 256; ++i) {
      table[i] = static_cast<int8_t>(std::lround(127.0 * std::tanh(s_t * ((i - 128) - pre_zp))));
    }
    // v weight scale (symmetric): sum_c |v_c| ~ sqrt(ad) * [0.5, 2], scores of O(1-10).
    const double s_vw = rng.log_uniform(0.5, 2.0) / (63.0 * std::sqrt(static_cast<double>(ad)));
    const double s_val = rng.log_uniform(0.005, 0.05);
    const double s_out = s_val * rng.log_uniform(0.5, 2.0);
    const int32_t val_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    const int32_t out_zp = static_cast<int32_t>(rng.uniform_int(-128, 127));
    int32_t score_mult, score_shift, pv_mult, pv_shift;
    // score = sum v_w * table: real = acc * s_vw / 127.
    ASSERT_TRUE(ek::quantize_multiplier(s_vw / 127.0 * kLog2E * 65536.0, &score_mult, &score_shift));
    ASSERT_TRUE(ek::quantize_multiplier(s_val / (32768.0 * s_out), &pv_mult, &pv_shift));
    std::vector<int8_t> qp(static_cast<size_t>(ql) * qs), kp(static_cast<size_t>(kv) * ks), vw(ad),
        vals(static_cast<size_t>(kv) * vs);
    for (int8_t& x : qp) x = rng.s8();
    for (int8_t& x : kp) x = rng.s8();
    for (int8_t& x : vw) x = static_cast<int8_t>(rng.uniform_int(-127, 127));
    for (int8_t& x : vals) x = rng.s8();
    std::vector<int8_t> out(static_cast<size_t>(ql) * os, kSentinel8);
    std::vector<uint16_t> w(static_cast<size_t>(ql) * ws, kSentinelQ15), ps(kv);
    std::vector<int32_t> sc(kv);
    ek::QS8AdditiveArgs a{};
    a.q_len = ql; a.kv_len = kv; a.attn_dim = ad; a.v_dim = vd;
    a.qp = qp.data(); a.qp_stride = qs; a.qp_zp = qp_zp;
    a.kp = kp.data(); a.kp_stride = ks; a.kp_zp = kp_zp;
    a.pre_mult = pre_mult; a.pre_shift = pre_shift; a.pre_zp = pre_zp;
    a.tanh_table = table; a.v_w = vw.data();
    a.score_mult = score_mult; a.score_shift = score_shift; a.pv_mult = pv_mult; a.pv_shift = pv_shift;
    a.values = vals.data(); a.values_stride = vs; a.values_zp = val_zp; a.out_zp = out_zp;
    a.kv_valid_len = valid;
    a.out = out.data(); a.out_stride = os;
    a.weights = w.data(); a.weights_stride = ws;
    a.scratch = sc.data(); a.prob_scratch = ps.data();
    ek::qs8_additive__ref(a);
    const int visible = std::min(valid, kv);
    for (int r = 0; r < ql; ++r) {
      // (1) tight: exact integer scores (index via the exact requant oracle,
      //     the test's own table), real args acc * s_vw / 127, delta = 0.
      // (2) loose: float64 tanh of the dequantized pre-activation; the table
      //     introduces |tanh error| <= s_t/2 (index rounding, slope <= 1)
      //     + 0.5/127 (table rounding) per element, so the score error is
      //     delta = sum_c |s_vw v_c| (s_t/2 + 0.5/127) (+1e-9 for the
      //     2^-31 multiplier error times |pre| <= 510 s_p).
      std::vector<double> x_exact(visible), x_float(visible);
      double delta = 0.0;
      for (int c = 0; c < ad; ++c) delta += std::fabs(s_vw * vw[c]) * (s_t / 2 + 0.5 / 127 + 1e-9);
      for (int j = 0; j < visible; ++j) {
        int64_t acc = 0;
        double xf = 0.0;
        for (int c = 0; c < ad; ++c) {
          const int32_t pre = (qp[static_cast<size_t>(r) * qs + c] - qp_zp) + (kp[static_cast<size_t>(j) * ks + c] - kp_zp);
          const int8_t idx = eatest::exact_requantize_s8(pre, pre_mult, pre_shift, pre_zp);
          acc += int64_t{vw[c]} * table[idx + 128];
          xf += s_vw * vw[c] * std::tanh(s_p * pre);
        }
        x_exact[j] = static_cast<double>(acc) * s_vw / 127.0;
        x_float[j] = xf;
      }
      const uint16_t* wr = w.data() + static_cast<size_t>(r) * ws;
      const int8_t* orow = out.data() + static_cast<size_t>(r) * os;
      CheckQ15Row("qs8_additive(exact scores)", seed, r, x_exact, 0.0, kv, wr, ws, vd, vals.data(), vs, val_zp, s_val,
                  s_out, out_zp, pv_mult, pv_shift, orow, os, &tight_stats);
      if (HasFatalFailure()) return;
      CheckQ15Row("qs8_additive(float64 tanh)", seed, r, x_float, delta, kv, wr, ws, vd, vals.data(), vs, val_zp,
                  s_val, s_out, out_zp, pv_mult, pv_shift, orow, os, &loose_stats);
      if (HasFatalFailure()) return;
    }
  }
  std::printf("qs8_additive vs exact scores: max |w err| %.3f LSB (%.2f of bound), max |out err| %.3f LSB (%.2f of bound)\n",
              tight_stats.max_w_err, tight_stats.max_w_ratio, tight_stats.max_o_err, tight_stats.max_o_ratio);
  std::printf("qs8_additive vs float64 tanh: max |w err| %.3f LSB (%.2f of bound), max |out err| %.3f LSB (%.2f of bound)\n",
              loose_stats.max_w_err, loose_stats.max_w_ratio, loose_stats.max_o_err, loose_stats.max_o_ratio);
}

}  // namespace
