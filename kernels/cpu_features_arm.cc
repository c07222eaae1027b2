// Linux Arm CPU feature detection and the NEON / dot-product tables.
//  - AArch64: Advanced SIMD is architectural; SDOT is reported by
//    getauxval(AT_HWCAP) & HWCAP_ASIMDDP (never parse /proc/cpuinfo: under
//    qemu-user it shows the host CPU).
//  - Armv7-A: the NEON kernels are built with -mfpu=neon and NEON is assumed.
#include "cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

#include "neon/neon_kernels.h"

namespace edgeattn {
namespace kernels {
namespace {

const KernelTable kNeonTable = {
    KernelPath::kNeon,   "neon",              qs8_linear__neon,   EA_F32_KERNEL(f32_linear__neon),
    qs8_attention__neon, EA_F32_KERNEL(f32_attention__neon), qs8_additive__neon, EA_F32_KERNEL(f32_additive__neon),
    qs8_qk_row__neon,    qs8_softmax_row__neon, qs8_softmax_exp_row__neon, qs8_pv_row__neon,
};

#if defined(__aarch64__)
const KernelTable kNeonDotTable = {
    KernelPath::kNeonDot,   "neondot",           qs8_linear__neondot, EA_F32_KERNEL(f32_linear__neon),
    qs8_attention__neondot, EA_F32_KERNEL(f32_attention__neon), qs8_additive__neon,  EA_F32_KERNEL(f32_additive__neon),
    qs8_qk_row__neondot,    qs8_softmax_row__neon, qs8_softmax_exp_row__neon, qs8_pv_row__neon,
};

bool has_dotprod() {
#if defined(__linux__) && defined(HWCAP_ASIMDDP)
  static const bool dot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return dot;
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

const KernelTable* isa_kernel_table(KernelPath path) {
  switch (path) {
    case KernelPath::kNeon: return &kNeonTable;
#if defined(__aarch64__)
    case KernelPath::kNeonDot: return &kNeonDotTable;
#endif
    default: return nullptr;
  }
}

}  // namespace kernels
}  // namespace edgeattn
