// Bare-metal Cortex-M: the kernel paths are fixed at compile time by the
// target's ACLE feature macros; nothing is probed at run time.
#include "cortex-m/cortexm_kernels.h"
#include "cpu_features.h"

namespace edgeattn {
namespace kernels {
namespace {

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
constexpr bool kHasDsp = true;
const KernelTable kDspTable = {
    KernelPath::kCortexMDsp, "cmsis-dsp",       qs8_linear__dsp,   EA_F32_KERNEL(f32_linear__ref),
    qs8_attention__dsp,      EA_F32_KERNEL(f32_attention__ref), qs8_additive__ref, EA_F32_KERNEL(f32_additive__ref),
    qs8_qk_row__dsp,         qs8_softmax_row__ref, qs8_softmax_exp_row__ref, qs8_pv_row__ref,
};
#else
constexpr bool kHasDsp = false;
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
constexpr bool kHasMve = true;
const KernelTable kHeliumTable = {
    KernelPath::kHelium,  "helium",            qs8_linear__helium, EA_F32_KERNEL(f32_linear__ref),
    qs8_attention__helium, EA_F32_KERNEL(f32_attention__ref),  qs8_additive__ref,  EA_F32_KERNEL(f32_additive__ref),
    qs8_qk_row__helium,    qs8_softmax_row__ref, qs8_softmax_exp_row__ref, qs8_pv_row__ref,
};
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

const KernelTable* isa_kernel_table(KernelPath path) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  if (path == KernelPath::kCortexMDsp) return &kDspTable;
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  if (path == KernelPath::kHelium) return &kHeliumTable;
#endif
  (void)path;
  return nullptr;
}

}  // namespace kernels
}  // namespace edgeattn
