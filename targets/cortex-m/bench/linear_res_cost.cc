// Cost of the residual in a projection's epilogue on the board (contract
// 5b, qs8_linear_res): instructions per call of this build's
// qs8_linear_res and of its reference, against the path's qs8_linear
// alone on the same projection (the difference is what the residual
// costs; the separate int8 add it replaced is gone), on the encoder
// blocks' projection shapes. Terms as the converter makes them: the
// projection's shifts >= 0 (its multiplier carries the residual's 2^n,
// n = 16), A about 2^16. Fails (exit 1) when the path's output differs
// from the reference's.
//
// Unit: as edgeattn-bench (qemu -icount shift=0: SysTick ticks converted to
// executed instructions, resolution 40 / 31.25; not cycles); the minimum
// of 5 runs.
#include <cstring>

#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/packed_weights.h"
#include "edgeattn/kernels/ref.h"
#include "platform.h"

namespace {

using namespace edgeattn::kernels;

constexpr int kMaxRows = 16, kMaxIn = 256, kMaxOut = 64;
alignas(16) int8_t g_x[kMaxRows * kMaxIn], g_res[kMaxRows * kMaxOut], g_lin[kMaxRows * kMaxOut];
alignas(16) int8_t g_y[kMaxRows * kMaxOut], g_y_ref[kMaxRows * kMaxOut];
alignas(16) int8_t g_w[packed_weight_bytes(kMaxOut, kMaxIn)];
int32_t g_bias[kMaxOut], g_mult[kMaxOut], g_shift[kMaxOut], g_mult_lin[kMaxOut], g_shift_lin[kMaxOut];

uint32_t g_state = 0x2545F491u;
uint32_t next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 17;
  g_state ^= g_state << 5;
  return g_state;
}

uint64_t now() { return ea_cm::ticks_to_instructions(ea_cm::ticks()); }

template <class F>
uint64_t cost(const F& f) {
  uint64_t best = ~uint64_t{0};
  for (int rep = 0; rep < 5; ++rep) {
    const uint64_t t0 = now();
    f();
    const uint64_t t = now() - t0;
    if (t < best) best = t;
  }
  return best;
}

struct Shape {
  int rows, in, out;
  const char* what;
};
const Shape kShapes[] = {
    {16, 64, 64, "out projection / fc2, d 64"},
    {16, 256, 64, "fc2, d 64, hidden 256"},
    {12, 32, 32, "out projection, d 32"},
};

}  // namespace

int main() {
  ea_cm::ticks_start();
  const KernelTable& t = kernels();
  ea_cm::write("linear_res_cost on ");
  ea_cm::write(ea_cm::kBoard);
  ea_cm::write(", path ");
  ea_cm::write_line(t.name);
  int failed = 0;
  for (const Shape& s : kShapes) {
    for (int8_t& v : g_x) v = static_cast<int8_t>(next());
    for (int8_t& v : g_res) v = static_cast<int8_t>(next());
    for (int8_t& v : g_w) v = static_cast<int8_t>(next());
    for (int c = 0; c < s.out; ++c) {
      g_bias[c] = static_cast<int32_t>(next() % 20001u) - 10000;
      g_mult[c] = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      g_shift[c] = static_cast<int32_t>(next() % 3u) + 5;  // r_c = s_x s_w 2^16 / s_y, about 2^5..2^8
      g_mult_lin[c] = g_mult[c];
      g_shift_lin[c] = g_shift[c] - 16;  // the same projection to an int8 output: shift -11..-9
    }
    const int32_t n = 16, a_mult = 70000, zp_a = 3, zp_y = -5;
    const QS8Residual res = {g_res, s.out, ResidualTerm{a_mult, n, zp_a, zp_y}};
    const uint64_t ref = cost([&] {
      qs8_linear_res__ref(s.rows, s.out, s.in, g_x, s.in, g_w, g_bias, g_mult, g_shift, 1, res, g_y_ref, s.out);
    });
    std::memset(g_y, 0, sizeof g_y);
    const uint64_t path = cost([&] {
      t.qs8_linear_res(s.rows, s.out, s.in, g_x, s.in, g_w, g_bias, g_mult, g_shift, 1, res, g_y, s.out);
    });
    const bool same = std::memcmp(g_y, g_y_ref, static_cast<size_t>(s.rows * s.out)) == 0;
    const uint64_t lin = cost([&] {
      t.qs8_linear(s.rows, s.out, s.in, g_x, s.in, g_w, g_bias, g_mult_lin, g_shift_lin, 1, 0, g_lin, s.out);
    });
    ea_cm::write("rows ");
    ea_cm::write_int(s.rows);
    ea_cm::write(" in ");
    ea_cm::write_int(s.in);
    ea_cm::write(" out ");
    ea_cm::write_int(s.out);
    ea_cm::write(" (");
    ea_cm::write(s.what);
    ea_cm::write("): qs8_linear_res ");
    ea_cm::write_uint(path);
    ea_cm::write(", its reference ");
    ea_cm::write_uint(ref);
    ea_cm::write(", qs8_linear alone ");
    ea_cm::write_uint(lin);
    ea_cm::write(" (the residual: ");
    ea_cm::write_int(static_cast<int64_t>(path) - static_cast<int64_t>(lin));
    ea_cm::write(")");
    ea_cm::write_line(same ? "" : "  FAIL: differs from the reference");
    if (!same) ++failed;
  }
  ea_cm::write_int(static_cast<int>(sizeof kShapes / sizeof kShapes[0]) - failed);
  ea_cm::write(" passed, ");
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
