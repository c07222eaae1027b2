#include "converter/io/safetensors.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/half.h"

namespace edgeattn {
namespace convert {
namespace {

size_t dtype_size(const std::string& d) {
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

}  // namespace

ArrayMap load_safetensors(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  if (bytes.size() < 8) fail(path, ": truncated safetensors file (", bytes.size(), " bytes)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[static_cast<size_t>(i)];
  if (header_len > bytes.size() - 8) {
    fail(path, ": truncated safetensors file (header of ", header_len, " bytes, file has ",
         bytes.size(), ")");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(header_len));
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": malformed safetensors header: ", e.what());
  }
  if (!header.is_object()) fail(path, ": malformed safetensors header: not a JSON object");
  const uint8_t* data = bytes.data() + 8 + header_len;
  const uint64_t data_size = bytes.size() - 8 - header_len;
  ArrayMap out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    const nlohmann::json& e = it.value();
    Array a;
    uint64_t begin = 0, end = 0;
    try {
      a.dtype = e.at("dtype").get<std::string>();
    } catch (const std::exception& ex) {
      fail(path, ": tensor '", name, "': malformed header entry: ", ex.what());
    }
    // shape / data_offsets: arrays of unsigned integers only. nlohmann parses
    // negative, fractional or > 2^64 numbers as signed/float, and get<size_t>
    // on an out-of-range float is undefined behaviour, so check the type first.
    const auto unsigned_array = [&](const char* key) -> const nlohmann::json& {
      const auto f = e.is_object() ? e.find(key) : e.end();
      if (!e.is_object() || f == e.end() || !f->is_array()) {
        fail(path, ": tensor '", name, "': malformed header entry: '", key,
             "' must be an array of unsigned integers");
      }
      for (const auto& v : *f) {
        if (!v.is_number_unsigned()) {
          fail(path, ": tensor '", name, "': malformed header entry: '", key, "' has ",
               v.dump(), ", expected an unsigned integer");
        }
      }
      return *f;
    };
    const nlohmann::json& shape = unsigned_array("shape");
    const nlohmann::json& off = unsigned_array("data_offsets");
    if (off.size() != 2) {
      fail(path, ": tensor '", name, "': malformed header entry: data_offsets must have 2 entries");
    }
    for (const auto& v : shape) a.shape.push_back(static_cast<size_t>(v.get<uint64_t>()));
    begin = off[0].get<uint64_t>();
    end = off[1].get<uint64_t>();
    const size_t esize = dtype_size(a.dtype);
    if (esize == 0) fail(path, ": tensor '", name, "': unknown dtype '", a.dtype, "'");
    if (begin > end || end > data_size) {
      fail(path, ": truncated safetensors file: tensor '", name, "' needs bytes [", begin, ", ",
           end, ") of ", data_size);
    }
    const size_t n = checked_numel(a.shape, path + ": tensor '" + name + "'");
    // n * esize may overflow: compare n against the byte count / esize first.
    if ((end - begin) % esize != 0 || (end - begin) / esize != n) {
      fail(path, ": tensor '", name, "': ", end - begin, " bytes for ", a.dtype, " shape ",
           shape_string(a.shape));
    }
    a.is_float = a.dtype == "F32" || a.dtype == "F16" || a.dtype == "BF16" || a.dtype == "F64";
    if (a.is_float) {
      const uint8_t* p = data + begin;
      a.data.resize(n);
      for (size_t k = 0; k < a.data.size(); ++k) {
        const uint8_t* q = p + k * esize;
        if (a.dtype == "F32") {
          float v;
          std::memcpy(&v, q, 4);
          a.data[k] = v;
        } else if (a.dtype == "F64") {
          std::memcpy(&a.data[k], q, 8);
        } else {
          uint16_t v;
          std::memcpy(&v, q, 2);
          a.data[k] = a.dtype == "F16" ? half_to_float(v) : bf16_to_float(v);
        }
      }
    }
    out[name] = std::move(a);
  }
  return out;
}

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Array>>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::vector<uint8_t> blob;
  for (const auto& [name, a] : tensors) {
    const size_t begin = blob.size();
    for (double v : a.data) {
      uint8_t e[8];
      size_t n = 0;
      if (a.dtype == "F32") {
        const float x = static_cast<float>(v);
        std::memcpy(e, &x, n = 4);
      } else if (a.dtype == "F64") {
        std::memcpy(e, &v, n = 8);
      } else if (a.dtype == "F16") {
        const uint16_t x = float_to_half(static_cast<float>(v));
        std::memcpy(e, &x, n = 2);
      } else if (a.dtype == "BF16") {
        const float x = static_cast<float>(v);
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        const uint16_t b = static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        std::memcpy(e, &b, n = 2);
      } else if (a.dtype == "I64") {
        const int64_t x = static_cast<int64_t>(v);
        std::memcpy(e, &x, n = 8);
      } else if (a.dtype == "I32") {
        const int32_t x = static_cast<int32_t>(v);
        std::memcpy(e, &x, n = 4);
      } else {
        fail(path, ": cannot write dtype '", a.dtype, "'");
      }
      blob.insert(blob.end(), e, e + n);
    }
    header[name] = {{"dtype", a.dtype}, {"shape", a.shape}, {"data_offsets", {begin, blob.size()}}};
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8 != 0) h += ' ';
  std::vector<uint8_t> out(8);
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), blob.begin(), blob.end());
  write_file_atomic(path, out.data(), out.size());
}

}  // namespace convert
}  // namespace edgeattn
