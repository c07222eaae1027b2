// The microkernel lists (kernels/lists/<family>.inc) and the per-path tables
// built from them. Compiled with the baseline flags: it only takes the
// addresses of the ISA functions, which run after cpu_supports().
//
// A path's table holds, per family, the last listed variant of that path or
// of a path it extends (extends() below): adding an ISA variant of a family
// is its source file plus one line in the family's list; dispatch, the
// bit-exact tests (tests/kernels/<family>_test.cc) and the benchmarks
// (bench/kernels/<family>_bench.cc) all read the lists, and the lists
// declare the variants' prototypes (microkernels.h).
#include "microkernels.h"

#include "cpu_features.h"
#include "edgeattn/kernels/dispatch.h"
#include "edgeattn/kernels/ref.h"

namespace edgeattn {
namespace kernels {
namespace {

#define EA_UKERNEL(path, fn) {KernelPath::path, #fn, fn},
// The end entry: path kCount (what the constexpr code below tests: comparing
// a function's address with null is not a constant expression in every build,
// e.g. GCC with -fsanitize=undefined) and fn null (what callers test).
#define EA_LIST_END {KernelPath::kCount, nullptr, nullptr}

constexpr Microkernel<Qs8LinearFn> kQs8Linear[] = {
#include "lists/qs8_linear.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8LinearResFn> kQs8LinearRes[] = {
#include "lists/qs8_linear_res.inc"
    EA_LIST_END};
constexpr Microkernel<F32LinearFn> kF32Linear[] = {
#include "lists/f32_linear.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8AttentionFn> kQs8Attention[] = {
#include "lists/qs8_attention.inc"
    EA_LIST_END};
constexpr Microkernel<F32AttentionFn> kF32Attention[] = {
#include "lists/f32_attention.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8AdditiveFn> kQs8Additive[] = {
#include "lists/qs8_additive.inc"
    EA_LIST_END};
constexpr Microkernel<F32AdditiveFn> kF32Additive[] = {
#include "lists/f32_additive.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8QkRowFn> kQs8QkRow[] = {
#include "lists/qs8_qk_row.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8SoftmaxRowFn> kQs8SoftmaxRow[] = {
#include "lists/qs8_softmax_row.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8SoftmaxExpRowFn> kQs8SoftmaxExpRow[] = {
#include "lists/qs8_softmax_exp_row.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8PvRowFn> kQs8PvRow[] = {
#include "lists/qs8_pv_row.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8AttnTileStagesFn> kQs8AttentionTile[] = {
#include "lists/qs8_attention_tile.inc"
    EA_LIST_END};

constexpr Microkernel<Qs8LayerNormFn> kQs8LayerNorm[] = {
#include "lists/qs8_layernorm.inc"
    EA_LIST_END};
constexpr Microkernel<F32LayerNormFn> kF32LayerNorm[] = {
#include "lists/f32_layernorm.inc"
    EA_LIST_END};
constexpr Microkernel<F32AddFn> kF32Add[] = {
#include "lists/f32_add.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8LutFn> kQs8Lut[] = {
#include "lists/qs8_lut.inc"
    EA_LIST_END};
constexpr Microkernel<F32ActivationFn> kF32Activation[] = {
#include "lists/f32_activation.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8LinearRes16Fn> kQs8LinearRes16[] = {
#include "lists/qs8_linear_res16.inc"
    EA_LIST_END};
constexpr Microkernel<Qs16LayerNormFn> kQs16LayerNorm[] = {
#include "lists/qs16_layernorm.inc"
    EA_LIST_END};
constexpr Microkernel<Qs16NarrowFn> kQs16Narrow[] = {
#include "lists/qs16_narrow.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8AddFn> kQs8Add[] = {
#include "lists/qs8_add.inc"
    EA_LIST_END};
constexpr Microkernel<Qs8Add16Fn> kQs8Add16[] = {
#include "lists/qs8_add16.inc"
    EA_LIST_END};

#undef EA_UKERNEL
#undef EA_LIST_END

// Characters, not pointers to literals: a pointer would keep this file's
// literals, the lists' variant names among them (460 B on Cortex-M), in
// every firmware that prints its path.
constexpr char kNames[][12] = {"ref",     "avx2",      "avxvnni", "avx512vnni", "neon",
                                "neondot", "cmsis-dsp", "helium",  "amx"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(KernelPath::kCount),
              "one name per path");

// The path whose kernels a path may also run: the VNNI paths add to avx2
// (AVX-512 VNNI CPUs need not have the VEX AVX-VNNI form, so neither extends
// the other), neondot adds to neon, amx to avx512vnni (its GEMMs only); the
// rest stand on the reference alone.
constexpr KernelPath base_of(KernelPath p) {
  switch (p) {
    case KernelPath::kAmx: return KernelPath::kAvx512Vnni;
    case KernelPath::kAvxVnni:
    case KernelPath::kAvx512Vnni: return KernelPath::kAvx2;
    case KernelPath::kNeonDot: return KernelPath::kNeon;
    default: return KernelPath::kRef;
  }
}

constexpr bool extends(KernelPath table, KernelPath variant) {
  for (KernelPath p = table;; p = base_of(p)) {
    if (p == variant) return true;
    if (p == KernelPath::kRef) return false;
  }
}

template <class Fn, int N>
constexpr Fn pick(const Microkernel<Fn> (&list)[N], KernelPath path) {
  Fn fn = nullptr;
  for (int i = 0; i < N; ++i) {
    if (list[i].path != KernelPath::kCount && extends(path, list[i].path)) fn = list[i].fn;
  }
  return fn;
}

// A path is in this build when its own int8 linear is (every path has one).
constexpr bool built(KernelPath path) {
  for (const auto& k : kQs8Linear) {
    if (k.path == path) return true;
  }
  return false;
}

constexpr KernelTable make_table(KernelPath p) {
  return KernelTable{p,
                     kNames[static_cast<int>(p)],
                     pick(kQs8Linear, p),
                     pick(kQs8LinearRes, p),
                     pick(kF32Linear, p),
                     pick(kQs8Attention, p),
                     pick(kF32Attention, p),
                     pick(kQs8Additive, p),
                     pick(kF32Additive, p),
                     pick(kQs8QkRow, p),
                     pick(kQs8SoftmaxRow, p),
                     pick(kQs8SoftmaxExpRow, p),
                     pick(kQs8PvRow, p),
                     pick(kQs8LayerNorm, p),
                     pick(kF32LayerNorm, p),
                     pick(kF32Add, p),
                     pick(kQs8Lut, p),
                     pick(kF32Activation, p),
                     pick(kQs8LinearRes16, p),
                     pick(kQs16LayerNorm, p),
                     pick(kQs16Narrow, p),
                     pick(kQs8Add, p),
                     pick(kQs8Add16, p)};
}

constexpr int count_built() {
  int n = 0;
  for (int i = 0; i < static_cast<int>(KernelPath::kCount); ++i) n += built(static_cast<KernelPath>(i)) ? 1 : 0;
  return n;
}

// Only the tables of the paths in this build (firmware keeps ref and its
// own: 2 tables of 80 bytes on Cortex-M, not 8).
struct Tables {
  KernelTable table[count_built()];
};

constexpr Tables make_tables() {
  Tables t{};
  int n = 0;
  for (int i = 0; i < static_cast<int>(KernelPath::kCount); ++i) {
    if (built(static_cast<KernelPath>(i))) t.table[n++] = make_table(static_cast<KernelPath>(i));
  }
  return t;
}

constexpr Tables kTables = make_tables();

// The paths in this build, in the tables' order: a path's slot is its index.
struct BuiltPaths {
  KernelPath path[count_built()];
};

constexpr BuiltPaths make_built_paths() {
  BuiltPaths b{};
  int n = 0;
  for (int i = 0; i < static_cast<int>(KernelPath::kCount); ++i) {
    if (built(static_cast<KernelPath>(i))) b.path[n++] = static_cast<KernelPath>(i);
  }
  return b;
}

constexpr BuiltPaths kBuiltPaths = make_built_paths();

// One family's variants by slot: what a family's accessor below indexes.
template <class Fn>
struct BySlot {
  Fn fn[count_built()];
};

template <class Fn, int N>
constexpr BySlot<Fn> by_slot(const Microkernel<Fn> (&list)[N]) {
  BySlot<Fn> t{};
  for (int i = 0; i < count_built(); ++i) t.fn[i] = pick(list, kBuiltPaths.path[i]);
  return t;
}

constexpr MicrokernelLists kLists = {kQs8Linear,   kQs8LinearRes, kF32Linear,     kQs8Attention,     kF32Attention,
                                     kQs8Additive, kF32Additive,   kQs8QkRow,         kQs8SoftmaxRow,
                                     kQs8SoftmaxExpRow, kQs8PvRow,   kQs8AttentionTile,
                                     kQs8LayerNorm, kF32LayerNorm, kF32Add, kQs8Lut,
                                     kF32Activation, kQs8LinearRes16, kQs16LayerNorm,
                                     kQs16Narrow,    kQs8Add,         kQs8Add16};

}  // namespace

const KernelTable* kernel_table(KernelPath path) {
  for (const KernelTable& t : kTables.table) {
    if (t.path == path) return &t;
  }
  return nullptr;
}

const char* kernel_path_name(KernelPath path) {
  const int i = static_cast<int>(path);
  return i < static_cast<int>(KernelPath::kCount) ? kNames[i] : "unknown";
}

const MicrokernelLists& microkernel_lists() { return kLists; }

int path_slot(KernelPath path) {
  for (int i = 0; i < count_built(); ++i) {
    if (kBuiltPaths.path[i] == path) return i;
  }
  return -1;
}

KernelPath slot_path(int slot) { return kBuiltPaths.path[slot]; }

// Each accessor's table is a function-local constant of its own, so an
// accessor no linked code calls takes its table and variants with it.
#define EA_KERNEL_FAMILY(family, list)                      \
  decltype(KernelTable::family) family##_kernel() {         \
    static constexpr BySlot<decltype(KernelTable::family)> kBySlot = by_slot(list); \
    return kBySlot.fn[active_slot()];                       \
  }
EA_KERNEL_FAMILY(qs8_linear, kQs8Linear)
EA_KERNEL_FAMILY(qs8_linear_res, kQs8LinearRes)
EA_KERNEL_FAMILY(f32_linear, kF32Linear)
EA_KERNEL_FAMILY(qs8_attention, kQs8Attention)
EA_KERNEL_FAMILY(f32_attention, kF32Attention)
EA_KERNEL_FAMILY(qs8_additive, kQs8Additive)
EA_KERNEL_FAMILY(f32_additive, kF32Additive)
EA_KERNEL_FAMILY(qs8_qk_row, kQs8QkRow)
EA_KERNEL_FAMILY(qs8_softmax_row, kQs8SoftmaxRow)
EA_KERNEL_FAMILY(qs8_softmax_exp_row, kQs8SoftmaxExpRow)
EA_KERNEL_FAMILY(qs8_pv_row, kQs8PvRow)
EA_KERNEL_FAMILY(qs8_layernorm, kQs8LayerNorm)
EA_KERNEL_FAMILY(f32_layernorm, kF32LayerNorm)
EA_KERNEL_FAMILY(f32_add, kF32Add)
EA_KERNEL_FAMILY(qs8_lut, kQs8Lut)
EA_KERNEL_FAMILY(f32_activation, kF32Activation)
EA_KERNEL_FAMILY(qs8_linear_res16, kQs8LinearRes16)
EA_KERNEL_FAMILY(qs16_layernorm, kQs16LayerNorm)
EA_KERNEL_FAMILY(qs16_narrow, kQs16Narrow)
EA_KERNEL_FAMILY(qs8_add, kQs8Add)
EA_KERNEL_FAMILY(qs8_add16, kQs8Add16)
#undef EA_KERNEL_FAMILY

}  // namespace kernels
}  // namespace edgeattn
