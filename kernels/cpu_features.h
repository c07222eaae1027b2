// What the CPU running us supports (one implementation per architecture).
#ifndef EDGEATTN_KERNELS_CPU_FEATURES_H_
#define EDGEATTN_KERNELS_CPU_FEATURES_H_

#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {
namespace kernels {

// True if the CPU can execute `path` (kRef: always).
bool cpu_supports(KernelPath path);

}  // namespace kernels
}  // namespace edgeattn

#endif  // EDGEATTN_KERNELS_CPU_FEATURES_H_
