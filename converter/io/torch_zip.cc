#include "converter/io/torch_zip.h"

#include <zip.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/half.h"
#include "converter/io/torch_pickle.h"

namespace edgeattn {
namespace convert {
namespace {

constexpr uint64_t kMaxPickleBytes = uint64_t{1} << 28;  // a state dict's pickle is small

class Archive {
 public:
  explicit Archive(const std::string& path) : path_(path) {
    int err = 0;
    z_ = zip_open(path.c_str(), ZIP_RDONLY, &err);
    if (z_ == nullptr) {
      zip_error_t e;
      zip_error_init_with_code(&e, err);
      const std::string why = zip_error_strerror(&e);
      zip_error_fini(&e);
      fail(path, ": cannot open the PyTorch zip archive (", why, ")");
    }
  }
  ~Archive() { zip_discard(z_); }
  Archive(const Archive&) = delete;
  Archive& operator=(const Archive&) = delete;

  // The one '<prefix>/data.pkl' member: returns <prefix>/.
  std::string Prefix() {
    std::string prefix;
    const zip_int64_t n = zip_get_num_entries(z_, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* name = zip_get_name(z_, static_cast<zip_uint64_t>(i), 0);
      if (name == nullptr) continue;
      const std::string s = name;
      const size_t slash = s.find('/');
      if (slash == std::string::npos || s.compare(slash, std::string::npos, "/data.pkl") != 0) continue;
      if (!prefix.empty()) fail(path_, ": more than one data.pkl in the archive");
      prefix = s.substr(0, slash + 1);
    }
    if (prefix.empty()) fail(path_, ": no <name>/data.pkl member (not a torch.save zip archive)");
    return prefix;
  }

  // The whole member `name`, at most `limit` bytes; `present` false if absent.
  std::vector<uint8_t> Read(const std::string& name, uint64_t limit, bool* present = nullptr) {
    zip_stat_t st;
    if (zip_stat(z_, name.c_str(), 0, &st) != 0) {
      if (present != nullptr) {
        *present = false;
        return {};
      }
      fail(path_, ": missing archive member '", name, "'");
    }
    if (present != nullptr) *present = true;
    if (st.size > limit) fail(path_, ": archive member '", name, "' has ", st.size, " bytes, more than ", limit);
    std::vector<uint8_t> buf(static_cast<size_t>(st.size));
    zip_file_t* f = zip_fopen(z_, name.c_str(), 0);
    if (f == nullptr) fail(path_, ": cannot open archive member '", name, "': ", zip_strerror(z_));
    const zip_int64_t got = buf.empty() ? 0 : zip_fread(f, buf.data(), buf.size());
    const bool ok = got == static_cast<zip_int64_t>(buf.size());
    const std::string why = ok ? "" : zip_error_strerror(zip_file_get_error(f));
    zip_fclose(f);
    if (!ok) fail(path_, ": archive member '", name, "' is truncated or corrupt (", why, ")");
    return buf;
  }

 private:
  std::string path_;
  zip_t* z_ = nullptr;
};

double element(const uint8_t* p, TorchDType t) {
  switch (t) {
    case TorchDType::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case TorchDType::kF64: { double v; std::memcpy(&v, p, 8); return v; }
    case TorchDType::kF16: { uint16_t h; std::memcpy(&h, p, 2); return half_to_float(h); }
    case TorchDType::kBF16: { uint16_t h; std::memcpy(&h, p, 2); return bf16_to_float(h); }
    case TorchDType::kI64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case TorchDType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case TorchDType::kI16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case TorchDType::kI8: return static_cast<int8_t>(*p);
    case TorchDType::kU8: return *p;
    case TorchDType::kBool: return *p != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

bool is_float(TorchDType t) {
  return t == TorchDType::kF32 || t == TorchDType::kF64 || t == TorchDType::kF16 || t == TorchDType::kBF16;
}

}  // namespace

ArrayMap load_torch_zip(const std::string& path) {
  Archive archive(path);
  const std::string prefix = archive.Prefix();
  bool has_order = false;
  const std::vector<uint8_t> order = archive.Read(prefix + "byteorder", 16, &has_order);
  if (has_order && std::string(order.begin(), order.end()) != "little") {
    fail(path, ": storages are stored big-endian; only little-endian checkpoints are read");
  }
  const std::vector<uint8_t> pkl = archive.Read(prefix + "data.pkl", kMaxPickleBytes);
  const std::map<std::string, TorchTensorRef> refs =
      parse_torch_state_dict(pkl.data(), pkl.size(), path + ": data.pkl");
  std::map<std::string, std::vector<uint8_t>> storages;
  ArrayMap out;
  for (const auto& [name, t] : refs) {
    const std::string where = path + ": tensor '" + name + "'";
    const size_t esize = torch_dtype_bytes(t.dtype);
    auto it = storages.find(t.storage_key);
    if (it == storages.end()) {
      const uint64_t bytes = t.storage_numel * esize;
      if (t.storage_numel > (uint64_t{1} << 40)) fail(where, ": storage of ", t.storage_numel, " elements");
      it = storages.emplace(t.storage_key, archive.Read(prefix + "data/" + t.storage_key, bytes)).first;
      if (it->second.size() != bytes) {
        fail(where, ": storage '", t.storage_key, "' has ", it->second.size(), " bytes, the pickle says ",
             t.storage_numel, " x ", esize);
      }
    }
    const std::vector<uint8_t>& storage = it->second;
    Array a;
    a.dtype = torch_dtype_name(t.dtype);
    a.is_float = is_float(t.dtype);
    for (uint64_t d : t.size) a.shape.push_back(static_cast<size_t>(d));
    const size_t numel = checked_numel(a.shape, where);
    // The last element the view reaches must lie inside the storage.
    uint64_t last = t.offset;
    for (size_t d = 0; d < t.size.size(); ++d) {
      if (t.size[d] == 0) continue;
      last += (t.size[d] - 1) * t.stride[d];  // sizes and strides are < 2^40 (parser)
    }
    if (numel > 0 && last >= t.storage_numel) {
      fail(where, ": view (offset ", t.offset, ", shape ", shape_string(a.shape), ") reaches element ", last,
           " of a storage of ", t.storage_numel);
    }
    a.data.resize(numel);
    std::vector<uint64_t> idx(t.size.size(), 0);
    for (size_t i = 0; i < numel; ++i) {
      uint64_t e = t.offset;
      for (size_t d = 0; d < idx.size(); ++d) e += idx[d] * t.stride[d];
      a.data[i] = element(storage.data() + e * esize, t.dtype);
      for (size_t d = idx.size(); d-- > 0;) {  // row-major increment
        if (++idx[d] < t.size[d]) break;
        idx[d] = 0;
      }
    }
    out[name] = std::move(a);
  }
  return out;
}

}  // namespace convert
}  // namespace edgeattn
