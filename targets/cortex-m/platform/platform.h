// Minimal platform layer for the qemu Cortex-M boards: semihosting output and
// exit status, a SysTick-based tick counter, stack painting. No heap, no stdio.
#ifndef EDGEATTN_TARGETS_CORTEX_M_PLATFORM_H_
#define EDGEATTN_TARGETS_CORTEX_M_PLATFORM_H_

#include <cstddef>
#include <cstdint>

namespace ea_cm {

// Semihosting SYS_WRITE0 (qemu prints it on its stderr).
void write(const char* s);
void write_int(int64_t v);
void write_uint(uint64_t v);
void write_line(const char* s);
void write_hex32(uint32_t v);  // 8 lower-case hex digits
// Exits qemu with `status` (SYS_EXIT_EXTENDED, falling back to SYS_EXIT).
[[noreturn]] void exit(int status);

// Free-running SysTick (processor clock, 24 bit, wraps counted in its IRQ).
// Under qemu with -icount shift=0 each instruction is 1 ns of guest time, so
// ticks * 1e9 / kCpuHz is the exact number of executed instructions.
void ticks_start();
uint64_t ticks();
uint64_t ticks_to_instructions(uint64_t ticks);
extern const uint32_t kCpuHz;
extern const char* const kBoard;

// Stack high-water mark by painting: paint() fills the unused stack below the
// current stack pointer with a pattern; used() returns the deepest extent
// (bytes from the stack top) that was overwritten since.
void stack_paint();
size_t stack_used();
size_t stack_size();

}  // namespace ea_cm

#endif  // EDGEATTN_TARGETS_CORTEX_M_PLATFORM_H_
