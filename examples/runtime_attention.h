// The transformer's three attention layers run by the edgeattn runtime on
// float64 activations: one .eatn model (int8 or f32), one Interpreter and its
// arena. Inputs are quantized with the layer's query/key quantization (int8)
// or converted to float (f32); outputs come back as float64.
#ifndef EDGEATTN_CONVERTER_DEMO_RUNTIME_ATTENTION_H_
#define EDGEATTN_CONVERTER_DEMO_RUNTIME_ATTENTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace demo {

class RuntimeAttention {
 public:
  // Loads `path` and checks it has enc_self, a KV-cache dec_self and a cross
  // dec_cross of width d_model; throws ConvertError otherwise.
  RuntimeAttention(const std::string& path, int d_model);
  ~RuntimeAttention();
  RuntimeAttention(const RuntimeAttention&) = delete;
  RuntimeAttention& operator=(const RuntimeAttention&) = delete;

  bool int8() const { return dtype_ == EA_S8; }
  const std::string& path() const { return path_; }
  int max_target_len() const { return self_max_len_; }

  // enc_self over x [len][d] with keys >= valid masked -> out [len][d].
  void Encoder(const double* x, int len, int valid, double* out);
  // dec_cross: projects and caches the encoder memory [len][d] once per source.
  void CacheMemory(const double* memory, int len, int valid);
  // dec_cross for one decoder row against the cached memory.
  void Cross(const double* query, double* out);
  // dec_self, cached: BeginSequence, then one Step per token.
  void BeginSequence();
  void SelfStep(const double* query, double* out);
  // dec_self, no cache: a full causal run over rows [n][d]; out = the last row.
  void SelfRerun(const double* rows, int n, double* out);
  // Wall time of the last SelfStep / SelfRerun's runtime call alone
  // (Interpreter::Step or Run; not the quantization around it), microseconds.
  double last_self_us() const { return last_self_us_; }

 private:
  void Check(Status st, const char* what);
  size_t ElementBytes() const;
  // In the layer's dtype: int8 with `q`, or float.
  const void* Encode(const double* x, size_t n, const ea_quant& q, std::vector<uint8_t>* buf) const;
  // n outputs from element `offset` of buf, dequantized with `q` (int8).
  void Decode(const std::vector<uint8_t>& buf, size_t offset, size_t n, const ea_quant& q,
              double* out) const;

  std::string path_;
  std::unique_ptr<convert::LoadedModel> model_;
  int d_ = 0;
  ea_dtype dtype_ = EA_F32;
  int enc_ = -1, self_ = -1, cross_ = -1;
  LayerInfo enc_info_{}, self_info_{}, cross_info_{};
  int self_max_len_ = 0;
  double last_self_us_ = 0.0;
  uint8_t* arena_ = nullptr;
  Interpreter interp_;
  // Reused buffers (kept across calls so the timed calls do not allocate).
  std::vector<uint8_t> in_, key_, out_;
};

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_RUNTIME_ATTENTION_H_
