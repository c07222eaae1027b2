#include "edgeattn/kernels/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cpu_features.h"
#include "microkernels.h"

namespace edgeattn {
namespace kernels {
namespace {

// The slot of the path in use (microkernels.h), -1 until chosen. Several
// threads may choose it on first use at the same time; they store the same
// value, so relaxed atomic loads and stores are enough (plain loads and
// stores on every target, no lock). A slot, not a table: the per-family
// accessors read it without keeping any family's table (see dispatch.h).
std::atomic<int> g_active_slot{-1};

// EA_KERNEL_PATH, when it names a path this build and CPU support (hosted
// targets only).
bool forced_path(KernelPath* path) {
#if defined(EA_BARE_METAL)
  (void)path;
  return false;
#else
  return parse_kernel_path(std::getenv("EA_KERNEL_PATH"), path) && kernel_path_supported(*path);
#endif
}

// A forced path is taken without looking for the best one, so forcing a
// path never probes the others (the amx check asks the OS for the tile
// state, cpu_features_x86.cc).
int choose_slot() {
  KernelPath path;
  if (!forced_path(&path)) path = best_kernel_path();
  const int slot = path_slot(path);
  g_active_slot.store(slot, std::memory_order_relaxed);
  return slot;
}

}  // namespace

int active_slot() {
  const int slot = g_active_slot.load(std::memory_order_relaxed);
  return slot >= 0 ? slot : choose_slot();
}

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
  return path_slot(path) >= 0 && cpu_supports(path);
}

KernelPath best_kernel_path() {
  // Later entries are preferred when supported.
  // avx512vnni after avxvnni: its zmm linear does twice the work per
  // instruction (and on AMD Zen 5 three times the ymm VNNI rate); amx after
  // avx512vnni: a TDPBSSD is 16 x 16 x 64 multiply-adds.
  static const KernelPath kPreference[] = {KernelPath::kAvx2,       KernelPath::kAvxVnni,
                                           KernelPath::kAvx512Vnni, KernelPath::kAmx,
                                           KernelPath::kNeon,       KernelPath::kNeonDot,
                                           KernelPath::kCortexMDsp, KernelPath::kHelium};
  KernelPath best = KernelPath::kRef;
  for (KernelPath p : kPreference) {
    if (kernel_path_supported(p)) best = p;
  }
  return best;
}

KernelPath active_kernel_path() { return slot_path(active_slot()); }

const KernelTable& kernels() { return *kernel_table(active_kernel_path()); }

bool set_kernel_path(KernelPath path) {
  if (!kernel_path_supported(path)) return false;
  g_active_slot.store(path_slot(path), std::memory_order_relaxed);
  return true;
}

}  // namespace kernels
}  // namespace edgeattn
