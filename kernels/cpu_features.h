// What the CPU running us supports, and which ISA tables this build holds.
#ifndef EDGEATTN_KERNELS_CPU_FEATURES_H_
#define EDGEATTN_KERNELS_CPU_FEATURES_H_

#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {
namespace kernels {

// True if the CPU can execute `path` (kRef: always).
bool cpu_supports(KernelPath path);
// The SIMD table for `path` if this build contains it, else null.
const KernelTable* isa_kernel_table(KernelPath path);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CPU_FEATURES_H_
