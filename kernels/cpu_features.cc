// Run-time CPU feature detection. No SIMD tables are built yet: every path
// but the reference reports "not in this build" until its kernels land
// (kernels/avx2, kernels/neon, ...), each registering here.
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {

bool cpu_supports(KernelPath path) { return path == KernelPath::kRef; }

const KernelTable* isa_kernel_table(KernelPath) { return nullptr; }

}  // namespace kernels
}  // namespace edgeattn
