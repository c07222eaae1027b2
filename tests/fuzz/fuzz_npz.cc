// libFuzzer target: the .npy parser (parse_npy), the .npz reader (load_npz,
// libzip) and the format detection by bytes in front of them (load_weights:
// safetensors, .npz, PyTorch checkpoints refused). Inputs starting with the
// .npy magic go to parse_npy directly; everything else is written to a
// scratch file and read through load_weights, then as .npz.
// ConvertError is an accepted rejection; accepted arrays must hold numel()
// values and a shape whose element count does not overflow.
#include <cstdint>
#include <cstring>
#include <string>

#include "converter/base/error.h"
#include "converter/io/formats.h"
#include "converter/io/npy.h"
#include "fuzz_util.h"

namespace {

void Check(const edgeattn::convert::Array& a, const std::string& name) {
  // F3 (fixed): parse_npy rejects shapes whose element count overflows.
  if (eafuzz::ShapeOverflows(a.shape)) eafuzz::Finding("npy: shape element count overflows", name);
  if (a.data.size() != a.numel()) eafuzz::Finding("npy: data size != numel", name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = eafuzz::ScratchPath("npz");
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  try {
    if (size >= 6 && std::memcmp(data, kMagic, 6) == 0) {
      Check(edgeattn::convert::parse_npy(data, size, "fuzz.npy"), "fuzz.npy");
    } else {
      eafuzz::WriteAll(path, data, size);
      try {
        for (const auto& [name, a] : edgeattn::convert::load_weights(path)) Check(a, name);
      } catch (const edgeattn::convert::ConvertError&) {
      }
      for (const auto& [name, a] : edgeattn::convert::load_npz(path)) Check(a, name);
    }
  } catch (const edgeattn::convert::ConvertError&) {
  }  // anything else (e.g. std::out_of_range from a shape entry, F4, fixed) is a finding
  return 0;
}
