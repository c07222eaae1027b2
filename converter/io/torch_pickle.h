// A restricted unpickler for the data.pkl of a torch.save zip checkpoint
// holding a state dict (name -> tensor). The file is untrusted input: nothing
// is ever executed or imported. Only the opcodes a state dict of tensors
// needs are accepted (protocol 2..5 framing, ints, strings, tuples, lists,
// dicts, the memo, persistent ids, REDUCE / BUILD), and only these globals:
//   collections.OrderedDict                       -> an empty dict
//   torch._utils._rebuild_tensor_v2 (storage, offset, size, stride, ...)
//   torch._utils._rebuild_parameter (tensor, requires_grad, hooks)
//   torch.{Float,Double,Half,BFloat16,Long,Int,Short,Char,Byte,Bool}Storage
// and the persistent id ('storage', <StorageType>, key, location, numel).
// Anything else (another global such as os.system, another opcode, a value
// of the wrong kind) fails with a ConvertError naming `where`, the byte
// offset and what was found.
#ifndef EDGEATTN_CONVERTER_IO_TORCH_PICKLE_H_
#define EDGEATTN_CONVERTER_IO_TORCH_PICKLE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

enum class TorchDType { kF32, kF64, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

size_t torch_dtype_bytes(TorchDType t);
const char* torch_dtype_name(TorchDType t);  // "float32", ...

// One tensor of the state dict: a strided view of storage `key`.
struct TorchTensorRef {
  std::string storage_key;     // member data/<key> of the archive
  TorchDType dtype = TorchDType::kF32;
  uint64_t storage_numel = 0;  // elements the pickle declares for the storage
  uint64_t offset = 0;         // in elements
  std::vector<uint64_t> size, stride;
};

// Parses a pickled state dict. Keys are the parameter names, in any order.
std::map<std::string, TorchTensorRef> parse_torch_state_dict(const uint8_t* data, size_t size,
                                                             const std::string& where);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_TORCH_PICKLE_H_
