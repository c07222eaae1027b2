// PyTorch checkpoints in the zip format torch.save writes by default since
// PyTorch 1.6: <archive>/data.pkl (the pickled state dict, read by the
// restricted unpickler of torch_pickle.h) and <archive>/data/<key> (raw
// little-endian storages). Tensors may be views (offset, strides) of a shared
// storage; each is copied out row-major and converted to float64.
#ifndef EDGEATTN_CONVERTER_IO_TORCH_ZIP_H_
#define EDGEATTN_CONVERTER_IO_TORCH_ZIP_H_

#include <string>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

ArrayMap load_torch_zip(const std::string& path);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_TORCH_ZIP_H_
