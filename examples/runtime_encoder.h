// The bundled transformer's whole encoder layer in the edgeattn runtime: the
// encoder_block layer "encoder" (LayerNorm, self-attention, residual add,
// LayerNorm, GELU FFN, residual add) and the layernorm layer "enc_norm" of a
// model converted from models/transformer/encoder_block.spec.json. Only the
// embedding lookup stays in host code.
#ifndef EDGEATTN_CONVERTER_DEMO_RUNTIME_ENCODER_H_
#define EDGEATTN_CONVERTER_DEMO_RUNTIME_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace demo {

class RuntimeEncoder {
 public:
  // Loads `path` and checks its two layers (width d_model); throws
  // ConvertError naming what is missing otherwise.
  RuntimeEncoder(const std::string& path, int d_model);
  ~RuntimeEncoder();
  RuntimeEncoder(const RuntimeEncoder&) = delete;
  RuntimeEncoder& operator=(const RuntimeEncoder&) = delete;

  const std::string& path() const { return path_; }
  // memory [len][d] = enc_norm(encoder(x)), keys >= valid masked.
  void Encode(const double* x, int len, int valid, double* memory);

 private:
  void Check(Status st, const char* what);

  std::string path_;
  std::unique_ptr<convert::LoadedModel> model_;
  int d_ = 0;
  int block_ = -1, norm_ = -1;
  LayerInfo block_info_{}, norm_info_{};
  uint8_t* arena_ = nullptr;
  Interpreter interp_;
  std::vector<uint8_t> in_, mid_, out_;
  std::vector<double> hidden_;
};

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_RUNTIME_ENCODER_H_
