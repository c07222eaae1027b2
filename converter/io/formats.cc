#include "converter/io/formats.h"

#include <zip.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/io/safetensors.h"
#include "converter/io/torch_zip.h"

namespace edgeattn {
namespace convert {
namespace {

constexpr size_t kHeadBytes = 512;

// torch.save's legacy (non-zip) format starts with the pickled long
// 0x1950a86a20f9469cfc6c (LONG1, 10 bytes, little endian).
constexpr uint8_t kTorchLegacyMagic[12] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

const char kExport[] =
    "export the state dict to safetensors (from safetensors.torch import save_file; "
    "save_file(model.state_dict(), \"weights.safetensors\")) or to .npz (numpy.savez(\"weights.npz\", "
    "**{k: v.numpy() for k, v in model.state_dict().items()}))";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_torch(FileFormat f) {
  return f == FileFormat::kTorchZip || f == FileFormat::kTorchLegacy || f == FileFormat::kPickle;
}

// Member names of a zip archive, newline separated ("" if it cannot be opened).
std::string zip_members(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr) return "";
  std::string names;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (name != nullptr) names += std::string(name) + "\n";
  }
  zip_discard(z);
  return names;
}

std::string first_bytes(const std::string& path) {
  const std::vector<uint8_t> head = read_file_head(path, 8);
  std::string s;
  for (size_t i = 0; i < head.size(); ++i) {
    char b[4];
    std::snprintf(b, sizeof b, "%s%02x", i ? " " : "", head[i]);
    s += b;
  }
  return s;
}

}  // namespace

FileFormat detect_format(const uint8_t* head, size_t head_size, const std::string& members) {
  const bool zip_local = head_size >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0;
  const bool zip_empty = head_size >= 4 && std::memcmp(head, "PK\x05\x06", 4) == 0;
  if (zip_local || zip_empty) {
    std::vector<std::string> names;
    size_t start = 0;
    for (size_t nl = members.find('\n'); nl != std::string::npos; nl = members.find('\n', start)) {
      names.push_back(members.substr(start, nl - start));
      start = nl + 1;
    }
    // No central directory (truncated archive): the first local header's name.
    if (names.empty() && zip_local && head_size >= 30) {
      const size_t len = head[26] | (static_cast<size_t>(head[27]) << 8);
      if (30 + len <= head_size) names.emplace_back(reinterpret_cast<const char*>(head + 30), len);
    }
    bool npy = false;
    for (const std::string& n : names) {
      if (n == "data.pkl" || ends_with(n, "/data.pkl")) return FileFormat::kTorchZip;
      npy = npy || ends_with(n, ".npy");
    }
    if (npy || names.empty()) return FileFormat::kNpz;  // numpy.savez() of nothing is an empty zip
    return FileFormat::kZip;
  }
  if (head_size >= 9 && head[8] == '{') return FileFormat::kSafetensors;
  if (head_size >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) {
    // Protocol 4+ may put a FRAME (0x95 + 8 bytes) before the magic.
    for (size_t at = 2; at <= 11 && at + sizeof kTorchLegacyMagic <= head_size; ++at) {
      if (std::memcmp(head + at, kTorchLegacyMagic, sizeof kTorchLegacyMagic) == 0) return FileFormat::kTorchLegacy;
    }
    return FileFormat::kPickle;
  }
  if (head_size >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return FileFormat::kNpy;
  return FileFormat::kUnknown;
}

FileFormat detect_file_format(const std::string& path) {
  const std::vector<uint8_t> head = read_file_head(path, kHeadBytes);
  if (head.empty()) fail(path, ": empty file");
  const bool zip = head.size() >= 4 && head[0] == 'P' && head[1] == 'K';
  return detect_format(head.data(), head.size(), zip ? zip_members(path) : std::string());
}

const char* format_name(FileFormat f) {
  switch (f) {
    case FileFormat::kSafetensors:
      return "a safetensors file";
    case FileFormat::kNpz:
      return "a .npz archive";
    case FileFormat::kTorchZip:
      return "a PyTorch checkpoint (torch.save zip archive with data.pkl)";
    case FileFormat::kTorchLegacy:
      return "a legacy PyTorch checkpoint (torch.save pickle, before PyTorch 1.6 or "
             "_use_new_zipfile_serialization=False)";
    case FileFormat::kPickle:
      return "a Python pickle (torch.save or pickle.dump)";
    case FileFormat::kNpy:
      return "a single .npy array (not a set of named tensors)";
    case FileFormat::kZip:
      return "a zip archive with neither .npy members nor a PyTorch data.pkl";
    case FileFormat::kUnknown:
      break;
  }
  return "an unknown format";
}

ArrayMap load_weights(const std::string& path) {
  const FileFormat f = detect_file_format(path);
  if (f == FileFormat::kSafetensors) return load_safetensors(path);
  if (f == FileFormat::kNpz) return load_npz(path);
  if (f == FileFormat::kTorchZip) return load_torch_zip(path);
  if (is_torch(f)) {
    fail(path, ": ", format_name(f), ": only torch.save's zip format (the default since PyTorch 1.6) is read; "
         "re-save with torch.save(model.state_dict(), \"model.pt\"), or ", kExport);
  }
  fail(path, ": ", format_name(f),
       f == FileFormat::kUnknown ? " (first bytes " + first_bytes(path) + ")" : std::string(),
       ": weights are read from safetensors files, .npz archives and PyTorch zip checkpoints (whatever their names); ", kExport);
}

ArrayMap load_data_npz(const std::string& path, const std::string& what) {
  const FileFormat f = detect_file_format(path);
  if (f == FileFormat::kNpz) return load_npz(path);
  fail(path, ": ", format_name(f),
       f == FileFormat::kUnknown ? " (first bytes " + first_bytes(path) + ")" : std::string(), ": ", what,
       " is read from .npz archives only (numpy.savez(\"data.npz\", **arrays); see docs/workflow.md)");
}

}  // namespace convert
}  // namespace edgeattn
