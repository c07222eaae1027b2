// The progress line of `convert` on a terminal's stderr: one status line,
// rewritten in place and erased when done (or on failure, before main()
// prints the error).
#ifndef EDGEATTN_CONVERTER_CLI_PROGRESS_H_
#define EDGEATTN_CONVERTER_CLI_PROGRESS_H_

#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

#include "converter/base/progress.h"

namespace edgeattn {
namespace convert {

class Progress {
 public:
  // `layers`: the layer names, for "layer 2 of 5 'enc_self'".
  Progress(bool enabled, std::vector<std::string> layers) : enabled_(enabled), layers_(std::move(layers)) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The ProgressFn of one stage ("convert", "verify", "held-out").
  ProgressFn stage(const std::string& name) {
    return [this, name](size_t layer, const std::string& what) { show(name, layer, what); };
  }
  void clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  void show(const std::string& stage, size_t layer, const std::string& what) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << stage << ": layer " << layer + 1 << " of " << layers_.size() << " '"
              << layers_[layer] << "': " << what << std::flush;
    shown_ = true;
  }

  bool enabled_;
  std::vector<std::string> layers_;
  bool shown_ = false;
};

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_CLI_PROGRESS_H_
