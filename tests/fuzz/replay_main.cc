// A main() for a libFuzzer target built without libFuzzer (any compiler,
// cross builds run under qemu): runs LLVMFuzzerTestOneInput on every file
// named on the command line and on every regular file of the directories
// named there (not recursive; sorted by name, so the order is the same
// everywhere), then prints how many inputs ran. A finding aborts inside the
// target; the last "replay:" line on stderr names the input.
//
//   fuzz_paths_replay [-q] FILE_OR_DIR...      (-q: do not name each input)
// Built with _FILE_OFFSET_BITS=64 (tests/fuzz/CMakeLists.txt: 64-bit inode
// numbers and offsets on 32-bit targets, armv7; without it readdir() fails
// with EOVERFLOW on large file systems).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ReadFile(const std::string& path, std::vector<uint8_t>* bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  bytes->clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes->insert(bytes->end(), buf, buf + n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool quiet = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-q") {
      quiet = true;
    } else if (IsDir(arg)) {
      DIR* d = opendir(arg.c_str());
      if (d == nullptr) {
        std::fprintf(stderr, "replay: cannot open %s\n", arg.c_str());
        return 1;
      }
      std::vector<std::string> names;
      int error = 0;
      for (;;) {
        errno = 0;
        const dirent* e = readdir(d);
        if (e == nullptr) {
          error = errno;  // 0 at the end of the directory
          break;
        }
        const std::string path = arg + "/" + e->d_name;
        if (e->d_name[0] != '.' && !IsDir(path)) names.push_back(path);
      }
      closedir(d);
      if (error != 0) {
        std::fprintf(stderr, "replay: reading %s: %s\n", arg.c_str(), std::strerror(error));
        return 1;
      }
      std::sort(names.begin(), names.end());
      files.insert(files.end(), names.begin(), names.end());
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [-q] FILE_OR_DIR...   (no inputs given or found)\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> bytes;
  size_t count = 0;
  for (const std::string& path : files) {
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    if (!quiet) std::fprintf(stderr, "replay: [%zu/%zu] %s\n", count + 1, files.size(), path.c_str());
    // A copy of exactly the file's size, so reads past the input are caught
    // by ASan as under libFuzzer.
    std::vector<uint8_t> input(bytes);
    LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
    ++count;
  }
  std::printf("replay: %zu inputs, no finding\n", count);
  return 0;
}
