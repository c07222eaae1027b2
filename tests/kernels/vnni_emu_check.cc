// Off-target check of the AVX-VNNI int8 linear (with and without the residual
// epilogue) and attention paths (the *-avxvnni.cc files) on CPUs
// without AVX-VNNI (this x86 host, qemu-x86_64 TCG): those files are compiled
// into this program with VPDPBUSD (and the tiled attention's VPDPWSSD)
// replaced by exact AVX2 emulations, under renamed symbols, and compared bit for bit with qs8_linear__ref on random
// shapes (ragged tails, tight and canonical strides, 1..5 rows, per-channel
// and per-tensor requantization, extreme multipliers). It proves the +128
// offset / activation-sum correction and the block/tail handling; the
// instruction itself is the documented VPDPBUSD. Built and run by
// scripts/stages/15-x86.sh; when the CPU has AVX-VNNI, simd_test runs the real
// thing. Exit code 0 = all equal.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

// Exact VPDPBUSD: acc[i] += sum_{t<4} u8(a[4i+t]) * s8(b[4i+t]) (wrapping).
static inline __m256i emu_dpbusd(__m256i acc, __m256i a, __m256i b) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i a_lo = _mm256_unpacklo_epi8(a, zero);
  const __m256i a_hi = _mm256_unpackhi_epi8(a, zero);
  const __m256i b_lo = _mm256_srai_epi16(_mm256_unpacklo_epi8(zero, b), 8);
  const __m256i b_hi = _mm256_srai_epi16(_mm256_unpackhi_epi8(zero, b), 8);
  // madd gives pair sums in byte order lo: {0,1},{2,3},..{6,7}; hi: {8,9}..{14,15}
  const __m256i p_lo = _mm256_madd_epi16(a_lo, b_lo);
  const __m256i p_hi = _mm256_madd_epi16(a_hi, b_hi);
  // dword i (bytes 4i..4i+3) = p[2i] + p[2i+1]; hadd keeps the 128-bit lanes.
  return _mm256_add_epi32(acc, _mm256_hadd_epi32(p_lo, p_hi));
}

// VPDPWSSD without saturation is VPMADDWD plus a wrapping add.
static inline __m256i emu_dpwssd(__m256i acc, __m256i a, __m256i b) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}
#define _mm256_dpbusd_avx_epi32 emu_dpbusd
#define _mm256_dpwssd_avx_epi32 emu_dpwssd
#define qs8_linear_acc__avxvnni qs8_linear_acc__avxvnni_emu
#define qs8_linear__avxvnni qs8_linear__avxvnni_emu
#define qs8_linear_res__avxvnni qs8_linear_res__avxvnni_emu
#define qs8_qk_rows2__avxvnni qs8_qk_rows2__avxvnni_emu
#define qs8_attention__avxvnni qs8_attention__avxvnni_emu
#define qs8_attention_tiled__avxvnni qs8_attention_tiled__avxvnni_emu
#define qs8_attention_tile_stages__avxvnni qs8_attention_tile_stages__avxvnni_emu
// NOLINTBEGIN(build/include): the real kernels, VPDPBUSD (and VPDPWSSD) emulated
#include "isa/x86/linear_avxvnni.cc"
#include "qs8-linear/qs8-linear-avxvnni.cc"
#include "qs8-linear-res/qs8-linear-res-avxvnni.cc"
#include "qs8-attention/qs8-attention-avxvnni.cc"
#include "qs8-attention-tile/qs8-attention-tile-stages-avxvnni.cc"
#include "qs8-attention/qs8-attention-tiled-avxvnni.cc"
// NOLINTEND(build/include)
#include "edgeattn/kernels/attention_tile.h"

#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"

namespace ek = edgeattn::kernels;

int main() {
  std::mt19937_64 rng(42);
  auto uni = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  // Instruction emulation self-check against a scalar definition.
  for (int it = 0; it < 1000; ++it) {
    alignas(32) uint8_t a[32];
    alignas(32) int8_t b[32];
    alignas(32) int32_t c[8], got[8];
    for (int i = 0; i < 32; ++i) { a[i] = static_cast<uint8_t>(uni(0, 255)); b[i] = static_cast<int8_t>(uni(-128, 127)); }
    for (int i = 0; i < 8; ++i) c[i] = uni(-1000000, 1000000);
    _mm256_store_si256(reinterpret_cast<__m256i*>(got),
                       emu_dpbusd(_mm256_load_si256(reinterpret_cast<const __m256i*>(c)),
                                  _mm256_load_si256(reinterpret_cast<const __m256i*>(a)),
                                  _mm256_load_si256(reinterpret_cast<const __m256i*>(b))));
    for (int i = 0; i < 8; ++i) {
      int32_t want = c[i];
      for (int t = 0; t < 4; ++t) want += a[4 * i + t] * b[4 * i + t];
      if (got[i] != want) { std::printf("emulation mismatch\n"); return 1; }
    }
  }
  const int kDims[] = {1, 3, 15, 16, 17, 31, 32, 33, 48, 60, 64, 100, 128, 256, 600};
  int cases = 0;
  for (int seed = 0; seed < 400; ++seed) {
    const int rows = uni(1, 9);
    const int out = uni(0, 2) ? uni(1, 150) : kDims[uni(0, 14)];
    const int in = uni(0, 1) ? kDims[uni(0, 14)] : uni(1, 600);
    const int x_stride = in + uni(0, 3);
    const int y_stride = out + uni(0, 3);
    // Packed K4N16 weights, padding random too (never used).
    std::vector<int8_t> x(static_cast<size_t>(rows) * x_stride), w(ek::packed_weight_bytes(out, in));
    for (auto& v : x) v = static_cast<int8_t>(uni(-128, 127));
    for (auto& v : w) v = static_cast<int8_t>(uni(-128, 127));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = uni(-(1 << 20), 1 << 20);
    const int per_channel = uni(0, 1);
    for (int n = 0; n < out; ++n) {
      if (uni(0, 19) == 0) {
        mult[n] = uni(1 << 30, INT32_MAX);
        shift[n] = uni(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else {
        const double r = std::exp(std::uniform_real_distribution<double>(std::log(1e-6), std::log(1e-1))(rng));
        if (!ek::quantize_multiplier(r, &mult[n], &shift[n])) return 2;
      }
    }
    const int32_t y_zp = uni(-128, 127);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A), got(want.size(), 0x5A);
    ek::qs8_linear__ref(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(),
                        shift.data(), per_channel, y_zp, want.data(), y_stride);
    ek::qs8_linear__avxvnni_emu(rows, out, in, x.data(), x_stride, w.data(), bias.data(),
                                mult.data(), shift.data(), per_channel, y_zp, got.data(), y_stride);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        std::printf("MISMATCH seed %d rows %d out %d in %d index %zu: %d vs %d\n", seed, rows,
                    out, in, i, got[i], want[i]);
        return 1;
      }
    }
    // The same sums through the residual epilogue (contract 5b): a residual
    // with its own stride, n over 1..16, A over its range, both zero points
    // over int8.
    const int r_stride = out + uni(0, 5);
    std::vector<int8_t> res(static_cast<size_t>(rows - 1) * r_stride + out);
    for (auto& v : res) v = static_cast<int8_t>(uni(-128, 127));
    ek::ResidualTerm term = {};
    term.shift = uni(1, ek::kResidualMaxShift);
    term.mult = uni(0, 9) == 0 ? uni(0, ek::kResidualMaxMultiplier)
                               : std::min(ek::kResidualMaxMultiplier, uni(1 << (term.shift - 1), 3 << term.shift));
    term.a_zp = uni(-128, 127);
    term.y_zp = y_zp;
    for (int n = 0; n < out; ++n) {  // the projection's multiplier times 2^n
      if (uni(0, 19) != 0 && !ek::quantize_multiplier(std::ldexp(std::exp(std::uniform_real_distribution<double>(
                                                                     std::log(1e-6), std::log(1e-1))(rng)),
                                                                 term.shift),
                                                      &mult[n], &shift[n])) {
        return 2;
      }
    }
    const ek::QS8Residual r = {res.data(), r_stride, term};
    std::fill(want.begin(), want.end(), 0x5A);
    std::fill(got.begin(), got.end(), 0x5A);
    ek::qs8_linear_res__ref(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(),
                            shift.data(), per_channel, r, want.data(), y_stride);
    ek::qs8_linear_res__avxvnni_emu(rows, out, in, x.data(), x_stride, w.data(), bias.data(),
                                    mult.data(), shift.data(), per_channel, r, got.data(), y_stride);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        std::printf("RESIDUAL MISMATCH seed %d rows %d out %d in %d n %d index %zu: %d vs %d\n", seed,
                    rows, out, in, term.shift, i, got[i], want[i]);
        return 1;
      }
    }
    ++cases;
  }
  std::printf("avxvnni (emulated VPDPBUSD) qs8_linear and qs8_linear_res == ref on %d random cases\n", cases);

  // Attention (the VNNI Q.K step inside the avx2 driver): head dims around
  // the 32-byte blocks, both masks, random zero points and sharpness.
  const int kHeadDims[] = {1, 8, 15, 16, 31, 32, 33, 48, 63, 64, 65, 96, 128};
  int attn_cases = 0;
  for (int seed = 0; seed < 300; ++seed) {
    ek::QS8AttentionArgs a = {};
    // 1..9 rows: the row kernel and small tiles; up to 40: several 8-row tiles.
    a.q_len = uni(0, 2) ? uni(1, 9) : uni(1, 40);
    a.kv_len = uni(0, 3) ? uni(1, 70) : uni(1, 1100);
    a.head_dim = kHeadDims[uni(0, 12)];
    a.v_dim = uni(0, 1) ? a.head_dim : uni(1, 40);
    a.q_stride = a.head_dim + uni(0, 9);
    a.k_stride = a.head_dim + uni(0, 9);
    a.v_stride = a.v_dim + uni(0, 9);
    a.q_zp = uni(-128, 127);
    a.k_zp = uni(-128, 127);
    a.v_zp = uni(-128, 127);
    a.out_zp = uni(-128, 127);
    const double sharp = std::exp(std::uniform_real_distribution<double>(std::log(1e-2), std::log(1e4))(rng));
    if (!ek::quantize_multiplier(sharp / (std::sqrt(a.head_dim) * 128.0 * 128.0) * 65536.0,
                                 &a.score_mult, &a.score_shift)) return 2;
    if (!ek::quantize_multiplier(1.0 / 32768.0, &a.pv_mult, &a.pv_shift)) return 2;
    a.causal = uni(0, 1) != 0;
    a.causal_offset = a.kv_len - a.q_len;
    a.kv_valid_len = uni(0, 1) ? a.kv_len : uni(0, a.kv_len);
    std::vector<int8_t> q(static_cast<size_t>(a.q_len) * a.q_stride), k(static_cast<size_t>(a.kv_len) * a.k_stride),
        v(static_cast<size_t>(a.kv_len) * a.v_stride);
    for (auto* t : {&q, &k, &v}) for (auto& x : *t) x = static_cast<int8_t>(uni(-128, 127));
    a.q = q.data(); a.k = k.data(); a.v = v.data();
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    std::vector<int32_t> scratch(a.kv_len);
    std::vector<uint16_t> probs(a.kv_len);
    a.scratch = scratch.data();
    a.prob_scratch = probs.data();
    std::vector<int8_t> want(static_cast<size_t>(a.q_len) * a.out_stride), got(want.size());
    std::vector<uint16_t> want_w(static_cast<size_t>(a.q_len) * a.kv_len), got_w(want_w.size());
    a.out = want.data(); a.weights = want_w.data();
    ek::qs8_attention__ref(a);
    a.out = got.data(); a.weights = got_w.data();
    ek::qs8_attention__avxvnni_emu(a);
    if (got != want || got_w != want_w) {
      std::printf("ATTENTION MISMATCH seed %d q %d kv %d hd %d\n", seed, a.q_len, a.kv_len, a.head_dim);
      return 1;
    }
    // The tiled kernel (4+ rows), with tile scratch full of garbage.
    std::vector<uint8_t> tile(ek::qs8_attention_tile_bytes(a.kv_len, a.head_dim, a.v_dim), 0xA5);
    a.tile_scratch = tile.data();
    std::fill(got.begin(), got.end(), 0x5A);
    std::fill(got_w.begin(), got_w.end(), 0xBEEF);
    ek::qs8_attention_tiled__avxvnni_emu(a);
    if (got != want || got_w != want_w) {
      std::printf("TILED ATTENTION MISMATCH seed %d q %d kv %d hd %d\n", seed, a.q_len, a.kv_len, a.head_dim);
      return 1;
    }
    ++attn_cases;
  }
  std::printf("avxvnni (emulated VPDPBUSD and VPDPWSSD) qs8_attention == ref on %d random cases\n", attn_cases);
  return 0;
}
