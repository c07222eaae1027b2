// How a long stage reports where it is: called with (layer index, "what is
// being done") before each layer's work. The command line shows it on a
// terminal (cli/progress.h); library callers may pass nullptr.
#ifndef EDGEATTN_CONVERTER_BASE_PROGRESS_H_
#define EDGEATTN_CONVERTER_BASE_PROGRESS_H_

#include <cstddef>
#include <functional>
#include <string>

namespace edgeattn {
namespace convert {

using ProgressFn = std::function<void(size_t layer, const std::string& what)>;

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_BASE_PROGRESS_H_
