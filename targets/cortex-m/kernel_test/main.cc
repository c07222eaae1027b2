// Firmware unit test: the build's selected qs8_linear, qs8_linear_res and
// qs8_linear_res16 (cmsis-dsp on M4, helium on M55; qs16_layernorm, tested
// below, likewise), its attention score row, its integer softmax (both list
// entries, on rows of 1..70 keys; the rows' 32-bit normalizer on sums of
// every bit length), its weighted sum (qs8_pv_row), its
// additive layer and requant_cm.h's requantization against the reference
// kernels, bit for bit. The linear on random shapes:
// in_features 1..80 (ragged tails of every length mod 4 and mod 16), packed
// K4N16 weights with random padding, misaligned activation rows, row
// strides > in_features, per-tensor and
// per-channel requantization with shifts on both sides of requant_cm.h's
// fast form (n = 31 - shift >= 32), and the extreme int8 values; both
// projections also on larger shapes (up to 13 rows, 40 channels, 600
// inputs: the DSP kernel's row triples, its widened weights at 7 rows or
// more and up to 259 inputs, Helium's six-row passes). The
// transformer blocks' LayerNorm and activation table on ragged widths,
// zero-variance and extreme rows; the 16-bit residual stream's projection
// and LayerNorm (int16 ends, in place, every LayerNorm row shift); on Helium
// the LayerNorm's row scale alone, at the ends of its square root and division;
// the element-wise narrowing and adds (qs16_narrow, qs8_add, qs8_add16).
#include <cstring>

#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "isa/cortex-m/cortexm.h"
#include "isa/cortex-m/requant_cm.h"
#include "microkernels.h"
#include "platform.h"

namespace {

using namespace edgeattn::kernels;

uint32_t g_state = 0x12345678u;
uint32_t next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 17;
  g_state ^= g_state << 5;
  return g_state;
}
int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint32_t>(hi - lo + 1)); }

alignas(16) int8_t g_x[4 * 96 + 16];
alignas(16) int8_t g_w[16 * 120];  // packed K4N16: up to 12 channels x 80 inputs; 12 keys of up to 148 bytes
int32_t g_bias[12], g_mult[12], g_shift[12];
int8_t g_y_ref[4 * 16], g_y[4 * 16];
int8_t g_res[4 * 20 + 16];  // qs8_linear_res: up to 4 rows, stride up to 20, offset up to 15
alignas(16) int8_t g_v[24 * 24 + 4];  // P.V values: up to 24 keys, row stride up to 24
alignas(16) uint16_t g_p[25];
// Larger projections: several 16-channel blocks, long rows (in_features up
// to 600) and up to 13 rows (the DSP kernel's row triples and its
// overlapping last pass, its widened weights from 7 rows on with buffers
// of 128 B to 8 KiB, and the int8 loop past 259 inputs; Helium's six-row
// passes and the pairs after them).
constexpr int kBigRows = 13, kBigOut = 40, kBigIn = 600;
alignas(16) int8_t g_big_x[kBigRows * (kBigIn + 8) + 16];
alignas(16) int8_t g_big_w[packed_weight_bytes(kBigOut, kBigIn)];
int32_t g_big_bias[kBigOut], g_big_mult[kBigOut], g_big_shift[kBigOut];
int8_t g_big_res[kBigRows * kBigOut], g_big_y_ref[kBigRows * kBigOut], g_big_y[kBigRows * kBigOut];
// qs16_layernorm: up to 4 rows of up to 600 int16 (stride up to 604, offset up to 3).
int16_t g_ln16_x[4 * 604 + 4], g_ln16_xcopy[4 * 604 + 4], g_ln16_y16_ref[4 * 604 + 4], g_ln16_y16[4 * 604 + 4];
int8_t g_ln16_y8_ref[4 * 604], g_ln16_y8[4 * 604];
int16_t g_ln16_gain[600];
int32_t g_ln16_bias[600];
// qs8_linear_res16: residual and outputs of up to 13 rows of 40 channels, stride up to 42.
int16_t g_res16[kBigRows * (kBigOut + 2)], g_y16_ref[kBigRows * (kBigOut + 2)], g_y16[kBigRows * (kBigOut + 2)];
// Additive layers: up to 4 query rows, 12 keys, attn_dim 20, v_dim 12.
int8_t g_qp[4 * 20], g_kp[12 * 20], g_vals[12 * 12], g_table[256], g_vw[20], g_covw[20];
int8_t g_out_ref[4 * 12], g_out[4 * 12];
uint16_t g_wt_ref[4 * 12], g_wt[4 * 12], g_probs[12];
int32_t g_scores[12], g_cov_ref[12], g_cov[12];
// Softmax rows: up to 70 keys (every length mod 4 and mod 8), probabilities
// at an odd halfword offset too.
constexpr int kSoftmaxMax = 70;
int32_t g_row[kSoftmaxMax];
uint16_t g_e_ref[kSoftmaxMax + 1], g_e[kSoftmaxMax + 1];

// A score row of n keys in one of several shapes: random over a chosen
// spread (from all keys alive to all but the maximum dead), equal scores
// (the largest row sums), the int32 extremes (d up to 2^32 - 1), one key far
// above the rest (a row sum below 2^17: the normalizers' other form).
// The end of a failing linear trial's line: its shape.
void write_linear_shape(int rows, int out, int in) {
  ea_cm::write(" rows ");
  ea_cm::write_int(rows);
  ea_cm::write(" out ");
  ea_cm::write_int(out);
  ea_cm::write(" in_features ");
  ea_cm::write_int(in);
  ea_cm::write_line("");
}

void fill_scores(int n, int kind) {
  const uint32_t spread = 1u << range(0, 31);
  for (int j = 0; j < n; ++j) {
    switch (kind) {
      case 0: g_row[j] = 1234; break;
      case 1: g_row[j] = next() & 1 ? INT32_MIN : INT32_MAX; break;
      case 2: g_row[j] = j == n / 2 ? 1 << 30 : -(1 << 30) + range(-1000, 1000); break;
      default: g_row[j] = static_cast<int32_t>(next() % spread) - static_cast<int32_t>(spread / 2); break;
    }
  }
}

// An exact 32-bit requantization case for requant_cm.h: a random accumulator
// (sometimes an extreme), multiplier in [2^30, 2^31) and shift in [-31, 30].
int32_t pick_acc() {
  switch (next() % 8) {
    case 0: return INT32_MIN;
    case 1: return INT32_MAX;
    case 2: return static_cast<int32_t>(next() % 1025u) - 512;
    default: return static_cast<int32_t>(next());
  }
}

// LayerNorm and table buffers: up to 4 rows of 100 (stride up to 108) or
// one row of up to 1040.
constexpr int kBlockMax = 4 * 108 + 1040;
alignas(16) int8_t g_bx[kBlockMax], g_by_ref[kBlockMax], g_by[kBlockMax];
alignas(16) int16_t g_gain[1040];
alignas(16) int32_t g_lbias[1040];
int8_t g_lut[256];

// One LayerNorm input row in one of several shapes: random, constant (zero
// variance: the output is the bias), the int8 extremes alternating (the
// largest variance), one extreme value among zeros, a narrow spread.
void fill_ln_row(int8_t* x, int d, int kind) {
  const int8_t c = static_cast<int8_t>(next());
  for (int i = 0; i < d; ++i) {
    switch (kind) {
      case 0: x[i] = c; break;
      case 1: x[i] = i & 1 ? 127 : -128; break;
      case 2: x[i] = i == d / 2 ? (c < 0 ? -128 : 127) : 0; break;
      case 3: x[i] = static_cast<int8_t>(c / 2 + range(-1, 1)); break;
      default: x[i] = static_cast<int8_t>(next()); break;
    }
  }
}

bool same(const int8_t* a, const int8_t* b, int n) { return std::memcmp(a, b, static_cast<size_t>(n)) == 0; }

}  // namespace

int main() {
  const KernelTable& t = kernels();
  ea_cm::write("qs8_linear: path ");
  ea_cm::write(t.name);
  ea_cm::write_line(" vs ref (and its attention score row, softmax and weighted sum)");
  int passed = 0, failed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int rows = range(1, 4), out = range(1, 12), in = range(1, 80);
    const int x_stride = in + range(0, 16);
    const int x_off = range(0, 15);
    const bool extreme = trial % 10 == 0;
    for (int8_t& v : g_x) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    // Random packed weights, padding included (kernels must not depend on it).
    for (int8_t& v : g_w) v = static_cast<int8_t>(extreme ? (next() & 1 ? -127 : 127) : next());
    for (int n = 0; n < 12; ++n) {
      g_bias[n] = range(-40000, 40000);
      g_mult[n] = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      g_shift[n] = range(-20, 1);  // n = 31 - shift from 30 to 51 (requant_cm.h: n >= 33, 32, < 32)
    }
    const int per_channel = trial & 1;
    const int32_t zp = range(-128, 127);
    std::memset(g_y_ref, 0, sizeof g_y_ref);
    std::memset(g_y, 0, sizeof g_y);
    qs8_linear__ref(rows, out, in, g_x + x_off, x_stride, g_w, g_bias, g_mult, g_shift,
                    per_channel, zp, g_y_ref, 16);
    t.qs8_linear(rows, out, in, g_x + x_off, x_stride, g_w, g_bias, g_mult, g_shift,
                 per_channel, zp, g_y, 16);
    if (std::memcmp(g_y, g_y_ref, sizeof g_y) == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" in_features ");
      ea_cm::write_int(in);
      ea_cm::write_line("");
    }
  }
  // qs8_linear_res (contract 5b) vs its reference on the same ragged shapes,
  // with terms as the converter makes them (A about 2^n times s_a / s_y,
  // C from random zero points) so the outputs are mostly not saturated and
  // the requantized sum's last bits reach them (n 1..3 in half the trials),
  // or A at its maximum 2^20 - 1. Shifts: the residual's usual -1..30 with
  // the projection's sum about n - 8 bits above an output step (with
  // multipliers below 2^30 too in some trials), <= -2 only, both mixed,
  // anything in [-24, 30], or -1..2 on small sums; biases up to 2^30 in a
  // third of the channels so the clamp to 2^29 binds; the int8 extremes.
#if EA_CM_SIMD
  if (t.qs8_linear_res == qs8_linear_res__ref) {
    ++failed;
    ea_cm::write_line("FAIL linear_res: the table holds the reference");
  }
#endif
  for (int trial = 0; trial < 960; ++trial) {
    const int rows = range(1, 4), out = range(1, 12), in = range(1, 80);
    const int x_stride = in + range(0, 16), x_off = range(0, 15);
    const int res_stride = out + range(0, 8), res_off = range(0, 15);
    const bool extreme = trial % 10 == 0;
    for (int8_t& v : g_x) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    for (int8_t& v : g_w) v = static_cast<int8_t>(extreme ? (next() & 1 ? -127 : 127) : next());
    for (int8_t& v : g_res) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    const int kind = (trial >> 2) % 6;  // see above: usual, small multipliers, <= -2, mixed, anything, fine
    const bool fine = kind == 5;
    if (fine) {  // small sums at shifts -1..2: every bit of the rmul form's result reaches the output
      for (int8_t& v : g_x) v = static_cast<int8_t>(range(-2, 2));
      for (int8_t& v : g_w) v = static_cast<int8_t>(range(-2, 2));
    }
    const int32_t sh = fine || trial & 2 ? range(1, 3) : range(1, kResidualMaxShift);
    for (int n = 0; n < 12; ++n) {
      g_bias[n] = fine ? range(-50, 50) : next() % 3 == 0 ? range(-(1 << 30), 1 << 30) : range(-40000, 40000);
      g_mult[n] = kind == 1 && next() % 3 == 0 ? range(1, (1 << 30) - 1)
                                               : static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      const int usual = sh - 8 + range(-4, 4) < -1 ? -1 : sh - 8 + range(-4, 4);
      const int right = range(-24, -2);
      g_shift[n] = kind <= 1 ? usual
                   : kind == 2 ? right
                   : kind == 3 ? (next() & 1 ? usual : right)
                   : kind == 4 ? range(-24, 30) : range(-1, 2);
    }
    const int per_channel = trial & 1;
    const int32_t a_top = sh + 3 >= 20 ? kResidualMaxMultiplier : (1 << (sh + 3)) - 1;
    const int32_t a_mult = extreme || trial % 16 == 5 ? kResidualMaxMultiplier : range(0, a_top);
    const int32_t zp_a = range(-128, 127), zp_y = range(-128, 127);
    const QS8Residual res = {g_res + res_off, res_stride, ResidualTerm{a_mult, sh, zp_a, zp_y}};
    std::memset(g_y_ref, 0x5A, sizeof g_y_ref);
    std::memset(g_y, 0x5A, sizeof g_y);
    qs8_linear_res__ref(rows, out, in, g_x + x_off, x_stride, g_w, g_bias, g_mult, g_shift, per_channel, res,
                        g_y_ref, 16);
    t.qs8_linear_res(rows, out, in, g_x + x_off, x_stride, g_w, g_bias, g_mult, g_shift, per_channel, res, g_y,
                     16);
    if (same(g_y, g_y_ref, static_cast<int>(sizeof g_y))) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL linear_res trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" in_features ");
      ea_cm::write_int(in);
      ea_cm::write_line("");
    }
  }
  // Both projections on larger shapes (kBig*): out_features up to 40 (three
  // blocks of 16, ragged), in_features up to 600 (ragged), 1 to 13 rows,
  // shifts on both sides of the fast forms.
  for (int trial = 0; trial < 128; ++trial) {
    const int rows = range(1, kBigRows), out = range(1, kBigOut);
    const int in = trial % 4 == 0 ? range(1, 80) : range(200, kBigIn);
    const int x_stride = in + range(0, 8);
    const bool extreme = trial % 8 == 0;
    for (int8_t& v : g_big_x) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    for (int8_t& v : g_big_w) v = static_cast<int8_t>(extreme ? (next() & 1 ? -127 : 127) : next());
    for (int8_t& v : g_big_res) v = static_cast<int8_t>(next());
    const bool res_trial = trial & 2;
    for (int n = 0; n < kBigOut; ++n) {
      g_big_bias[n] = range(-40000, 40000);
      g_big_mult[n] = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      // Every third plain trial: every shift in the DSP store's folded form
      // (-23..-2), its ends included; every other residual trial: every
      // channel in requant_cm.h's residual_rmul_form (shift >= -1).
      g_big_shift[n] = res_trial ? (trial % 4 == 2 ? range(-1, 12) : range(-12, 12))
                               : trial % 3 == 1 ? range(-23, -2) : range(-25, 1);
    }
    const int per_channel = trial & 1;
    const int32_t zp = range(-128, 127);
    const QS8Residual res = {g_big_res, out, ResidualTerm{range(0, 1 << 18), range(1, kResidualMaxShift),
                                                          range(-128, 127), zp}};
    std::memset(g_big_y_ref, 0x5A, sizeof g_big_y_ref);
    std::memset(g_big_y, 0x5A, sizeof g_big_y);
    if (res_trial) {
      qs8_linear_res__ref(rows, out, in, g_big_x, x_stride, g_big_w, g_big_bias, g_big_mult, g_big_shift,
                          per_channel, res, g_big_y_ref, out);
      t.qs8_linear_res(rows, out, in, g_big_x, x_stride, g_big_w, g_big_bias, g_big_mult, g_big_shift, per_channel,
                       res, g_big_y, out);
    } else {
      qs8_linear__ref(rows, out, in, g_big_x, x_stride, g_big_w, g_big_bias, g_big_mult, g_big_shift, per_channel,
                      zp, g_big_y_ref, out);
      t.qs8_linear(rows, out, in, g_big_x, x_stride, g_big_w, g_big_bias, g_big_mult, g_big_shift, per_channel, zp,
                   g_big_y, out);
    }
    if (same(g_big_y, g_big_y_ref, static_cast<int>(sizeof g_big_y))) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write(res_trial ? "FAIL big linear_res trial " : "FAIL big linear trial ");
      ea_cm::write_int(trial);
      write_linear_shape(rows, out, in);
    }
  }
  // qs8_linear_res16 (contract 5c, the int16 residual stream) vs its
  // reference: small ragged shapes (1..4 rows, 1..12 channels, 1..80
  // inputs, misaligned rows, strides) and the large ones (up to 13 rows, 40
  // channels, 600 inputs); residuals at the int16 ends in some trials, n
  // 1..13 with A about 2^n (or 0, or 2^13), shifts from the usual projection
  // range to anything in [-24, 30] (every channel in residual_rmul_form in a
  // quarter of the trials), biases past the 2^29 clamp in a third of
  // the channels; every fourth trial in place (y is the residual), others
  // at residual stride 0 (one row for every output row, never written; half
  // of those contract 5c-out: a zero row, A = 0, n = 13).
#if EA_CM_SIMD
  if (t.qs8_linear_res16 == qs8_linear_res16__ref) {
    ++failed;
    ea_cm::write_line("FAIL linear_res16: the table holds the reference");
  }
#endif
  for (int trial = 0; trial < 600; ++trial) {
    const bool big = trial % 5 == 4;
    const int rows = big ? range(1, kBigRows) : range(1, 4), out = big ? range(1, kBigOut) : range(1, 12);
    const int in = big ? range(1, kBigIn) : range(1, 80);
    const int x_stride = in + range(0, 8), x_off = big ? 0 : range(0, 15);
    const int y_stride = out + range(0, 2);  // g_y16's rows: up to kBigOut + 2
    // Stride 0 also in a twelfth of the residual_rmul_form trials (kind 3
    // below: the DSP's whole passes, Helium's six-row passes), not in place.
    const bool stride0 = trial % 4 == 1 || trial % 12 == 11, out_row = stride0 && trial / 4 % 2 == 0;
    const bool extreme = trial % 10 == 0, in_place = trial % 4 == 3 && !stride0;
    int8_t* xb = big ? g_big_x : g_x;
    int8_t* wb = big ? g_big_w : g_w;
    const int xn = big ? static_cast<int>(sizeof g_big_x) : static_cast<int>(sizeof g_x);
    const int wn = big ? static_cast<int>(sizeof g_big_w) : static_cast<int>(sizeof g_w);
    for (int i = 0; i < xn; ++i) xb[i] = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    for (int i = 0; i < wn; ++i) wb[i] = static_cast<int8_t>(extreme ? (next() & 1 ? -127 : 127) : next());
    const int ends = range(0, 2);  // residuals: uniform, mixed with the int16 ends, or the ends only
    for (int16_t& v : g_res16) {
      const bool end = ends == 2 || (ends == 1 && next() % 3 == 0);
      v = static_cast<int16_t>(end ? (next() & 1 ? -32768 : 32767) : static_cast<int16_t>(next()));
      if (out_row) v = 0;
    }
    const int32_t sh = out_row ? kResidual5cOutShift : trial % 7 == 0 ? 13 : range(1, kResidual16MaxShift);
    const int32_t a_mult = out_row ? 0 : trial % 9 == 1 ? 0 : trial % 9 == 2 ? kResidual16MaxMultiplier
                         : range(1 << (sh - 1), (1 << sh) + (1 << (sh - 1)) > kResidual16MaxMultiplier
                                                   ? kResidual16MaxMultiplier : (1 << sh) + (1 << (sh - 1)));
    // Shifts: the projection's usual, anything, <= -2 only, or every channel
    // in residual_rmul_form (-1..12: the DSP store's whole-pass form).
    const int kind = trial % 4;
    for (int n = 0; n < kBigOut; ++n) {
      g_big_bias[n] = next() % 3 == 0 ? range(-(1 << 30), 1 << 30) : range(-40000, 40000);
      g_big_mult[n] = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      g_big_shift[n] = kind == 0 ? range(sh - 12, sh - 4)
                       : kind == 1 ? range(-24, 30) : kind == 2 ? range(-24, -2) : range(-1, 12);
    }
    const int per_channel = trial & 1;
    std::memcpy(g_y16_ref, g_res16, sizeof g_res16);
    std::memcpy(g_y16, g_res16, sizeof g_res16);
    if (!in_place) {
      for (int16_t& v : g_y16_ref) v = 0x5A5A;
      for (int16_t& v : g_y16) v = 0x5A5A;
    }
    const int r_stride = stride0 ? 0 : y_stride;
    const QS16Residual res_ref = {in_place ? g_y16_ref : g_res16, r_stride, Residual16Term{a_mult, sh}};
    const QS16Residual res_got = {in_place ? g_y16 : g_res16, r_stride, Residual16Term{a_mult, sh}};
    uint32_t res_sum = 0;  // the residual row's bytes, unchanged by the variant (stride 0 only reads it)
    for (int i = 0; i < out; ++i) res_sum = res_sum * 31u + static_cast<uint16_t>(g_res16[i]);
    qs8_linear_res16__ref(rows, out, in, xb + x_off, x_stride, wb, g_big_bias, g_big_mult, g_big_shift, per_channel,
                          res_ref, g_y16_ref, y_stride);
    t.qs8_linear_res16(rows, out, in, xb + x_off, x_stride, wb, g_big_bias, g_big_mult, g_big_shift, per_channel,
                       res_got, g_y16, y_stride);
    uint32_t res_after = 0;
    for (int i = 0; i < out; ++i) res_after = res_after * 31u + static_cast<uint16_t>(g_res16[i]);
    if (!in_place && res_after != res_sum) {
      ++failed;
      ea_cm::write("FAIL linear_res16 wrote its residual, trial ");
      ea_cm::write_int(trial);
      write_linear_shape(rows, out, in);
    } else if (std::memcmp(g_y16, g_y16_ref, sizeof g_y16) == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL linear_res16 trial ");
      ea_cm::write_int(trial);
      for (int i = 0; i < static_cast<int>(sizeof g_y16 / 2); ++i) {
        if (g_y16[i] != g_y16_ref[i]) {
          ea_cm::write(" index ");
          ea_cm::write_int(i);
          ea_cm::write(" got ");
          ea_cm::write_int(g_y16[i]);
          ea_cm::write(" want ");
          ea_cm::write_int(g_y16_ref[i]);
          ea_cm::write(" A ");
          ea_cm::write_int(a_mult);
          ea_cm::write(" n ");
          ea_cm::write_int(sh);
          ea_cm::write(" shift ");
          ea_cm::write_int(g_big_shift[per_channel ? i % y_stride : 0]);
          ea_cm::write(" ystride ");
          ea_cm::write_int(y_stride);
          break;
        }
      }
      write_linear_shape(rows, out, in);
    }
  }
  // qs16_layernorm (contract 4b) vs its reference: widths 1..80 (odd ones:
  // the last element alone) and up to 600, 1..4 rows at odd halfword
  // offsets and strides, rows uniform, at the int16 corners, constant
  // (zero variance), constant but one element off by one, narrow, or one
  // outlier at an int16 end; eps terms 1, 2^0..2^60 or log-uniform; gains at
  // the int16 ends, biases up to 2^30; the int8 output, the int16 one or
  // both, and in place (y16 == x) every fifth trial.
#if EA_CM_SIMD
  if (t.qs16_layernorm == qs16_layernorm__ref) {
    ++failed;
    ea_cm::write_line("FAIL qs16_layernorm: the table holds the reference");
  }
#endif
  for (int trial = 0; trial < 600; ++trial) {
    const int rows = range(1, 4), dim = trial % 10 == 9 ? range(200, 600) : range(1, 80);
    const int x_stride = dim + range(0, 5), x_off = range(0, 3), y_stride = dim + range(0, 5);
    const int kind = trial % 6;
    for (int r = 0; r < rows; ++r) {
      int16_t* xr = g_ln16_x + x_off + r * x_stride;
      const int32_t base = range(-32768, 32767), spread = range(1, 400);
      for (int i = 0; i < dim; ++i) {
        const int32_t v = kind == 0   ? range(-32768, 32767)
                          : kind == 1 ? (next() & 1 ? -32768 : 32767)
                          : kind == 4 ? base + range(-spread, spread)
                                      : base;
        xr[i] = static_cast<int16_t>(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
      }
      if (kind == 3) xr[range(0, dim - 1)] = static_cast<int16_t>(base == 32767 ? 32766 : base + 1);
      if (kind == 5) xr[range(0, dim - 1)] = static_cast<int16_t>(base < 0 ? 32767 : -32768);
    }
    const bool corners = next() & 1;
    for (int i = 0; i < dim; ++i) {
      g_ln16_gain[i] = static_cast<int16_t>(corners && (next() & 1) ? (next() & 1 ? 32767 : -32768) : next());
      g_ln16_bias[i] = next() & 1 ? range(-(1 << 30), 1 << 30) : range(-4000, 4000);
    }
    const int e = range(0, 3);
    const int64_t eps = e == 0 ? 1 : e == 1 ? int64_t{1} << range(0, 60)
                                            : (int64_t{1} << range(0, 49)) + static_cast<int64_t>(next());
    const int outs = range(1, 3);  // 1: int8, 2: int16, 3: both
    const bool in_place = trial % 5 == 4 && outs != 1;
    QS16LayerNormArgs a{};
    a.rows = rows;
    a.dim = dim;
    a.x = g_ln16_x + x_off;
    a.x_stride = x_stride;
    a.eps_term = eps;
    a.gain = g_ln16_gain;
    a.bias = g_ln16_bias;
    a.mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.shift = range(-31, -8);
    a.y_zp = range(-128, 127);
    a.mult16 = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.shift16 = range(-24, 0);
    std::memcpy(g_ln16_xcopy, g_ln16_x, sizeof g_ln16_x);
    std::memset(g_ln16_y8_ref, 0x5A, sizeof g_ln16_y8_ref);
    std::memset(g_ln16_y8, 0x5A, sizeof g_ln16_y8);
    for (int16_t& v : g_ln16_y16_ref) v = 0x5A5A;
    QS16LayerNormArgs ref = a;
    ref.y8 = outs & 1 ? g_ln16_y8_ref : nullptr;
    ref.y8_stride = y_stride;
    ref.y16 = outs & 2 ? g_ln16_y16_ref : nullptr;
    ref.y16_stride = y_stride;
    if (in_place) {  // both write over their own copy of x
      std::memcpy(g_ln16_y16_ref, g_ln16_x + x_off, sizeof(int16_t) * static_cast<size_t>((rows - 1) * x_stride + dim));
      ref.x = g_ln16_y16_ref;
      ref.y16_stride = x_stride;
    }
    qs16_layernorm__ref(ref);
    QS16LayerNormArgs got = a;
    got.y8 = outs & 1 ? g_ln16_y8 : nullptr;
    got.y8_stride = y_stride;
    got.y16 = outs & 2 ? (in_place ? g_ln16_x + x_off : g_ln16_y16) : nullptr;
    got.y16_stride = in_place ? x_stride : y_stride;
    if (!in_place) {
      for (int16_t& v : g_ln16_y16) v = 0x5A5A;
    }
    t.qs16_layernorm(got);
    const int16_t* got16 = in_place ? g_ln16_x + x_off : g_ln16_y16;
    const size_t n16 = in_place ? static_cast<size_t>((rows - 1) * x_stride + dim) : sizeof g_ln16_y16 / 2;
    const bool same16 = std::memcmp(got16, g_ln16_y16_ref, n16 * 2) == 0;
    const bool same8 = std::memcmp(g_ln16_y8, g_ln16_y8_ref, sizeof g_ln16_y8) == 0;
    const bool x_kept = in_place || std::memcmp(g_ln16_x, g_ln16_xcopy, sizeof g_ln16_x) == 0;
    if (same16 && same8 && x_kept) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL qs16_layernorm trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" rows ");
      ea_cm::write_int(rows);
      ea_cm::write(" dim ");
      ea_cm::write_int(dim);
      ea_cm::write(same16 ? "" : " int16");
      ea_cm::write(same8 ? "" : " int8");
      ea_cm::write_line(x_kept ? "" : " x changed");
    }
  }
  // qs16_layernorm on every row shift s of contract 4b (the Helium step 4
  // scales c by 2^(33 - s) below s = 33 and shifts its high word right above;
  // the DSP form changes at 33 too): one row of 1..600 elements, eps terms
  // 2^0..2^60, rows uniform, narrow, constant or with one outlier, both
  // outputs; at least kMinRowShifts of the shifts 2..53 reached.
  {
    constexpr int kMinRowShifts = 40;
    bool seen[64] = {};
    int trial = 0, fails = 0;
    constexpr int kDims[] = {1, 2, 3, 17, 100, 600};
    for (int dim : kDims) {
      for (int e = 0; e <= 60; ++e) {
        for (int kind = 0; kind < 4; ++kind, ++trial) {
          const int32_t base = range(-30000, 30000), spread = kind == 1 ? range(1, 8) : range(1, 3000);
          int32_t sum = 0;
          int64_t sum_sq = 0;
          for (int i = 0; i < dim; ++i) {
            const int32_t v = kind == 0 ? range(-32768, 32767) : kind == 2 ? base : base + range(-spread, spread);
            g_ln16_x[i] = static_cast<int16_t>(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
          }
          if (kind == 3) g_ln16_x[range(0, dim - 1)] = static_cast<int16_t>(base < 0 ? 32767 : -32768);
          for (int i = 0; i < dim; ++i) {
            sum += g_ln16_x[i];
            sum_sq += static_cast<int32_t>(g_ln16_x[i]) * g_ln16_x[i];
            g_ln16_gain[i] = static_cast<int16_t>(next());
            g_ln16_bias[i] = range(-(1 << 20), 1 << 20);
          }
          const int64_t eps = int64_t{1} << e;
          const int row_shift = layernorm16_row_scale(dim, sum, sum_sq, eps).shift;
          if (row_shift >= 0 && row_shift < 64) seen[row_shift] = true;
          QS16LayerNormArgs a{};
          a.rows = 1;
          a.dim = dim;
          a.x = g_ln16_x;
          a.x_stride = dim;
          a.eps_term = eps;
          a.gain = g_ln16_gain;
          a.bias = g_ln16_bias;
          a.mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
          a.shift = range(-31, -8);
          a.y_zp = range(-128, 127);
          a.mult16 = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
          a.shift16 = range(-24, -2);
          a.y8_stride = a.y16_stride = dim;
          QS16LayerNormArgs ref = a, got = a;
          ref.y8 = g_ln16_y8_ref;
          ref.y16 = g_ln16_y16_ref;
          got.y8 = g_ln16_y8;
          got.y16 = g_ln16_y16;
          qs16_layernorm__ref(ref);
          t.qs16_layernorm(got);
          if (std::memcmp(g_ln16_y8, g_ln16_y8_ref, static_cast<size_t>(dim)) == 0 &&
              std::memcmp(g_ln16_y16, g_ln16_y16_ref, sizeof(int16_t) * static_cast<size_t>(dim)) == 0) {
            ++passed;
          } else {
            ++failed;
            if (++fails <= 8) {
              ea_cm::write("FAIL qs16_layernorm row shift ");
              ea_cm::write_int(row_shift);
              ea_cm::write(" trial ");
              ea_cm::write_int(trial);
              ea_cm::write(" dim ");
              ea_cm::write_int(dim);
              ea_cm::write_line("");
            }
          }
        }
      }
    }
    int count = 0;
    for (bool b : seen) count += b ? 1 : 0;
    if (count < kMinRowShifts) {
      ++failed;
      ea_cm::write("FAIL qs16_layernorm: only ");
      ea_cm::write_int(count);
      ea_cm::write_line(" row shifts reached");
    }
  }
  // The score row Q.K^T of the selected attention kernel vs the reference:
  // head dims on both sides of the small-dim forms (DSP <= 64, Helium <= 16
  // and <= 128).
#if EA_CM_SIMD && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  const auto qk_row = qs8_qk_row__helium;
#elif EA_CM_SIMD && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  const auto qk_row = qs8_qk_row__dsp;
#else
  const auto qk_row = qs8_qk_row__ref;
#endif
  for (int trial = 0; trial < 400; ++trial) {
    // Every 8th trial above Helium's 128-dim chunked form.
    const int n = range(1, 12), dim = trial % 8 == 7 ? range(100, 140) : range(1, 72), k_stride = dim + range(0, 8);
    const int q_off = range(0, 15), k_off = range(0, 15);
    const bool extreme = trial % 10 == 0;
    // Every third trial a query whose values minus its zero point fit int8
    // (Helium's one-vector form at head dims 33-128, which real rows take);
    // the others span int8, so the split form runs.
    const bool narrow = trial % 3 == 1 && !extreme;
    for (int8_t& v : g_x) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : narrow ? range(-100, 100) : next());
    for (int8_t& v : g_w) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    const int32_t q_zp = extreme ? (trial % 20 == 0 ? -128 : 127) : narrow ? range(-27, 27) : range(-128, 127),
                  k_zp = extreme ? -128 : range(-128, 127);
    int32_t ref[12], got[12];
    qs8_qk_row__ref(n, dim, g_x + q_off, q_zp, g_w + k_off, k_stride, k_zp, ref);
    qk_row(n, dim, g_x + q_off, q_zp, g_w + k_off, k_stride, k_zp, got);
    if (std::memcmp(ref, got, sizeof(int32_t) * static_cast<size_t>(n)) == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL qk_row trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" dim ");
      ea_cm::write_int(dim);
      ea_cm::write_line("");
    }
  }
  // The integer softmax of the selected path (both list entries: the
  // exponent row with its sum, and the whole row) vs the reference: score
  // multipliers from tiny to full, shifts giving every (p, r) of
  // softmax_exp_params (p > 0, r < 16, and one score step past 2^16 in
  // log2, where every key but the maximum is 0).
#if EA_CM_SIMD
  // The path's own softmax, not the reference, must be what the table holds.
  if (t.qs8_softmax_row == qs8_softmax_row__ref || t.qs8_softmax_exp_row == qs8_softmax_exp_row__ref) {
    ++failed;
    ea_cm::write_line("FAIL softmax: the table holds the reference softmax");
  }
#endif
  for (int trial = 0; trial < 600; ++trial) {
    const int n = trial < kSoftmaxMax ? trial + 1 : range(1, kSoftmaxMax);
    fill_scores(n, trial % 11 < 4 ? trial % 11 : 4);
    const int32_t mult = trial % 7 == 0 ? range(1, 1 << 20) : static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    const int32_t shift = range(-31, 22);
    const int off = trial & 1;
    std::memset(g_e_ref, 0x5A, sizeof g_e_ref);
    std::memset(g_e, 0x5A, sizeof g_e);
    const uint32_t sum_ref = qs8_softmax_exp_row__ref(n, g_row, mult, shift, g_e_ref + off);
    const uint32_t sum = t.qs8_softmax_exp_row(n, g_row, mult, shift, g_e + off);
    bool ok = sum == sum_ref && std::memcmp(g_e, g_e_ref, sizeof g_e) == 0;
    std::memset(g_e_ref, 0x5A, sizeof g_e_ref);
    std::memset(g_e, 0x5A, sizeof g_e);
    qs8_softmax_row__ref(n, g_row, mult, shift, g_e_ref + off);
    t.qs8_softmax_row(n, g_row, mult, shift, g_e + off);
    ok = ok && std::memcmp(g_e, g_e_ref, sizeof g_e) == 0;
    if (ok) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL softmax trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" n ");
      ea_cm::write_int(n);
      ea_cm::write(" shift ");
      ea_cm::write_int(shift);
      ea_cm::write_line("");
    }
  }
  // The softmax rows' 32-bit normalizer against requant.h's 64-bit one:
  // every bit length, powers of two and their neighbours, random sums.
  {
    int bad = 0;
    for (int b = 1; b <= 32; ++b) {
      const uint32_t p2 = 1u << (b - 1);
      const uint32_t top = b == 32 ? 0xFFFFFFFFu : (p2 << 1) - 1;
      const uint32_t cases[6] = {p2, p2 + 1, top, top - 1, p2 + (next() & (p2 - 1)), p2 + (next() & (p2 - 1))};
      for (uint32_t sum : cases) {
        if (sum == 0) continue;
        const ProbNormalizer want = prob_normalizer(sum), got = prob_normalizer_cm(sum);
        if (want.multiplier != got.multiplier || want.shift != got.shift) ++bad;
      }
    }
    for (int i = 0; i < 3000; ++i) {
      const uint32_t sum = (next() >> (next() % 32)) | 1u;
      const ProbNormalizer want = prob_normalizer(sum), got = prob_normalizer_cm(sum);
      if (want.multiplier != got.multiplier || want.shift != got.shift) ++bad;
    }
    if (bad == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL prob_normalizer_cm: ");
      ea_cm::write_int(bad);
      ea_cm::write_line(" sums");
    }
  }
  // The weighted sum of the selected path (the table's qs8_pv_row: cmsis-dsp's
  // on M4) vs the reference: odd and even key counts, channel counts of every
  // length mod 4, value rows at any byte offset, probabilities up to 32767.
  for (int trial = 0; trial < 400; ++trial) {
    const int n = range(1, 24), v_dim = range(1, 16), v_stride = v_dim + range(0, 8);
    const int v_off = range(0, 3), p_off = range(0, 1);
    const bool extreme = trial % 10 == 0;
    for (int8_t& v : g_v) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    for (uint16_t& p : g_p) p = static_cast<uint16_t>(extreme ? 32767 : next() % 32768u);
    const int32_t v_zp = extreme ? 127 : range(-128, 127);
    const int32_t mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    const int32_t shift = range(-24, 1), out_zp = range(-128, 127);
    int8_t ref[16], got[16];
    std::memset(ref, 0x5A, sizeof ref);
    std::memset(got, 0x5A, sizeof got);
    qs8_pv_row__ref(n, v_dim, g_p + p_off, g_v + v_off, v_stride, v_zp, mult, shift, out_zp, ref);
    t.qs8_pv_row(n, v_dim, g_p + p_off, g_v + v_off, v_stride, v_zp, mult, shift, out_zp, got);
    if (std::memcmp(ref, got, sizeof ref) == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL pv_row trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" n ");
      ea_cm::write_int(n);
      ea_cm::write(" v_dim ");
      ea_cm::write_int(v_dim);
      ea_cm::write_line("");
    }
  }
  // requant_cm.h against requant.h: every shift, random and extreme
  // accumulators (one count per shift).
  for (int32_t shift = edgeattn::kernels::kMinShift; shift <= edgeattn::kernels::kMaxShift; ++shift) {
    int bad = 0;
    for (int i = 0; i < 300; ++i) {
      const int32_t acc = pick_acc();
      const int32_t mult = i == 0 ? (1 << 30) : (i == 1 ? INT32_MAX : static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu)));
      const int32_t zp = range(-128, 127);
      if (cm::requantize(acc, mult, shift) != requantize(acc, mult, shift) ||
          cm::requantize_s8(acc, mult, shift, zp) != requantize_s8(acc, mult, shift, zp)) {
        ++bad;
      }
    }
    if (bad == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL requant_cm shift ");
      ea_cm::write_int(shift);
      ea_cm::write_line("");
    }
  }
  // The selected additive layer (cmsis-dsp / helium: requant_cm.h's score
  // row, the path's P.V) vs the reference, with and without coverage, with
  // attention weights; a pre-tanh multiplier on both sides of 1/2.
  for (int trial = 0; trial < 200; ++trial) {
    QS8AdditiveArgs a{};
    a.q_len = range(1, 4);
    a.kv_len = range(1, 12);
    a.attn_dim = range(1, 20);
    a.v_dim = range(1, 12);
    a.kv_valid_len = range(1, a.kv_len);
    for (int8_t& v : g_qp) v = static_cast<int8_t>(next());
    for (int8_t& v : g_kp) v = static_cast<int8_t>(next());
    for (int8_t& v : g_vals) v = static_cast<int8_t>(next());
    for (int8_t& v : g_table) v = static_cast<int8_t>(range(-127, 127));
    for (int8_t& v : g_vw) v = static_cast<int8_t>(range(-127, 127));
    for (int8_t& v : g_covw) v = static_cast<int8_t>(range(-127, 127));
    a.qp = g_qp; a.qp_stride = a.attn_dim; a.qp_zp = range(-128, 127);
    a.kp = g_kp; a.kp_stride = a.attn_dim; a.kp_zp = range(-128, 127);
    a.pre_mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.pre_shift = range(-8, 2);
    a.pre_zp = range(-8, 8);
    a.tanh_table = g_table;
    a.v_w = g_vw;
    a.score_mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.score_shift = range(-12, -2);
    a.pv_mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.pv_shift = range(-22, -10);
    a.values = g_vals; a.values_stride = a.v_dim; a.values_zp = range(-128, 127);
    a.out_zp = range(-128, 127);
    a.out_stride = a.v_dim;
    a.weights_stride = a.kv_len;
    a.scratch = g_scores;
    a.prob_scratch = g_probs;
    const bool coverage = trial & 1;
    if (coverage) {
      for (int j = 0; j < 12; ++j) g_cov_ref[j] = g_cov[j] = range(0, 1 << 20);
      a.cov_w = g_covw;
      a.cov_mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      a.cov_shift = range(-20, 0);
    }
    std::memset(g_out_ref, 0x5A, sizeof g_out_ref);
    std::memset(g_out, 0x5A, sizeof g_out);
    std::memset(g_wt_ref, 0, sizeof g_wt_ref);
    std::memset(g_wt, 0, sizeof g_wt);
    a.out = g_out_ref; a.weights = g_wt_ref; a.coverage = coverage ? g_cov_ref : nullptr;
    qs8_additive__ref(a);
    a.out = g_out; a.weights = g_wt; a.coverage = coverage ? g_cov : nullptr;
    t.qs8_additive(a);
    if (std::memcmp(g_out, g_out_ref, sizeof g_out) == 0 && std::memcmp(g_wt, g_wt_ref, sizeof g_wt) == 0 &&
        std::memcmp(g_cov, g_cov_ref, sizeof g_cov) == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL additive trial ");
      ea_cm::write_int(trial);
      ea_cm::write_line("");
    }
  }
  // The blocks' kernels: the path's own, not the reference, in the table
  // (LayerNorm and activation table on both boards).
#if EA_CM_SIMD
  if (t.qs8_layernorm == qs8_layernorm__ref || t.qs8_lut == qs8_lut__ref) {
    ++failed;
    ea_cm::write_line("FAIL blocks: the table holds a reference LayerNorm or activation table");
  }
#endif
#if EA_CM_SIMD && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  // The Helium LayerNorm's row scale against requant.h's (bit-by-bit square
  // root, 64-bit division). Zero-variance rows, where D is the eps term:
  // every bit length, D 4^k at both ends of [2^60, 2^62) (r = 2^30 and
  // 2^31 - 1), perfect squares 4 t^2 and their neighbours (where the square
  // root's corrections decide); then rows of two values over widths up to
  // 16384 with random eps terms.
  {
    int bad = 0;
    auto check = [&](int d, int32_t sum, int32_t sum_sq, int64_t eps) {
      const LayerNormRowScale want = layernorm_row_scale(d, sum, sum_sq, eps),
                              got = layernorm_row_scale_helium(d, sum, sum_sq, eps);
      if (want.inv != got.inv || want.shift != got.shift) ++bad;
    };
    constexpr int64_t kMaxEps = edgeattn::kernels::kLayerNormMaxEpsTerm;
    for (int b = 1; b <= 61; ++b) {
      const int64_t p2 = int64_t{1} << (b - 1), top = b == 61 ? kMaxEps : 2 * p2 - 1;
      const int64_t mid = p2 + static_cast<int64_t>(((uint64_t{next()} << 32) | next()) & static_cast<uint64_t>(p2 - 1));
      const int64_t cases[5] = {p2, p2 + 1, top, top - 1, mid};
      for (int64_t e : cases) check(range(1, 1040), 0, 0, e > 0 ? e : 1);
    }
    for (int i = 0; i < 500; ++i) {
      const int64_t t = (int64_t{1} << 29) + (next() & ((1u << 29) - 1));
      const int64_t squares[3] = {t * t, t * t - 1, t * t + 1};
      for (int64_t e : squares) check(1, 0, 0, e);
      const int d = range(1, 16384), n1 = range(0, d);
      const int32_t u = range(-128, 127), v = range(-128, 127);
      const int32_t sum = n1 * u + (d - n1) * v, sum_sq = n1 * u * u + (d - n1) * v * v;
      const int64_t eps = (static_cast<int64_t>(next()) << range(0, 28)) % kMaxEps + 1;
      check(d, sum, sum_sq, eps);
    }
    if (bad == 0) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL layernorm_row_scale_helium: ");
      ea_cm::write_int(bad);
      ea_cm::write_line(" rows");
    }
  }
#endif
  // LayerNorm: widths 1..100 (every tail mod 4 and mod 16) on up to 4 rows,
  // and single rows up to 1040; eps terms from 1 to 2^60; gain and bias up
  // to the contract's limits; output shifts on both sides of the fast
  // requantization (shift <= -2) and zero points outside int8 (the
  // reference's fallback).
  for (int trial = 0; trial < 600; ++trial) {
    QS8LayerNormArgs a{};
    const bool wide = trial % 8 == 7;
    a.dim = trial < 100 ? trial + 1 : (wide ? range(101, 1040) : range(1, 100));
    a.rows = wide ? 1 : range(1, 4);
    a.x_stride = a.dim + (wide ? 0 : range(0, 8));
    a.y_stride = a.x_stride;
    const int off = wide ? 0 : range(0, 3);
    for (int r = 0; r < a.rows; ++r) fill_ln_row(g_bx + off + r * a.x_stride, a.dim, (trial + r) % 7);
    switch (trial % 5) {
      case 0: a.eps_term = 1; break;
      case 1: a.eps_term = edgeattn::kernels::kLayerNormMaxEpsTerm; break;
      case 2: a.eps_term = static_cast<int64_t>(next()) << range(0, 28); break;
      default: a.eps_term = static_cast<int64_t>(next() % 100000u) + 1; break;
    }
    if (a.eps_term < 1) a.eps_term = 1;
    const bool extreme = trial % 10 == 3;
    for (int i = 0; i < a.dim; ++i) {
      g_gain[i] = static_cast<int16_t>(extreme ? (next() & 1 ? -32768 : 32767) : next());
      const int32_t lim = edgeattn::kernels::kLayerNormMaxBias;
      g_lbias[i] = extreme ? (next() & 1 ? -lim : lim) : static_cast<int32_t>(next() % 2000001u) - 1000000;
    }
    a.gain = g_gain;
    a.bias = g_lbias;
    a.mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    a.shift = trial % 13 == 0 ? range(-1, 2) : range(-31, -2);
    a.y_zp = trial % 17 == 0 ? range(-600, 600) : range(-128, 127);
    a.x = g_bx + off;
    std::memset(g_by_ref, 0x5A, sizeof g_by_ref);
    std::memset(g_by, 0x5A, sizeof g_by);
    a.y = g_by_ref;
    qs8_layernorm__ref(a);
    a.y = g_by;
    t.qs8_layernorm(a);
    if (same(g_by, g_by_ref, kBlockMax)) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL layernorm trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" dim ");
      ea_cm::write_int(a.dim);
      ea_cm::write(" shift ");
      ea_cm::write_int(a.shift);
      ea_cm::write_line("");
    }
  }
  // The activation table: widths 1..70, any byte offset, a random table.
  for (int trial = 0; trial < 200; ++trial) {
    const int n = trial < 70 ? trial + 1 : range(1, 70), rows = range(1, 4), stride = n + range(0, 8);
    for (int8_t& v : g_lut) v = static_cast<int8_t>(next());
    for (int8_t& v : g_bx) v = static_cast<int8_t>(next());
    const int x_off = range(0, 3), y_off = range(0, 3);
    std::memset(g_by_ref, 0x5A, sizeof g_by_ref);
    std::memset(g_by, 0x5A, sizeof g_by);
    qs8_lut__ref(rows, n, g_bx + x_off, stride, g_lut, g_by_ref + y_off, stride);
    t.qs8_lut(rows, n, g_bx + x_off, stride, g_lut, g_by + y_off, stride);
    if (same(g_by, g_by_ref, kBlockMax)) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL lut trial ");
      ea_cm::write_int(trial);
      ea_cm::write_line("");
    }
  }
  // The element-wise passes of the 16-bit stream and of branch-norm blocks
  // (qs16_narrow, qs8_add, qs8_add16; Helium variants on the M55, DSP ones
  // of the narrowing and add16 on the M4): lengths 1..600 at byte offsets 0..3, int16 values
  // at the ends, the contracts' whole parameter ranges, in place too.
#if EA_CM_SIMD
  if (t.qs16_narrow == qs16_narrow__ref || t.qs8_add16 == qs8_add16__ref) {
    ++failed;
    ea_cm::write_line("FAIL element-wise: the table holds a reference narrowing or add16");
  }
#endif
#if EA_CM_SIMD && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  if (t.qs8_add == qs8_add__ref) {
    ++failed;
    ea_cm::write_line("FAIL element-wise: the table holds the reference add");
  }
#endif
  auto add_multiplier = [] {
    const uint32_t pick = next() % 6;
    return pick == 0 ? 0 : pick == 1 ? kAddMaxMultiplier : static_cast<int32_t>(next() & kAddMaxMultiplier);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = static_cast<size_t>(trial < 40 ? trial + 1 : range(1, 600));
    const int off = range(0, 3);
    for (int16_t& v : g_ln16_x) {
      const uint32_t u = next();
      v = (u & 7) == 0 ? ((u & 8) != 0 ? int16_t{32767} : int16_t{-32768}) : static_cast<int16_t>(u >> 16);
    }
    for (int8_t& v : g_big_x) v = static_cast<int8_t>(next());
    const int8_t* x8 = g_big_x + off;
    const int8_t* r8 = g_big_x + 1024 + off;
    const int16_t* r16 = g_ln16_x + off;
    // Narrowing: shifts on both sides of requant_cm.h's vector form (n >= 33).
    const int32_t mult = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
    const int32_t shift = trial % 3 == 0 ? range(kMinShift, kMaxShift) : range(-16, -2), zp = range(-128, 127);
    std::memset(g_ln16_y8_ref, 0x5A, sizeof g_ln16_y8_ref);
    std::memset(g_ln16_y8, 0x5A, sizeof g_ln16_y8);
    qs16_narrow__ref(n, r16, mult, shift, zp, g_ln16_y8_ref + off);
    t.qs16_narrow(n, r16, mult, shift, zp, g_ln16_y8 + off);
    bool ok = same(g_ln16_y8, g_ln16_y8_ref, sizeof g_ln16_y8);
    // The int8 add, and in place (y = x).
    QS8AddParams p;
    p.zp_x = range(-128, 127);
    p.a = add_multiplier();
    p.zp_r = range(-128, 127);
    p.b = add_multiplier();
    p.shift = range(1, kAddMaxShift);
    p.zp_y = range(-128, 127);
    std::memset(g_ln16_y8_ref, 0x5A, sizeof g_ln16_y8_ref);
    std::memset(g_ln16_y8, 0x5A, sizeof g_ln16_y8);
    qs8_add__ref(n, x8, r8, p, g_ln16_y8_ref + off);
    t.qs8_add(n, x8, r8, p, g_ln16_y8 + off);
    ok = ok && same(g_ln16_y8, g_ln16_y8_ref, sizeof g_ln16_y8);
    std::memcpy(g_ln16_y8 + off, x8, n);
    t.qs8_add(n, g_ln16_y8 + off, r8, p, g_ln16_y8 + off);
    ok = ok && same(g_ln16_y8 + off, g_ln16_y8_ref + off, static_cast<int>(n));
    // add16 (n from 1 to 30), and in place (y = r).
    p.shift = range(1, kAdd16MaxShift);
    for (int16_t& v : g_ln16_y16_ref) v = 0x5A5A;
    for (int16_t& v : g_ln16_y16) v = 0x5A5A;
    qs8_add16__ref(n, x8, r16, p, g_ln16_y16_ref + off);
    t.qs8_add16(n, x8, r16, p, g_ln16_y16 + off);
    ok = ok && std::memcmp(g_ln16_y16, g_ln16_y16_ref, sizeof g_ln16_y16) == 0;
    std::memcpy(g_ln16_xcopy, g_ln16_x, sizeof g_ln16_x);
    t.qs8_add16(n, x8, g_ln16_xcopy + off, p, g_ln16_xcopy + off);
    ok = ok && std::memcmp(g_ln16_xcopy + off, g_ln16_y16_ref + off, n * sizeof(int16_t)) == 0;
    if (ok) {
      ++passed;
    } else {
      ++failed;
      ea_cm::write("FAIL element-wise trial ");
      ea_cm::write_int(trial);
      ea_cm::write(" n ");
      ea_cm::write_int(static_cast<int>(n));
      ea_cm::write_line("");
    }
  }
  ea_cm::write_int(passed);
  ea_cm::write(" passed, ");
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
