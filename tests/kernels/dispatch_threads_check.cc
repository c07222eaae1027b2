// ThreadSanitizer check of the kernel-table selection (kernels/dispatch.cc):
// threads that run interpreters select the table on first use concurrently,
// and a test or benchmark may force a path meanwhile. Built with
// -fsanitize=thread from dispatch.cc and the small stand-ins below (the
// kernels themselves are not needed to select a table); any data race is a
// TSan report and a non-zero exit (tests/kernels/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cpu_features.h"
#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {
namespace kernels {

// Stand-ins for microkernels.cc and cpu_features_*.cc: two tables (slots 0
// and 1), both paths "supported".
namespace {
KernelTable g_ref{KernelPath::kRef, "ref"};
KernelTable g_other{KernelPath::kAvx2, "avx2"};
}  // namespace

const KernelTable* kernel_table(KernelPath path) {
  if (path == KernelPath::kRef) return &g_ref;
  if (path == KernelPath::kAvx2) return &g_other;
  return nullptr;
}
const char* kernel_path_name(KernelPath path) { return path == KernelPath::kRef ? "ref" : "avx2"; }
int path_slot(KernelPath path) { return path == KernelPath::kRef ? 0 : path == KernelPath::kAvx2 ? 1 : -1; }
KernelPath slot_path(int slot) { return slot == 0 ? KernelPath::kRef : KernelPath::kAvx2; }
bool cpu_supports(KernelPath path) { return path == KernelPath::kRef || path == KernelPath::kAvx2; }

}  // namespace kernels
}  // namespace edgeattn

int main() {
  namespace ek = edgeattn::kernels;
  std::vector<std::thread> threads;
  int bad = 0;
  // First use from 4 threads at once, then a forced path racing with readers.
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([] {
      for (int k = 0; k < 1000; ++k) {
        if (ek::kernels().name == nullptr) std::abort();
        // The per-family accessors' reading of the slot in use (active_slot).
        if (ek::active_kernel_path() != ek::KernelPath::kRef && ek::active_kernel_path() != ek::KernelPath::kAvx2) {
          std::abort();
        }
      }
    });
  }
  threads.emplace_back([] {
    for (int k = 0; k < 1000; ++k) ek::set_kernel_path(k % 2 ? ek::KernelPath::kRef : ek::KernelPath::kAvx2);
  });
  for (auto& t : threads) t.join();
  if (!ek::set_kernel_path(ek::KernelPath::kRef) || ek::kernels().path != ek::KernelPath::kRef) bad = 1;
  std::printf("dispatch_threads_check: %s\n", bad ? "FAILED" : "ok");
  return bad;
}
