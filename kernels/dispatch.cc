#include "edgeattn/kernels/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

// The table in use. Several threads may run interpreters and select it on
// first use at the same time; they store the same pointer, and the tables
// are constant data, so relaxed atomic loads and stores are enough (plain
// loads and stores on every target, no lock).
std::atomic<const KernelTable*> g_active{nullptr};

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
  const KernelTable* active = g_active.load(std::memory_order_relaxed);
  if (active == nullptr) {
    KernelPath path = best_kernel_path();
#if !defined(EA_BARE_METAL)
    KernelPath forced;
    if (parse_kernel_path(std::getenv("EA_KERNEL_PATH"), &forced) && kernel_path_supported(forced)) {
      path = forced;
    }
#endif
    active = kernel_table(path);
    g_active.store(active, std::memory_order_relaxed);
  }
  return *active;
}

bool set_kernel_path(KernelPath path) {
  if (!kernel_path_supported(path)) return false;
  g_active.store(kernel_table(path), std::memory_order_relaxed);
  return true;
}

}  // namespace kernels
}  // namespace edgeattn
