// Whole-file reads and crash-safe writes (temp file in the same directory,
// fsync, rename; the temp file is removed on any failure).
#ifndef EDGEATTN_CONVERTER_IO_FILE_H_
#define EDGEATTN_CONVERTER_IO_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {
namespace convert {

// Throws ConvertError("PATH: cannot read: <reason>").
std::vector<uint8_t> read_file(const std::string& path);
// The first min(file size, max_bytes) bytes; same errors.
std::vector<uint8_t> read_file_head(const std::string& path, size_t max_bytes);

// Writes PATH.tmp.<pid>, fsyncs it and renames it over PATH.
void write_file_atomic(const std::string& path, const void* data, size_t size);

// Fails now, naming PATH, if PATH could not be written later (its directory is
// missing or not writable, or PATH is a directory): creates and removes the
// temporary file write_file_atomic would use.
void check_writable(const std::string& path);

// Last path component ("a/b/c.npz" -> "c.npz").
std::string base_name(const std::string& path);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_IO_FILE_H_
