// The bundled transformer as one generating model (Interpreter::Generate):
// a file converted from models/transformer/generate.spec.json runs the
// source embedding, encoder, the decoder steps on their KV caches, the
// target embedding and the argmax in the runtime. The host passes the
// source's token ids and reads the generated ids: nothing else.
#ifndef EDGEATTN_CONVERTER_DEMO_RUNTIME_GENERATE_H_
#define EDGEATTN_CONVERTER_DEMO_RUNTIME_GENERATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace demo {

class RuntimeGenerator {
 public:
  // Loads `path` (a generating graph: token ids in, token ids out); throws
  // ConvertError naming what is wrong otherwise.
  explicit RuntimeGenerator(const std::string& path);
  ~RuntimeGenerator();
  RuntimeGenerator(const RuntimeGenerator&) = delete;
  RuntimeGenerator& operator=(const RuntimeGenerator&) = delete;

  const std::string& path() const { return path_; }
  bool int8() const { return info_.dtype == EA_S8; }
  int max_source_len() const { return info_.max_input_rows; }
  int max_tokens() const { return info_.max_tokens; }
  size_t arena_bytes() const { return arena_bytes_; }  // the model's exact arena
  // The source ids padded with `pad` to the encoder's rows (valid_rows =
  // digits.size()), greedy tokens from `bos` until `eos` or max_tokens.
  std::vector<int> Generate(const std::vector<int>& digits, int pad, int bos, int eos);
  // Wall time of the last Generate call, microseconds.
  double last_us() const { return last_us_; }

 private:
  std::string path_;
  std::unique_ptr<convert::LoadedModel> model_;
  GraphInfo info_{};
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  Interpreter interp_;
  std::vector<int32_t> source_, tokens_;
  double last_us_ = 0.0;
};

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_RUNTIME_GENERATE_H_
