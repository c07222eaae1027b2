// Cost of the format-3 file checksum on the board: instructions per byte of
// each CRC-32 implementation (runtime/src/crc32.h) over the embedded models
// (read from flash, as Model::Load reads them), and the instructions of a
// whole Model::Load of each model with the implementation this build chose.
// Fails (exit 1) when an implementation disagrees with the bitwise one.
//
// Unit: as edgeattn-bench (qemu -icount shift=0: SysTick ticks converted to
// executed instructions, resolution 40 / 31.25; not cycles).
#include "bahdanau_model.h"
#include "edgeattn/edgeattn.hpp"
#include "platform.h"
#include "pooling_model.h"
#include "runtime/src/crc32.h"
#include "transformer_model.h"

namespace {

using namespace edgeattn;

uint64_t now() { return ea_cm::ticks_to_instructions(ea_cm::ticks()); }

struct Embedded {
  const char* name;
  const uint8_t* data;
  size_t size;
};
const Embedded kModels[] = {
    {"transformer", transformer_model, TRANSFORMER_MODEL_SIZE},
    {"bahdanau", bahdanau_model, BAHDANAU_MODEL_SIZE},
    {"pooling", pooling_model, POOLING_MODEL_SIZE},
};

using Fn = uint32_t (*)(uint32_t, const uint8_t*, size_t);
struct Impl {
  const char* name;
  Fn fn;
};
const Impl kImpls[] = {
    {"bitwise (no table)", crc32_impl::bitwise},
    {"nibble (64 B table)", crc32_impl::nibble},
    {"bytewise (1 KB table)", crc32_impl::bytewise},
    {"slice4 (4 KB tables)", crc32_impl::slice4},
};

// "x.yy" from hundredths.
void write_fixed2(uint64_t hundredths) {
  ea_cm::write_uint(hundredths / 100);
  ea_cm::write(".");
  if (hundredths % 100 < 10) ea_cm::write("0");
  ea_cm::write_uint(hundredths % 100);
}

}  // namespace

int main() {
  ea_cm::ticks_start();
  ea_cm::write("crc_cost on ");
  ea_cm::write_line(ea_cm::kBoard);
  int failed = 0;
  const Embedded& big = kModels[0];
  uint32_t want = 0;
  for (const Impl& impl : kImpls) {
    // The smaller of two runs (a SysTick wrap during a run can disturb one).
    uint64_t best = ~uint64_t{0};
    uint32_t crc = 0;
    for (int run = 0; run < 2; ++run) {
      const uint64_t t0 = now();
      crc = ~impl.fn(0xFFFFFFFFu, big.data, big.size);
      const uint64_t t1 = now();
      if (t1 > t0 && t1 - t0 < best) best = t1 - t0;
    }
    if (&impl == &kImpls[0]) want = crc;
    if (crc != want) ++failed;
    ea_cm::write(impl.name);
    ea_cm::write(": ");
    ea_cm::write_uint(best);
    ea_cm::write(" instructions for ");
    ea_cm::write_uint(big.size);
    ea_cm::write(" bytes = ");
    write_fixed2(best * 100 / big.size);
    ea_cm::write(" per byte, CRC ");
    ea_cm::write_hex32(crc);
    ea_cm::write_line(crc == want ? "" : " MISMATCH");
  }
  for (const Embedded& e : kModels) {
    Model model;
    const uint64_t t0 = now();
    const Status s = model.Load(e.data, e.size);
    const uint64_t t1 = now();
    const uint32_t crc = crc32(e.data, e.size - 4);
    const uint64_t t2 = now();
    const uint8_t* tail = e.data + e.size - 4;
    const uint32_t recorded = tail[0] | tail[1] << 8 | tail[2] << 16 | static_cast<uint32_t>(tail[3]) << 24;
    if (s != Status::kOk || crc != recorded) ++failed;
    ea_cm::write(e.name);
    ea_cm::write(": Model::Load ");
    ea_cm::write_uint(t1 - t0);
    ea_cm::write(" instructions for ");
    ea_cm::write_uint(e.size);
    ea_cm::write(" bytes, of which the file checksum ");
    ea_cm::write_uint(t2 - t1);
    ea_cm::write_line(s == Status::kOk ? "" : " LOAD FAILED");
  }
  ea_cm::write_int(failed);
  ea_cm::write_line(" failed");
  return failed;
}
