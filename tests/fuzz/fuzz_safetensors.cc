// libFuzzer target: the converter's .safetensors reader (load_safetensors).
// The reader takes a path, so each input is written to one scratch file
// (in /dev/shm when available). Any ConvertError is an accepted rejection;
// anything else (other exceptions, sanitizer reports) is a finding. Accepted
// files must be self-consistent: every float tensor holds numel() values
// and the shape's element count does not overflow.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "converter/base/error.h"
#include "converter/io/safetensors.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = eafuzz::ScratchPath("safetensors");
  eafuzz::WriteAll(path, data, size);
  try {
    const auto map = edgeattn::convert::load_safetensors(path);
    for (const auto& [name, a] : map) {
      // F2 (fixed): the reader checks the element count for overflow.
      if (eafuzz::ShapeOverflows(a.shape)) {
        eafuzz::Finding("safetensors: shape element count overflows size_t", name);
      }
      if (a.is_float && a.data.size() != a.numel())
        eafuzz::Finding("safetensors: data size != numel", name);
    }
  } catch (const edgeattn::convert::ConvertError&) {
  }  // anything else (std::length_error / bad_alloc of F2, UBSan of F5: fixed) is a finding
  return 0;
}
