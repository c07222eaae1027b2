// Off-target check of the amx path's GEMMs (qs8_linear, qs8_linear_res,
// qs8_linear_res16 in kernels/qs8-linear*/qs8-linear*-amx.cc) on CPUs
// without AMX-INT8: amx_emu_kernels.cc compiles them with a scalar model of
// the tile unit, and this program compares them bit for bit with the
// reference on random shapes: rows 1..80 (the 32- and 16-row passes and the
// rows after them), inputs 1..600 (the 64-input steps and the zero-padded
// tail tiles), ragged outputs and strides, per-channel and per-tensor
// requantization, every residual form. It proves the tiling, the B-operand
// reading of the K4N16 blocks and the tails; the instructions themselves are
// the documented ones, and simd_test runs the real thing where the CPU has
// them. The epilogues are AVX-512: without AVX512-VNNI the check is skipped
// (exit 77). Exit 0 = all equal.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu_features.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/quantize_multiplier.h"
#include "edgeattn/kernels/ref.h"
#define qs8_linear__amx qs8_linear__amx_emu
#define qs8_linear_res__amx qs8_linear_res__amx_emu
#define qs8_linear_res16__amx qs8_linear_res16__amx_emu
#include "microkernels.h"

namespace ek = edgeattn::kernels;

int main() {
  if (!ek::cpu_supports(ek::KernelPath::kAvx512Vnni)) {
    std::printf("amx_emu_check: skipped, the epilogues need AVX512-VNNI\n");
    return 77;
  }
  std::mt19937_64 rng(4242);
  auto uni = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  auto log_uni = [&](double lo, double hi) {
    return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
  };
  const int kDims[] = {1, 3, 15, 16, 17, 31, 32, 33, 40, 48, 63, 64, 65, 100, 128, 192, 256, 600};
  int cases = 0;
  for (int seed = 0; seed < 300; ++seed) {
    const int rows = uni(0, 3) ? uni(16, 80) : uni(1, 15);
    const int out = uni(0, 2) ? uni(1, 150) : kDims[uni(0, 17)];
    const int in = uni(0, 1) ? kDims[uni(0, 17)] : uni(1, 600);
    const int x_stride = in + uni(0, 3);
    const int y_stride = out + uni(0, 3);
    const int r_stride = out + uni(0, 5);
    // x ends with the last row (a tile load past it would leave the buffer:
    // the ASan build sees it); packed weights with random padding.
    std::vector<int8_t> x(static_cast<size_t>(rows - 1) * x_stride + in), w(ek::packed_weight_bytes(out, in));
    for (auto& v : x) v = static_cast<int8_t>(uni(-128, 127));
    for (auto& v : w) v = static_cast<int8_t>(uni(-128, 127));
    std::vector<int32_t> bias(out), mult(out), shift(out);
    for (auto& b : bias) b = uni(-(1 << 20), 1 << 20);
    const int per_channel = uni(0, 1);
    for (int n = 0; n < out; ++n) {
      if (uni(0, 19) == 0) {
        mult[n] = uni(1 << 30, INT32_MAX);
        shift[n] = uni(0, 1) ? ek::kMinShift : ek::kMaxShift;
      } else if (!ek::quantize_multiplier(log_uni(1e-6, 1e-1), &mult[n], &shift[n])) {
        return 2;
      }
    }
    const int32_t y_zp = uni(-128, 127);
    std::vector<int8_t> want(static_cast<size_t>(rows) * y_stride, 0x5A), got(want.size(), 0x5A);
    ek::qs8_linear__ref(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                        per_channel, y_zp, want.data(), y_stride);
    ek::qs8_linear__amx_emu(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                            per_channel, y_zp, got.data(), y_stride);
    if (got != want) {
      std::printf("qs8_linear MISMATCH seed %d rows %d out %d in %d\n", seed, rows, out, in);
      return 1;
    }

    // contract 5b: the int8 residual in the epilogue
    std::vector<int8_t> res(static_cast<size_t>(rows - 1) * r_stride + out);
    for (auto& v : res) v = static_cast<int8_t>(uni(-128, 127));
    ek::ResidualTerm term = {};
    term.shift = uni(1, ek::kResidualMaxShift);
    term.mult = std::min(ek::kResidualMaxMultiplier, uni(1 << (term.shift - 1), 3 << term.shift));
    term.a_zp = uni(-128, 127);
    term.y_zp = y_zp;
    for (int n = 0; n < out; ++n) {
      if (!ek::quantize_multiplier(std::ldexp(log_uni(1e-6, 1e-1), term.shift), &mult[n], &shift[n])) return 2;
    }
    const ek::QS8Residual r8 = {res.data(), r_stride, term};
    std::fill(want.begin(), want.end(), 0x5A);
    std::fill(got.begin(), got.end(), 0x5A);
    ek::qs8_linear_res__ref(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                            per_channel, r8, want.data(), y_stride);
    ek::qs8_linear_res__amx_emu(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(),
                                shift.data(), per_channel, r8, got.data(), y_stride);
    if (got != want) {
      std::printf("qs8_linear_res MISMATCH seed %d rows %d out %d in %d\n", seed, rows, out, in);
      return 1;
    }

    // contract 5c: the int16 residual and output (stride 0 in one case of 4)
    const int r16_stride = uni(0, 3) ? r_stride : 0;
    std::vector<int16_t> res16(static_cast<size_t>(rows - 1) * r16_stride + out);
    for (auto& v : res16) v = static_cast<int16_t>(uni(-32768, 32767));
    ek::Residual16Term term16 = {};
    term16.shift = uni(1, ek::kResidual16MaxShift);
    term16.mult = std::min<int>(ek::kResidual16MaxMultiplier,
                                static_cast<int>(std::lround(log_uni(0.25, 2.0) * std::ldexp(1.0, term16.shift))));
    for (int n = 0; n < out; ++n) {
      if (!ek::quantize_multiplier(std::ldexp(log_uni(1e-4, 10.0), term16.shift), &mult[n], &shift[n])) return 2;
    }
    const ek::QS16Residual r16 = {res16.data(), r16_stride, term16};
    std::vector<int16_t> want16(static_cast<size_t>(rows) * y_stride, 0x5A5A), got16(want16.size(), 0x5A5A);
    ek::qs8_linear_res16__ref(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(), shift.data(),
                              per_channel, r16, want16.data(), y_stride);
    ek::qs8_linear_res16__amx_emu(rows, out, in, x.data(), x_stride, w.data(), bias.data(), mult.data(),
                                  shift.data(), per_channel, r16, got16.data(), y_stride);
    if (got16 != want16) {
      std::printf("qs8_linear_res16 MISMATCH seed %d rows %d out %d in %d\n", seed, rows, out, in);
      return 1;
    }
    ++cases;
  }
  std::printf("amx (emulated tile unit) qs8_linear, qs8_linear_res, qs8_linear_res16 == ref on %d random cases\n",
              cases);
  return 0;
}
