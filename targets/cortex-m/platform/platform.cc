#include "platform.h"

extern "C" {
extern uint32_t __stack_limit;  // lowest address of the stack (linker script)
extern uint32_t __stack_top;
}

namespace ea_cm {
namespace {

constexpr uint32_t kSysWrite0 = 0x04;
constexpr uint32_t kSysExit = 0x18;
constexpr uint32_t kSysExitExtended = 0x20;
constexpr uint32_t kAdpStoppedApplicationExit = 0x20026;
constexpr uint32_t kPaint = 0xC5A5C5A5u;

uint32_t semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

volatile uint32_t& reg(uint32_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
constexpr uint32_t kSysTickCsr = 0xE000E010u;
constexpr uint32_t kSysTickRvr = 0xE000E014u;
constexpr uint32_t kSysTickCvr = 0xE000E018u;
volatile uint32_t g_wraps = 0;

}  // namespace

#if defined(EA_CM_CPU_HZ)
const uint32_t kCpuHz = EA_CM_CPU_HZ;
#else
const uint32_t kCpuHz = 25000000u;
#endif
#if defined(EA_CM_BOARD_NAME)
const char* const kBoard = EA_CM_BOARD_NAME;
#else
const char* const kBoard = "cortex-m";
#endif

void write(const char* s) { semihost(kSysWrite0, s); }

void write_uint(uint64_t v) {
  char buf[24];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  write(p);
}

void write_int(int64_t v) {
  if (v < 0) {
    write("-");
    write_uint(static_cast<uint64_t>(-(v + 1)) + 1);
  } else {
    write_uint(static_cast<uint64_t>(v));
  }
}

void write_hex32(uint32_t v) {
  char buf[9];
  for (int i = 7; i >= 0; --i, v >>= 4) buf[i] = "0123456789abcdef"[v & 0xF];
  buf[8] = '\0';
  write(buf);
}

void write_line(const char* s) {
  write(s);
  write("\n");
}

void exit(int status) {
  const uint32_t block[2] = {kAdpStoppedApplicationExit, static_cast<uint32_t>(status)};
  semihost(kSysExitExtended, block);
  // Older hosts: only "application exit" (0) or anything else (1).
  semihost(kSysExit, reinterpret_cast<const void*>(status == 0 ? kAdpStoppedApplicationExit : 0x20024u));
  for (;;) {
  }
}

void ticks_start() {
  reg(kSysTickCsr) = 0;
  reg(kSysTickRvr) = 0x00FFFFFFu;
  reg(kSysTickCvr) = 0;
  g_wraps = 0;
  reg(kSysTickCsr) = 7;  // enable, interrupt on wrap, processor clock
}

uint64_t ticks() {
  uint32_t wraps, value;
  do {
    wraps = g_wraps;
    value = reg(kSysTickCvr);
  } while (wraps != g_wraps);
  return (static_cast<uint64_t>(wraps) << 24) + (0x00FFFFFFu - value);
}

uint64_t ticks_to_instructions(uint64_t t) { return t * 1000000000ull / kCpuHz; }

void stack_paint() {
  uint32_t* sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  // Leave 64 bytes under the current frame alone (this function's own frame).
  for (uint32_t* p = &__stack_limit; p < sp - 16; ++p) *p = kPaint;
}

size_t stack_used() {
  const uint32_t* p = &__stack_limit;
  while (p < &__stack_top && *p == kPaint) ++p;
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(&__stack_top) -
                             reinterpret_cast<const uint8_t*>(p));
}

size_t stack_size() {
  return static_cast<size_t>(reinterpret_cast<const uint8_t*>(&__stack_top) -
                             reinterpret_cast<const uint8_t*>(&__stack_limit));
}

}  // namespace ea_cm

extern "C" void SysTick_Handler() { ea_cm::g_wraps = ea_cm::g_wraps + 1; }
