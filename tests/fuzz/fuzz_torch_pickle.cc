// libFuzzer target: the restricted unpickler of torch zip checkpoints
// (parse_torch_state_dict, converter/io/torch_pickle.h) on raw pickle bytes.
// ConvertError is an accepted rejection. An accepted state dict must hold
// only tensors whose size and stride have the same rank (the reader relies
// on it). Seeds: tests/fuzz/corpus/torch_pickle (the data.pkl of the
// committed PyTorch fixture, and hostile pickles the parser must refuse).
#include <cstdint>
#include <string>

#include "converter/base/error.h"
#include "converter/io/torch_pickle.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& [name, t] : edgeattn::convert::parse_torch_state_dict(data, size, "fuzz.pkl")) {
      if (t.size.size() != t.stride.size()) eafuzz::Finding("torch pickle: size/stride rank differ", name);
    }
  } catch (const edgeattn::convert::ConvertError&) {
  }
  return 0;
}
