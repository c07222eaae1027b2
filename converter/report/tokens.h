// Token labels for heatmap axes (eval --tokens): a vocabulary file and the
// token ids of each layer's query rows and key columns.
#ifndef EDGEATTN_CONVERTER_REPORT_TOKENS_H_
#define EDGEATTN_CONVERTER_REPORT_TOKENS_H_

#include <string>
#include <vector>

#include "converter/base/array.h"

namespace edgeattn {
namespace convert {

// One token per line, line i (from 0) = token id i; a '\r' before the '\n'
// is dropped. Throws naming the file and line for an empty file or line.
std::vector<std::string> read_vocabulary(const std::string& path);

// The tokens of sample `sample` from npz[key], an integer array [n, len] of
// ids into `vocab`. Empty if the key is absent; throws naming `path`, the key
// and the position for a wrong shape, a non-integer array or an id outside
// the vocabulary.
std::vector<std::string> token_labels(const ArrayMap& npz, const std::string& path, const std::string& key, int n,
                                      int len, int sample, const std::vector<std::string>& vocab,
                                      const std::string& vocab_path);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_REPORT_TOKENS_H_
