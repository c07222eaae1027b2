// The bundled transformer's whole decoder layer in the edgeattn runtime: the
// decoder_block layer "decoder" (LayerNorm, causal self-attention on its KV
// cache, LayerNorm, cross-attention over the cached memory keys, LayerNorm,
// GELU FFN, three residual adds) and the layernorm layer "dec_norm" of a
// model converted from models/transformer/decoder_block.spec.json. Only the
// embedding lookup, the output head and argmax stay in host code.
#ifndef EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_
#define EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/runner.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace demo {

class RuntimeDecoder {
 public:
  // Loads `path` and checks its two layers (width d_model); throws
  // ConvertError naming what is missing otherwise.
  RuntimeDecoder(const std::string& path, int d_model);
  ~RuntimeDecoder();
  RuntimeDecoder(const RuntimeDecoder&) = delete;
  RuntimeDecoder& operator=(const RuntimeDecoder&) = delete;

  const std::string& path() const { return path_; }
  int max_target_len() const { return block_info_.max_q_len; }
  // The memory [len][d] (rows >= valid masked) projected into the block's
  // cross-attention cache once per source (Interpreter::CacheKeys).
  void CacheMemory(const double* memory, int len, int valid);
  void BeginSequence();
  // One token: x [d] (embedding + position) -> out [d] = dec_norm(decoder(x)),
  // the block through Interpreter::Step.
  void Step(const double* x, double* out);
  // No KV cache: the block over all rows [n][d] so far (Run with the cached
  // memory keys), out = dec_norm of the last row.
  void Rerun(const double* rows, int n, double* out);
  // Wall time of the last Step / Rerun's block call alone, microseconds.
  double last_block_us() const { return last_block_us_; }

 private:
  void Check(Status st, const char* what);
  // dec_norm over the block's output row `row` of out_.
  void Norm(size_t row, double* out);

  std::string path_;
  std::unique_ptr<convert::LoadedModel> model_;
  int d_ = 0;
  int block_ = -1, norm_ = -1;
  LayerInfo block_info_{}, norm_info_{};
  double last_block_us_ = 0.0;
  uint8_t* arena_ = nullptr;
  Interpreter interp_;
  std::vector<uint8_t> in_, out_, norm_in_, norm_out_;
  std::vector<double> hidden_;
};

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_
