// Helpers shared by the converter fuzz targets.
#ifndef EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_
#define EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace eafuzz {

// One scratch file per process (libFuzzer -jobs/-workers run several).
inline std::string ScratchPath(const char* ext) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/edgeattn-fuzz-" + std::to_string(getpid()) + "." + ext;
}

inline void WriteAll(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size != 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

inline bool ShapeOverflows(const std::vector<size_t>& shape) {
  size_t n = 1;
  for (size_t d : shape) {
    if (d != 0 && n > SIZE_MAX / d) return true;
    n *= d;
  }
  return false;
}

// Bugs already reported (docs/security.md, "Findings") are skipped while
// EA_FUZZ_SKIP_KNOWN_BUGS is 1 so that campaigns keep looking for new ones.
#ifndef EA_FUZZ_SKIP_KNOWN_BUGS
#define EA_FUZZ_SKIP_KNOWN_BUGS 0
#endif
constexpr bool kSkipKnownBugs = EA_FUZZ_SKIP_KNOWN_BUGS != 0;

// A violated invariant: report and abort so libFuzzer records a crash.
[[noreturn]] inline void Finding(const char* what, const std::string& name) {
  std::fprintf(stderr, "FINDING: %s (%s)\n", what, name.c_str());
  std::abort();
}

}  // namespace eafuzz

#endif  // EDGEATTN_TESTS_FUZZ_FUZZ_UTIL_H_
