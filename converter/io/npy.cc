#include "converter/io/npy.h"

#include <zip.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/half.h"

namespace edgeattn {
namespace convert {
namespace {

size_t descr_size(const std::string& d) {
  if (d == "<f2") return 2;
  if (d == "<f4" || d == "<i4") return 4;
  if (d == "<f8" || d == "<i8") return 8;
  return 0;
}

// Value of `key` in the header dict text, e.g. 'descr': '<f4' -> "'<f4'".
std::string dict_value(const std::string& h, const std::string& key, const std::string& where) {
  const std::string k = "'" + key + "'";
  size_t p = h.find(k);
  if (p == std::string::npos) fail(where, ": .npy header has no ", k);
  p = h.find(':', p + k.size());
  if (p == std::string::npos) fail(where, ": malformed .npy header");
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  size_t end = p;
  if (p < h.size() && h[p] == '(') {
    end = h.find(')', p);
    if (end == std::string::npos) fail(where, ": malformed .npy header");
    return h.substr(p, end - p + 1);
  }
  if (p < h.size() && (h[p] == '\'' || h[p] == '"')) {
    end = h.find(h[p], p + 1);
    if (end == std::string::npos) fail(where, ": malformed .npy header");
    return h.substr(p + 1, end - p - 1);
  }
  while (end < h.size() && h[end] != ',' && h[end] != '}') ++end;
  std::string v = h.substr(p, end - p);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

Array parse_npy(const uint8_t* data, size_t size, const std::string& where) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(data, kMagic, 6) != 0) fail(where, ": not a .npy array");
  const int major = data[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = data[8] | (static_cast<size_t>(data[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail(where, ": truncated .npy header");
    header_len = data[8] | (static_cast<size_t>(data[9]) << 8) |
                 (static_cast<size_t>(data[10]) << 16) | (static_cast<size_t>(data[11]) << 24);
    header_start = 12;
  } else {
    fail(where, ": unsupported .npy version ", major);
  }
  if (header_start + header_len > size) fail(where, ": truncated .npy header");
  const std::string h(reinterpret_cast<const char*>(data + header_start), header_len);
  Array a;
  a.dtype = dict_value(h, "descr", where);
  const size_t esize = descr_size(a.dtype);
  if (esize == 0) {
    fail(where, ": unsupported dtype '", a.dtype, "' (expected <f2, <f4, <f8, <i4 or <i8)");
  }
  a.is_float = a.dtype[1] == 'f';
  if (dict_value(h, "fortran_order", where) != "False") {
    fail(where, ": fortran_order arrays are not supported");
  }
  const std::string shape = dict_value(h, "shape", where);
  size_t i = 1;
  while (i < shape.size()) {
    while (i < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i >= shape.size() || shape[i] == ')') break;
    size_t end = i;
    while (end < shape.size() && shape[end] >= '0' && shape[end] <= '9') ++end;
    if (end == i) fail(where, ": malformed .npy shape ", shape);
    // Bounded parse (std::stoull throws std::out_of_range on > 20 digits).
    size_t d = 0;
    for (size_t j = i; j < end; ++j) {
      const size_t digit = static_cast<size_t>(shape[j] - '0');
      if (d > (SIZE_MAX - digit) / 10) {
        fail(where, ": .npy shape entry ", shape.substr(i, end - i), " is too large");
      }
      d = d * 10 + digit;
    }
    a.shape.push_back(d);
    i = end;
  }
  const size_t n = checked_numel(a.shape, where);
  const uint8_t* p = data + header_start + header_len;
  const size_t avail = size - header_start - header_len;
  if (n != 0 && avail / esize < n) {
    fail(where, ": truncated .npy data (", avail, " bytes for shape ", shape_string(a.shape), ")");
  }
  resize_large(&a.data, n);
  // One loop per dtype (the dtype string compared once, not per element).
  auto convert = [&](auto read) {
    for (size_t k = 0; k < n; ++k) a.data[k] = read(p + k * esize);
  };
  if (a.dtype == "<f2") {
    convert([](const uint8_t* e) {
      uint16_t v;
      std::memcpy(&v, e, 2);
      return static_cast<double>(half_to_float(v));
    });
  } else if (a.dtype == "<f4") {
    convert([](const uint8_t* e) {
      float v;
      std::memcpy(&v, e, 4);
      return static_cast<double>(v);
    });
  } else if (a.dtype == "<f8") {
    if (n != 0) std::memcpy(a.data.data(), p, n * 8);
  } else if (a.dtype == "<i4") {
    convert([](const uint8_t* e) {
      int32_t v;
      std::memcpy(&v, e, 4);
      return static_cast<double>(v);
    });
  } else {
    convert([](const uint8_t* e) {
      int64_t v;
      std::memcpy(&v, e, 8);
      return static_cast<double>(v);
    });
  }
  return a;
}

std::vector<uint8_t> make_npy(const Array& a) {
  const size_t esize = descr_size(a.dtype);
  if (esize == 0) fail("make_npy: unsupported dtype '", a.dtype, "'");
  std::string shape = "(";
  for (size_t d : a.shape) shape += std::to_string(d) + ", ";
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);
  if (a.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string h = "{'descr': '" + a.dtype + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  const uint8_t magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             static_cast<uint8_t>(h.size() & 0xFF),
                             static_cast<uint8_t>(h.size() >> 8)};
  // Magic and header written into a vector of their size (inserting them
  // into an empty reserved vector trips GCC 12's -Warray-bounds), then the data.
  std::vector<uint8_t> out(sizeof(magic) + h.size());
  std::memcpy(out.data(), magic, sizeof(magic));
  std::memcpy(out.data() + sizeof(magic), h.data(), h.size());
  out.reserve(out.size() + a.data.size() * esize);
  for (double v : a.data) {
    uint8_t e[8];
    if (a.dtype == "<f2") {
      const uint16_t x = float_to_half(static_cast<float>(v));
      std::memcpy(e, &x, 2);
    } else if (a.dtype == "<f4") {
      const float x = static_cast<float>(v);
      std::memcpy(e, &x, 4);
    } else if (a.dtype == "<f8") {
      std::memcpy(e, &v, 8);
    } else if (a.dtype == "<i4") {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(e, &x, 4);
    } else {
      const int64_t x = static_cast<int64_t>(v);
      std::memcpy(e, &x, 8);
    }
    out.insert(out.end(), e, e + esize);
  }
  return out;
}

ArrayMap load_npz(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (z == nullptr) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    fail(path, ": cannot read .npz archive: ", why);
  }
  std::unique_ptr<zip_t, void (*)(zip_t*)> guard(z, [](zip_t* p) { zip_discard(p); });
  ArrayMap out;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      fail(path, ": cannot read .npz entry ", i, ": ", zip_strerror(z));
    }
    std::string name = st.name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    const std::string key = name.substr(0, name.size() - 4);
    const std::string where = path + ": key '" + key + "'";
    std::vector<uint8_t> buf(static_cast<size_t>(st.size));
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    if (f == nullptr) fail(where, ": cannot open archive member: ", zip_strerror(z));
    const zip_int64_t got = zip_fread(f, buf.data(), buf.size());
    const bool ok = got == static_cast<zip_int64_t>(buf.size());
    std::string why = ok ? "" : zip_error_strerror(zip_file_get_error(f));
    zip_fclose(f);
    if (!ok) fail(where, ": truncated or corrupt archive member (", why, ")");
    out[key] = parse_npy(buf.data(), buf.size(), where);
  }
  return out;
}

std::vector<uint8_t> make_npz(const std::vector<std::pair<std::string, Array>>& entries, const std::string& what) {
  // The archive is built in a libzip memory source, so the caller writes the
  // bytes atomically like every other output.
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail(what, ": cannot create .npz archive: ", why);
  }
  zip_t* z = zip_open_from_source(buffer, ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (z == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(buffer);
    fail(what, ": cannot create .npz archive: ", why);
  }
  zip_error_fini(&error);
  zip_source_keep(buffer);  // read back after zip_close
  std::vector<std::vector<uint8_t>> images;  // must live until zip_close
  images.reserve(entries.size());
  for (const auto& [key, a] : entries) {
    images.push_back(make_npy(a));
    zip_source_t* src = zip_source_buffer(z, images.back().data(), images.back().size(), 0);
    if (src == nullptr || zip_file_add(z, (key + ".npy").c_str(), src, ZIP_FL_OVERWRITE) < 0) {
      if (src != nullptr) zip_source_free(src);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      zip_source_free(buffer);
      fail(what, ": cannot add '", key, "': ", why);
    }
  }
  if (zip_close(z) != 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    zip_source_free(buffer);
    fail(what, ": cannot write .npz archive: ", why);
  }
  std::vector<uint8_t> bytes;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(buffer, &st) == 0 && zip_source_open(buffer) == 0) {
    bytes.resize(static_cast<size_t>(st.size));
    const zip_int64_t got = bytes.empty() ? 0 : zip_source_read(buffer, bytes.data(), st.size);
    zip_source_close(buffer);
    if (got != static_cast<zip_int64_t>(st.size)) bytes.clear();
  }
  zip_source_free(buffer);
  if (bytes.empty()) fail(what, ": cannot read back the .npz archive built in memory");
  return bytes;
}

void save_npz(const std::string& path, const std::vector<std::pair<std::string, Array>>& entries) {
  const std::vector<uint8_t> bytes = make_npz(entries, path);
  write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace convert
}  // namespace edgeattn
