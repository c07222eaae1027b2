// What the CPU running us supports (one implementation per architecture).
#ifndef EDGEATTN_KERNELS_CPU_FEATURES_H_
#define EDGEATTN_KERNELS_CPU_FEATURES_H_

#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {
namespace kernels {

// True if the CPU can execute `path` (kRef: always).
bool cpu_supports(KernelPath path);

#if defined(EA_KERNELS_X86) && EA_KERNELS_X86
// AVX512_VBMI (VPERMB, VPERMI2B) on top of the AVX512-VNNI path's features:
// a kernel of that path may use it after this check (cpu_features_x86.cc).
bool cpu_has_avx512vbmi();
#endif

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CPU_FEATURES_H_
