#include "edgeattn/kernels/dispatch.h"

#include <cstdlib>
#include <cstring>

#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

const KernelTable kRefTable = {
    KernelPath::kRef,   "ref",
    qs8_linear__ref,    EA_F32_KERNEL(f32_linear__ref),
    qs8_attention__ref, EA_F32_KERNEL(f32_attention__ref),
    qs8_additive__ref,  EA_F32_KERNEL(f32_additive__ref),
    qs8_qk_row__ref,    qs8_softmax_row__ref, qs8_softmax_exp_row__ref,
    qs8_pv_row__ref,
};

const char* const kNames[] = {"ref", "avx2", "avxvnni", "avx512vnni", "neon", "neondot", "cmsis-dsp", "helium"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(KernelPath::kCount),
              "one name per path");

const KernelTable* g_active = nullptr;

}  // namespace

const KernelTable* kernel_table(KernelPath path) {
  switch (path) {
    case KernelPath::kRef: return &kRefTable;
    default: return isa_kernel_table(path);
  }
}

const char* kernel_path_name(KernelPath path) {
  const int i = static_cast<int>(path);
  return i < static_cast<int>(KernelPath::kCount) ? kNames[i] : "unknown";
}

bool parse_kernel_path(const char* name, KernelPath* path) {
  if (name == nullptr) return false;
  for (int i = 0; i < static_cast<int>(KernelPath::kCount); ++i) {
    if (std::strcmp(name, kNames[i]) == 0) {
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
