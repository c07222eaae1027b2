// Linux Arm CPU feature detection for the neon and neondot paths.
//  - AArch64: Advanced SIMD is architectural; SDOT is reported by
//    getauxval(AT_HWCAP) & HWCAP_ASIMDDP (never parse /proc/cpuinfo: under
//    qemu-user it shows the host CPU).
//  - Armv7-A: the NEON kernels are built with -mfpu=neon and NEON is assumed.
#include "cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

namespace edgeattn {
namespace kernels {
namespace {

#if defined(__aarch64__)
bool has_dotprod() {
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
  // Read on every call (cheap): a function-local static would need the C++
  // runtime's __cxa_guard_* in C programs that link the library.
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
  return false;
#endif
}
#endif

}  // namespace

bool cpu_supports(KernelPath path) {
  switch (path) {
    case KernelPath::kRef: return true;
    case KernelPath::kNeon: return true;
#if defined(__aarch64__)
    case KernelPath::kNeonDot: return has_dotprod();
#endif
    default: return false;
  }
}

}  // namespace kernels
}  // namespace edgeattn
