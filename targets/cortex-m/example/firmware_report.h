// What the example firmwares print alike: the first line (board and kernel
// path), PASS / FAIL lines and their tally, a model's memory line, and the
// last line, "N passed, N failed", whose count CTest reads
// (ea_cm_add_test's FAIL_REGULAR_EXPRESSION) and main returns.
#ifndef EA_CM_EXAMPLE_FIRMWARE_REPORT_H_
#define EA_CM_EXAMPLE_FIRMWARE_REPORT_H_

#include <cstdint>

#include "edgeattn/edgeattn.h"
#include "platform.h"

namespace ea_cm_report {

inline int g_passed = 0;
inline int g_failed = 0;

// "edgeattn <what> on <board>, kernel path <path>"; starts the tick counter.
inline void begin(const char* what) {
  ea_cm::ticks_start();
  ea_cm::write("edgeattn ");
  ea_cm::write(what);
  ea_cm::write(" on ");
  ea_cm::write(ea_cm::kBoard);
  ea_cm::write(", kernel path ");
  ea_cm::write_line(ea_kernel_path());
}

// Counts one check and starts its line ("PASS " / "FAIL "); the caller ends it.
inline void result(bool ok) {
  (ok ? g_passed : g_failed)++;
  ea_cm::write(ok ? "PASS " : "FAIL ");
}

// "<name>: stack high-water N bytes (of M), arena A bytes, model S bytes[, K steps]"
// (steps < 0: a model without a graph).
inline void memory(const char* name, uint64_t arena, uint64_t model, int32_t steps = -1) {
  ea_cm::write(name);
  ea_cm::write(": stack high-water ");
  ea_cm::write_uint(ea_cm::stack_used());
  ea_cm::write(" bytes (of ");
  ea_cm::write_uint(ea_cm::stack_size());
  ea_cm::write("), arena ");
  ea_cm::write_uint(arena);
  ea_cm::write(" bytes, model ");
  ea_cm::write_uint(model);
  if (steps < 0) {
    ea_cm::write_line(" bytes");
    return;
  }
  ea_cm::write(" bytes, ");
  ea_cm::write_uint(static_cast<uint64_t>(steps));
  ea_cm::write_line(" steps");
}

// "N passed, N failed"; the failures, for main's exit status.
inline int end() {
  ea_cm::write_int(g_passed);
  ea_cm::write(" passed, ");
  ea_cm::write_int(g_failed);
  ea_cm::write_line(" failed");
  return g_failed;
}

}  // namespace ea_cm_report

#endif  // EA_CM_EXAMPLE_FIRMWARE_REPORT_H_
