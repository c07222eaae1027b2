// Vector table and reset handler for the qemu Cortex-M boards (ARMv7-M and
// ARMv8.1-M): copy .data, zero .bss, enable the FPU (and MVE), run static
// constructors, call main and exit through semihosting with its status.
#include <cstdint>

#include "platform.h"

extern "C" {
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
typedef void (*InitFn)();
extern InitFn __init_array_start[], __init_array_end[];
int main();
void Reset_Handler();
void SysTick_Handler();
}

namespace {

[[noreturn]] void fault(const char* what) {
  ea_cm::write("FAULT: ");
  ea_cm::write_line(what);
  ea_cm::exit(99);
}

}  // namespace

extern "C" {
void NMI_Handler() { fault("NMI"); }
void HardFault_Handler() { fault("HardFault"); }
void MemManage_Handler() { fault("MemManage"); }
void BusFault_Handler() { fault("BusFault"); }
void UsageFault_Handler() { fault("UsageFault"); }
void SecureFault_Handler() { fault("SecureFault"); }
void Default_Handler() { fault("unexpected exception"); }

// Kept free of floating point: the FPU is off until CPACR is written.
__attribute__((noreturn, optimize("no-tree-loop-distribute-patterns"))) void Reset_Handler() {
  uint32_t* src = &__data_load;
  for (uint32_t* dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t* dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
  // CPACR: full access to CP10/CP11 (FPU, and MVE on Armv8.1-M).
  *reinterpret_cast<volatile uint32_t*>(0xE000ED88u) |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  for (InitFn* f = __init_array_start; f < __init_array_end; ++f) (*f)();
  ea_cm::exit(main());
}

using Vector = void (*)();
__attribute__((section(".isr_vector"), used)) const Vector g_vectors[16] = {
    reinterpret_cast<Vector>(&__stack_top),
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,
    nullptr,
    nullptr,
    nullptr,
    Default_Handler,  // SVC
    Default_Handler,  // DebugMon
    nullptr,
    Default_Handler,  // PendSV
    SysTick_Handler,
};
}
