// Bare-metal Cortex-M: the kernel paths are fixed at compile time by the
// target's ACLE feature macros; nothing is probed at run time.
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
constexpr bool kHasDsp = true;
#else
constexpr bool kHasDsp = false;
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
constexpr bool kHasMve = true;
#else
constexpr bool kHasMve = false;
#endif

}  // namespace

bool cpu_supports(KernelPath path) {
  switch (path) {
    case KernelPath::kRef: return true;
    case KernelPath::kCortexMDsp: return kHasDsp;
    case KernelPath::kHelium: return kHasMve;
    default: return false;
  }
}

}  // namespace kernels
}  // namespace edgeattn
