// Input files recognised by their bytes, never by their extension:
//   safetensors     8-byte little-endian header length, then '{'
//   .npz            zip ('PK\3\4', or 'PK\5\6' when empty) whose members end in .npy
//   torch zip       zip with a member '<name>/data.pkl' (torch.save since PyTorch 1.6)
//   legacy torch    a pickle (0x80, protocol 2..5), with or without torch's legacy magic
//   .npy            a single NumPy array ('\x93NUMPY')
// Weights are read from safetensors, .npz and torch zip checkpoints (a state
// dict, through a restricted unpickler: torch_pickle.h); calibration /
// reference / task data from .npz only. Legacy torch pickles are recognised
// and refused with a message naming the file and how to re-save or export.
#ifndef EDGEATTN_CONVERTER_IO_FORMATS_H_
#define EDGEATTN_CONVERTER_IO_FORMATS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

enum class FileFormat {
  kSafetensors,
  kNpz,
  kTorchZip,     // zip with '<name>/data.pkl'
  kTorchLegacy,  // pickle starting with torch's legacy magic number
  kPickle,       // another pickle (protocol 2..5)
  kNpy,
  kZip,          // a zip archive that is neither of the above
  kUnknown,
};

// From the first bytes of a file (`size` is the whole file's size when known,
// `head` its first min(size, 64) bytes) and, for zip archives, the member names
// (`members`, newline separated; empty when the central directory could not be
// read, in which case the first local header's name decides).
FileFormat detect_format(const uint8_t* head, size_t head_size, const std::string& members);

// Reads the start of PATH (and a zip's member list) and detects its format.
// Throws "PATH: cannot read: ..." when the file cannot be opened.
FileFormat detect_file_format(const std::string& path);

// "safetensors", "a PyTorch checkpoint (torch.save zip archive)", ...
const char* format_name(FileFormat f);

// Weights: safetensors, .npz or a torch zip checkpoint, whatever the name. Anything else fails naming
// PATH, what it is, the formats read and how to export a PyTorch state dict.
ArrayMap load_weights(const std::string& path);

// Data (calibration, reference, classify): .npz only. `what` names the role
// in errors ("calibration data (--calib)").
ArrayMap load_data_npz(const std::string& path, const std::string& what);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_FORMATS_H_
