// CPU feature detection of a build with the reference kernels only (an
// architecture without a kernels/<isa>/kernels.cmake, or EA_ENABLE_SIMD
// off). The SIMD builds replace this file with their own
// (cpu_features_x86.cc, cpu_features_arm.cc, ...).
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {

bool cpu_supports(KernelPath path) { return path == KernelPath::kRef; }

}  // namespace kernels
}  // namespace edgeattn
