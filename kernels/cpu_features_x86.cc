// x86-64 CPU feature detection for the avx2, avxvnni, avx512vnni and amx paths.
// Compiled with baseline flags. A path is usable only if the CPU reports the
// instructions (cpuid) AND the OS saves the YMM state (OSXSAVE + XCR0 bits 1
// and 2, read with xgetbv). AVX-VNNI is CPUID.(EAX=7,ECX=1):EAX[4], read
// directly (clang 14's __builtin_cpu_supports does not know "avxvnni").
// AVX512-VNNI (EVEX VPDPBUSD on zmm and ymm) needs CPUID.(7,0):EBX[16] AVX512F,
// EBX[30] AVX512BW, EBX[31] AVX512VL, ECX[11] AVX512_VNNI and the OS saving the opmask and ZMM
// state (XCR0 bits 5-7). Under qemu-x86_64 -cpu max, AVX2/FMA are reported
// and neither VNNI form is.
// AMX-INT8 needs the AVX512-VNNI path's features (its epilogues are zmm),
// CPUID.(7,0):EDX[24] AMX-TILE and EDX[25] AMX-INT8, the OS supporting the
// tile state (XCR0 bits 17 XTILECFG, 18 XTILEDATA) and, on Linux, this
// process's permission to use it: arch_prctl(ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA), granted once for every thread of the process; a tile
// instruction without it faults. Other systems: no AMX path. The request is
// made only when the amx path itself is asked about (cpu_supports(kAmx)):
// once granted, Linux sizes signal frames for the tile state, so an
// alternate signal stack must then hold it (sysconf(_SC_MINSIGSTKSZ));
// a program that forces another path first never asks.
#include "cpu_features.h"

#include <cpuid.h>

#include <cstdint>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif


namespace edgeattn {
namespace kernels {
namespace {

struct X86Features {
  bool avx2_fma = false;
  bool avxvnni = false;
  bool avx512vnni = false;
  bool avx512vbmi = false;  // with avx512vnni only
  bool amx = false;         // the CPU and OS have AMX-INT8 (with avx512vnni only); permission not asked
};

uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Asks Linux for the AMX tile data state (idempotent: a repeated request
// succeeds again).
bool request_amx_permission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

X86Features detect() {
  X86Features f;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = (ecx >> 27) & 1;
  const bool avx = (ecx >> 28) & 1;
  const bool fma = (ecx >> 12) & 1;
  if (!osxsave || !avx || !fma) return f;
  if ((read_xcr0() & 0x6) != 0x6) return f;  // XMM and YMM state enabled by the OS
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool avx2 = (ebx >> 5) & 1;
  const unsigned max_sub = eax;
  f.avx2_fma = avx2;
  const bool avx512f = (ebx >> 16) & 1, avx512bw = (ebx >> 30) & 1, avx512vl = (ebx >> 31) & 1;
  const bool vnni512 = (ecx >> 11) & 1;
  const bool zmm_state = (read_xcr0() & 0xE6) == 0xE6;  // XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM
  f.avx512vnni = avx2 && avx512f && avx512bw && avx512vl && vnni512 && zmm_state;
  f.avx512vbmi = f.avx512vnni && ((ecx >> 1) & 1);  // CPUID.(7,0):ECX[1] AVX512_VBMI
  const bool amx_int8 = ((edx >> 24) & 1) && ((edx >> 25) & 1);
  const bool tile_state = (read_xcr0() & 0x60000) == 0x60000;
  f.amx = f.avx512vnni && amx_int8 && tile_state;
  if (avx2 && max_sub >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    f.avxvnni = (eax >> 4) & 1;
  }
  return f;
}

}  // namespace

// Detected on every call, not cached in a function-local static: its
// thread-safe initialization would need the C++ runtime (__cxa_guard_*), which
// a C program linking the static library with the C driver does not have.
// The kernel table is selected once (dispatch.cc), so this runs rarely.
bool cpu_supports(KernelPath path) {
  const X86Features f = detect();
  switch (path) {
    case KernelPath::kRef: return true;
    case KernelPath::kAvx2: return f.avx2_fma;
    case KernelPath::kAvxVnni: return f.avxvnni;
    case KernelPath::kAvx512Vnni: return f.avx512vnni;
    case KernelPath::kAmx: return f.amx && request_amx_permission();
    default: return false;
  }
}

bool cpu_has_avx512vbmi() { return detect().avx512vbmi; }

}  // namespace kernels
}  // namespace edgeattn
