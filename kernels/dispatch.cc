#include "edgeattn/kernels/dispatch.h"

#include <cstdlib>
#include <cstring>

#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

const KernelTable* g_active = nullptr;

}  // namespace

bool parse_kernel_path(const char* name, KernelPath* path) {
  if (name == nullptr) return false;
  for (int i = 0; i < static_cast<int>(KernelPath::kCount); ++i) {
    if (std::strcmp(name, kernel_path_name(static_cast<KernelPath>(i))) == 0) {
      *path = static_cast<KernelPath>(i);
      return true;
    }
  }
  return false;
}

bool kernel_path_supported(KernelPath path) {
  return kernel_table(path) != nullptr && cpu_supports(path);
}

KernelPath best_kernel_path() {
  // Later entries are preferred when supported.
  // avx512vnni after avxvnni: its zmm linear does twice the work per
  // instruction (and on AMD Zen 5 three times the ymm VNNI rate).
  static const KernelPath kPreference[] = {KernelPath::kAvx2,       KernelPath::kAvxVnni,
                                           KernelPath::kAvx512Vnni,
                                           KernelPath::kNeon,       KernelPath::kNeonDot,
                                           KernelPath::kCortexMDsp, KernelPath::kHelium};
  KernelPath best = KernelPath::kRef;
  for (KernelPath p : kPreference) {
    if (kernel_path_supported(p)) best = p;
  }
  return best;
}

const KernelTable& kernels() {
  if (g_active == nullptr) {
    KernelPath path = best_kernel_path();
#if !defined(EA_BARE_METAL)
    KernelPath forced;
    if (parse_kernel_path(std::getenv("EA_KERNEL_PATH"), &forced) && kernel_path_supported(forced)) {
      path = forced;
    }
#endif
    g_active = kernel_table(path);
  }
  return *g_active;
}

bool set_kernel_path(KernelPath path) {
  if (!kernel_path_supported(path)) return false;
  g_active = kernel_table(path);
  return true;
}

}  // namespace kernels
}  // namespace edgeattn
