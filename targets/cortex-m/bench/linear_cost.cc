// Instructions of this build's qs8_linear kernel alone on the shapes of the
// CMSIS-NN linear comparison (../shared/peers/cmsis beside the repository,
// `lin:LxKxN`: L rows, K inputs, N outputs) and on one and two rows, with the
// multiply-adds per instruction. The peer
// harness counts a whole Interpreter::Run; this counts the kernel call only,
// so a kernel change shows without the converter or a model. Data: xorshift32
// inputs and weights, per-channel multipliers in [2^30, 2^31) and shifts
// -9..-7 (the converter's usual range, requant_cm.h's fast form). The FNV-1a
// checksum of the outputs is printed so two builds can be compared for
// identical results (kernel_test proves them against the reference).
//
// Unit: as edgeattn-bench (qemu -icount shift=0: SysTick ticks converted to
// executed instructions, resolution 40 / 31.25; not cycles); the minimum of 3
// runs.
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/packed_weights.h"
#include "platform.h"

namespace {

using namespace edgeattn::kernels;

struct Shape {
  int rows, in, out;
};
// The CMSIS-NN comparison's five, then one and two rows (a decoding step,
// a short batch) of two of them: the kernels' passes for fewer rows.
const Shape kShapes[] = {{99, 64, 192}, {99, 64, 256}, {99, 256, 64}, {32, 128, 128}, {197, 192, 768},
                         {1, 64, 192},  {2, 64, 192},  {1, 256, 64},  {2, 256, 64}};

// The largest shape's buffers (M55's RAM is 512 KiB).
constexpr int kMaxX = 197 * 192, kMaxY = 197 * 768;
alignas(16) int8_t g_x[kMaxX], g_y[kMaxY];
alignas(16) int8_t g_w[packed_weight_bytes(768, 192)];
int32_t g_bias[768], g_mult[768], g_shift[768];

uint32_t g_state = 0x2545F491u;
uint32_t next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 17;
  g_state ^= g_state << 5;
  return g_state;
}

uint64_t now() { return ea_cm::ticks_to_instructions(ea_cm::ticks()); }

}  // namespace

int main() {
  ea_cm::ticks_start();
  const KernelTable& t = kernels();
  ea_cm::write("linear_cost on ");
  ea_cm::write(ea_cm::kBoard);
  ea_cm::write(", path ");
  ea_cm::write_line(t.name);
  for (const Shape& s : kShapes) {
    for (int i = 0; i < s.rows * s.in; ++i) g_x[i] = static_cast<int8_t>(next());
    const size_t wb = packed_weight_bytes(s.out, s.in);
    for (size_t i = 0; i < wb; ++i) g_w[i] = static_cast<int8_t>(next());
    for (int c = 0; c < s.out; ++c) {
      g_bias[c] = static_cast<int32_t>(next() % 4001u) - 2000;
      g_mult[c] = static_cast<int32_t>(0x40000000u + (next() & 0x3FFFFFFFu));
      g_shift[c] = -7 - static_cast<int32_t>(next() % 3u);
    }
    uint64_t best = ~uint64_t{0};
    for (int rep = 0; rep < 3; ++rep) {
      const uint64_t t0 = now();
      t.qs8_linear(s.rows, s.out, s.in, g_x, s.in, g_w, g_bias, g_mult, g_shift, 1, 1, g_y, s.out);
      const uint64_t d = now() - t0;
      if (d < best) best = d;
    }
    uint32_t h = 2166136261u;
    for (int i = 0; i < s.rows * s.out; ++i) h = (h ^ static_cast<uint8_t>(g_y[i])) * 16777619u;
    const uint64_t macs = static_cast<uint64_t>(s.rows) * s.in * s.out;
    ea_cm::write("lin:");
    ea_cm::write_int(s.rows);
    ea_cm::write("x");
    ea_cm::write_int(s.in);
    ea_cm::write("x");
    ea_cm::write_int(s.out);
    ea_cm::write(" qs8_linear ");
    ea_cm::write_uint(best);
    ea_cm::write(" instructions, macs ");
    ea_cm::write_uint(macs);
    ea_cm::write(", macs/instruction x1000 ");
    ea_cm::write_uint(macs * 1000 / best);
    ea_cm::write(", outputs fnv1a ");
    ea_cm::write_hex32(h);
    ea_cm::write_line("");
  }
  ea_cm::write_int(static_cast<int>(sizeof kShapes / sizeof kShapes[0]));
  ea_cm::write_line(" passed, 0 failed");
  return 0;
}
