// FlatBuffers serialization of a model: a builder plus the weight blob that
// becomes Model.data (every tensor 16-byte aligned, the blob 64-byte aligned
// in the file, and a CRC-32 of the whole FlatBuffer after it: format 3).
#ifndef EDGEATTN_CONVERTER_WRITE_WRITER_H_
#define EDGEATTN_CONVERTER_WRITE_WRITER_H_

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

#include "converter/calibrate/calibrate.h"
#include "converter/model/float_reference.h"
#include "converter/quantize/quantize.h"
#include "edgeattn/edgeattn_generated.h"

namespace edgeattn {
namespace convert {

class ModelWriter {
 public:
  ModelWriter() : fbb_(1 << 16) {}
  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }

  // Row-major int8 tensor [rows][row_stride] (data already padded), per-row scales.
  flatbuffers::Offset<fb::Tensor> TensorS8(const std::string& name, std::vector<uint32_t> shape,
                                           int rows, int row_stride, const int8_t* data,
                                           const std::vector<float>& scales);
  // Float tensor: rows == 0 means 1-D of `cols`; 2-D rows are padded to a multiple of 16.
  flatbuffers::Offset<fb::Tensor> TensorF32(const std::string& name, int rows, int cols,
                                            const double* data);
  flatbuffers::Offset<fb::Tensor> TensorS32(const std::string& name, const std::vector<int32_t>& v);
  flatbuffers::Offset<fb::Tensor> TensorS16(const std::string& name, const std::vector<int16_t>& v);
  // Row-major int16 tensor [rows][cols], dense (row stride cols).
  flatbuffers::Offset<fb::Tensor> TensorS16(const std::string& name, int rows, int cols, const std::vector<int16_t>& v);

  flatbuffers::Offset<fb::ActQuant> Act(const ActQuantParams& q);
  // An int16 tensor of the residual stream: its zero point 0 written out
  // (FlatBuffers leaves defaults out), so the file states it.
  flatbuffers::Offset<fb::ActQuant> Act16(const ActQuantParams& q);
  flatbuffers::Offset<fb::Requant> Requants(const std::vector<Requant>& r);
  flatbuffers::Offset<fb::SoftmaxQuant> Softmax(const Requant& score, const Requant& pv);
  // An int8 Linear weight in the packed K4N16 layout (schema/edgeattn.fbs).
  flatbuffers::Offset<fb::Tensor> WeightS8Packed(const std::string& name, const QuantLinear& q);
  // output16: the output is int16 (Act16; contract 5c-out, q's requant
  // already carries its 2^13, quantize_linear's out_shift). own_flag: the
  // table's own Linear.output16 too (a `linear` layer's; an mha layer's
  // out_proj carries it on its MultiHeadAttention table instead).
  flatbuffers::Offset<fb::Linear> LinearS8(const QuantLinear& q, const FloatLinear& f, bool output16 = false,
                                           bool own_flag = false);
  flatbuffers::Offset<fb::Linear> LinearF32(const FloatLinear& f);

  void AddLayer(flatbuffers::Offset<fb::Layer> layer) { layers_.push_back(layer); }
  const std::vector<flatbuffers::Offset<fb::Layer>>& layers() const { return layers_; }

  // Finishes the buffer (identifier EATN) and returns the file bytes: the
  // FlatBuffer followed by its CRC-32 (append_file_crc32).
  // graph: the model's Graph table (0: none).
  std::vector<uint8_t> Finish(const std::string& source, uint64_t arena_bytes, uint64_t worker_bytes,
                              flatbuffers::Offset<fb::Graph> graph = 0);

 private:
  uint64_t Append(const void* data, size_t bytes);

  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<uint8_t> blob_;
  std::vector<flatbuffers::Offset<fb::Layer>> layers_;
};

// Appends the format-3 file checksum: the CRC-32 (IEEE, zlib) of every byte
// of `file`, 4 bytes little-endian.
void append_file_crc32(std::vector<uint8_t>* file);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_WRITE_WRITER_H_
