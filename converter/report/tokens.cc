#include "converter/report/tokens.h"

#include "converter/base/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace convert {
namespace {

// The SVG is UTF-8 XML: a token must be valid UTF-8 (no overlong forms checked; a label, not a parser).
bool utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace

std::vector<std::string> read_vocabulary(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  std::vector<std::string> vocab;
  std::string line;
  auto finish = [&](bool last) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() && !last) {
      fail(path, ": line ", vocab.size() + 1, " is empty (--tokens: one token per line, line i is token id i - 1)");
    }
    if (!utf8(line)) fail(path, ": line ", vocab.size() + 1, " is not UTF-8 text");
    if (!line.empty()) vocab.push_back(line);
    line.clear();
  };
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\n') {
      finish(false);
    } else {
      line += static_cast<char>(bytes[i]);
    }
  }
  finish(true);  // a last line without '\n'
  if (vocab.empty()) fail(path, ": no tokens (--tokens: one token per line, line i is token id i - 1)");
  return vocab;
}

std::vector<std::string> token_labels(const ArrayMap& npz, const std::string& path, const std::string& key, int n,
                                      int len, int sample, const std::vector<std::string>& vocab,
                                      const std::string& vocab_path) {
  const auto it = npz.find(key);
  if (it == npz.end()) return {};
  const Array& a = it->second;
  if (a.is_float || a.shape.size() != 2 || a.shape[0] != static_cast<size_t>(n) ||
      a.shape[1] != static_cast<size_t>(len)) {
    fail(path, ": key '", key, "' must be an integer array [", n, ", ", len, "] of token ids, got ", a.dtype, " ",
         shape_string(a.shape));
  }
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double id = a.data[i];
    if (id < 0 || id >= static_cast<double>(vocab.size())) {
      fail(path, ": key '", key, "': id ", static_cast<long long>(id), " at sample ", i / a.shape[1], ", position ",
           i % a.shape[1], " is outside the vocabulary (", vocab.size(), " tokens in ", vocab_path, ")");
    }
  }
  std::vector<std::string> labels;
  for (int j = 0; j < len; ++j) {
    labels.push_back(vocab[static_cast<size_t>(a.data[static_cast<size_t>(sample) * len + j])]);
  }
  return labels;
}

}  // namespace convert
}  // namespace edgeattn
