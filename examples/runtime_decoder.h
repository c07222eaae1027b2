// The bundled transformer's whole decoder layer and output head in the
// edgeattn runtime: the decoder_block layer "decoder" (LayerNorm, causal
// self-attention on its KV cache, LayerNorm, cross-attention over the cached
// memory keys, LayerNorm, GELU FFN, three residual adds), the layernorm layer
// "dec_norm" and the linear layer "head" (d_model -> vocab logits) of a model
// converted from models/transformer/decoder_block.spec.json. Only the
// embedding lookup and the argmax over the logits stay in host code.
#ifndef EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_
#define EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace demo {

class RuntimeDecoder {
 public:
  // Loads `path` and checks its three layers (width d_model, vocab logits);
  // throws ConvertError naming what is missing otherwise.
  RuntimeDecoder(const std::string& path, int d_model, int vocab);
  ~RuntimeDecoder();
  RuntimeDecoder(const RuntimeDecoder&) = delete;
  RuntimeDecoder& operator=(const RuntimeDecoder&) = delete;

  const std::string& path() const { return path_; }
  int max_target_len() const { return block_info_.max_q_len; }
  // The memory [len][d] (rows >= valid masked) projected into the block's
  // cross-attention cache once per source (Interpreter::CacheKeys).
  void CacheMemory(const double* memory, int len, int valid);
  void BeginSequence();
  // One token: x [d] (embedding + position) -> logits [vocab] =
  // head(dec_norm(decoder(x))), the block through Interpreter::Step; int8
  // logits dequantized (equal int8 logits stay equal).
  void Step(const double* x, double* logits);
  // No KV cache: the block over all rows [n][d] so far (Run with the cached
  // memory keys), logits = head(dec_norm()) of the last row.
  void Rerun(const double* rows, int n, double* logits);
  // Wall time of the last Step / Rerun's block call alone, microseconds.
  double last_block_us() const { return last_block_us_; }

 private:
  void Check(Status st, const char* what);
  // dec_norm and head over the block's output row `row` of out_.
  void Head(size_t row, double* logits);
  // Layer `to`'s input from `from`'s output bytes: the bytes themselves when
  // both dtype and quantization agree, else requantized through float64.
  const void* Chain(const std::vector<uint8_t>& bytes, size_t offset, size_t n, const LayerInfo& from,
                    const LayerInfo& to, std::vector<uint8_t>* buf);

  std::string path_;
  std::unique_ptr<convert::LoadedModel> model_;
  int d_ = 0, vocab_ = 0;
  int block_ = -1, norm_ = -1, head_ = -1;
  LayerInfo block_info_{}, norm_info_{}, head_info_{};
  double last_block_us_ = 0.0;
  uint8_t* arena_ = nullptr;
  Interpreter interp_;
  std::vector<uint8_t> in_, out_, norm_in_, norm_out_, head_in_, head_out_;
  std::vector<double> hidden_;
};

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_RUNTIME_DECODER_H_
