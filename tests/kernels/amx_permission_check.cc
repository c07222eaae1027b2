// The amx path asks Linux for the tile state (arch_prctl) only when the amx
// path itself is asked about (cpu_features_x86.cc): once granted, signal
// frames grow by the tile data and a small alternate signal stack can no
// longer be installed, so a program that forces another path must never
// trigger the request. This process forces avx2 through EA_KERNEL_PATH
// (set by CTest), selects the kernel table, checks with ARCH_GET_XCOMP_PERM
// that the tile data state was not requested, then asks about amx and, on a
// CPU that has it, checks that the state is now permitted. Exit 0 = as
// documented.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cpu_features.h"
#include "edgeattn/kernels/dispatch.h"

namespace ek = edgeattn::kernels;

namespace {

constexpr long kArchGetXcompPerm = 0x1022;
constexpr uint64_t kXtiledata = uint64_t{1} << 18;

// The xstate features this process may use, or 0 when the call fails (an
// old kernel: then nothing can have been granted either).
uint64_t permitted() {
  uint64_t mask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &mask) != 0) return 0;
  return mask;
}

}  // namespace

int main() {
  const char* forced = std::getenv("EA_KERNEL_PATH");
  if (forced == nullptr || std::strcmp(forced, "avx2") != 0) {
    std::printf("amx_permission_check: run with EA_KERNEL_PATH=avx2\n");
    return 2;
  }
  if (permitted() & kXtiledata) {
    std::printf("FAIL: the tile state was permitted before anything ran\n");
    return 1;
  }
  const ek::KernelPath path = ek::active_kernel_path();  // the first selection
  std::printf("kernel path: %s\n", ek::kernel_path_name(path));
  if (permitted() & kXtiledata) {
    std::printf("FAIL: forcing %s requested the AMX tile state\n", forced);
    return 1;
  }
  if (ek::cpu_supports(ek::KernelPath::kAmx)) {
    if (!(permitted() & kXtiledata)) {
      std::printf("FAIL: amx is reported supported but the tile state is not permitted\n");
      return 1;
    }
    std::printf("amx: the tile state is permitted once the amx path is asked about\n");
  } else {
    std::printf("amx: not on this CPU/OS (the first check still holds)\n");
  }
  return 0;
}
