// Firmware unit test: the build's selected qs8_linear (cmsis-dsp on M4,
// helium on M55) against the reference kernel, bit for bit, on random shapes:
// in_features 1..80 (ragged tails of every length mod 4 and mod 16), packed
// K4N16 weights with random padding, misaligned activation rows, row
// strides > in_features, per-tensor and
// per-channel requantization, and the extreme int8 values.
#include <cstring>

#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/ref.h"
#include "cortex-m/cortexm_kernels.h"
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
alignas(16) int8_t g_w[16 * 80];  // packed K4N16: up to 12 channels x 80 inputs
int32_t g_bias[12], g_mult[12], g_shift[12];
int8_t g_y_ref[4 * 16], g_y[4 * 16];

}  // namespace

int main() {
  const KernelTable& t = kernels();
  ea_cm::write("qs8_linear: path ");
  ea_cm::write(t.name);
  ea_cm::write_line(" vs ref (and its attention score row)");
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
      g_shift[n] = range(-16, -2);
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
  // The score row Q.K^T of the selected attention kernel vs the reference.
#if EA_CM_SIMD && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  const auto qk_row = qs8_qk_row__helium;
#elif EA_CM_SIMD && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  const auto qk_row = qs8_qk_row__dsp;
#else
  const auto qk_row = qs8_qk_row__ref;
#endif
  for (int trial = 0; trial < 400; ++trial) {
    const int n = range(1, 12), dim = range(1, 40), k_stride = dim + range(0, 8);
    const int q_off = range(0, 15), k_off = range(0, 15);
    const bool extreme = trial % 10 == 0;
    for (int8_t& v : g_x) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    for (int8_t& v : g_w) v = static_cast<int8_t>(extreme ? (next() & 1 ? -128 : 127) : next());
    const int32_t q_zp = extreme ? 127 : range(-128, 127), k_zp = extreme ? -128 : range(-128, 127);
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
  ea_cm::write_int(passed);
  ea_cm::write(" passed, ");
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
