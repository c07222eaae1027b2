// NumPy .npy arrays and .npz archives (zip of .npy, stored or deflated; read
// and written with libzip). Debian ships no maintained C++ npy library
// (no cnpy package), so the small .npy header parser lives here.
// Supported dtypes: <f2 <f4 <f8 <i4 <i8 (little endian), C order only.
#ifndef EDGEATTN_CONVERTER_IO_NPY_H_
#define EDGEATTN_CONVERTER_IO_NPY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

// Parses one .npy file image; `where` names it in errors ("calib.npz: key 'x'").
Array parse_npy(const uint8_t* data, size_t size, const std::string& where);

// Serializes `a` as .npy with dtype a.dtype (one of the supported descrs).
std::vector<uint8_t> make_npy(const Array& a);

// Reads every member "NAME.npy" of the archive as key NAME.
ArrayMap load_npz(const std::string& path);

// An archive's bytes (`what` names it in errors); entries keep their order.
std::vector<uint8_t> make_npz(const std::vector<std::pair<std::string, Array>>& entries, const std::string& what);
// Writes an archive atomically (io/file.h write_file_atomic): entries keep
// their order.
void save_npz(const std::string& path, const std::vector<std::pair<std::string, Array>>& entries);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_NPY_H_
