#include "converter/write/writer.h"

#include <zlib.h>

#include "edgeattn/edgeattn.h"
#include "edgeattn/kernels/packed_weights.h"

namespace edgeattn {
namespace convert {

constexpr const char* kProducerName = "edgeattn-convert";
constexpr const char* kProducerVersion = "0.1.0";

uint64_t ModelWriter::Append(const void* data, size_t bytes) {
  while (blob_.size() % 16 != 0) blob_.push_back(0);
  const uint64_t offset = blob_.size();
  const auto* p = static_cast<const uint8_t*>(data);
  blob_.insert(blob_.end(), p, p + bytes);
  while (blob_.size() % 16 != 0) blob_.push_back(0);
  return offset;
}

flatbuffers::Offset<fb::Tensor> ModelWriter::TensorS8(const std::string& name,
                                                      std::vector<uint32_t> shape, int rows,
                                                      int row_stride, const int8_t* data,
                                                      const std::vector<float>& scales) {
  const size_t bytes = static_cast<size_t>(rows) * row_stride;
  const uint64_t offset = Append(data, bytes);
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::S8, &shape,
                                static_cast<uint32_t>(row_stride), offset, bytes, &scales);
}

flatbuffers::Offset<fb::Tensor> ModelWriter::TensorF32(const std::string& name, int rows, int cols,
                                                       const double* data) {
  const int r = rows == 0 ? 1 : rows;
  const int stride = rows == 0 ? cols : padded_row(cols);
  std::vector<float> padded(static_cast<size_t>(r) * stride, 0.0f);
  for (int i = 0; i < r; ++i) {
    for (int c = 0; c < cols; ++c) {
      padded[static_cast<size_t>(i) * stride + c] = static_cast<float>(data[static_cast<size_t>(i) * cols + c]);
    }
  }
  const uint64_t offset = Append(padded.data(), padded.size() * sizeof(float));
  std::vector<uint32_t> shape;
  if (rows != 0) shape.push_back(static_cast<uint32_t>(rows));
  shape.push_back(static_cast<uint32_t>(cols));
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::F32, &shape,
                                static_cast<uint32_t>(stride), offset, padded.size() * sizeof(float));
}

flatbuffers::Offset<fb::Tensor> ModelWriter::TensorS32(const std::string& name,
                                                       const std::vector<int32_t>& v) {
  const uint64_t offset = Append(v.data(), v.size() * sizeof(int32_t));
  std::vector<uint32_t> shape = {static_cast<uint32_t>(v.size())};
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::S32, &shape,
                                static_cast<uint32_t>(v.size()), offset, v.size() * sizeof(int32_t));
}

flatbuffers::Offset<fb::Tensor> ModelWriter::TensorS16(const std::string& name,
                                                       const std::vector<int16_t>& v) {
  const uint64_t offset = Append(v.data(), v.size() * sizeof(int16_t));
  std::vector<uint32_t> shape = {static_cast<uint32_t>(v.size())};
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::S16, &shape,
                                static_cast<uint32_t>(v.size()), offset, v.size() * sizeof(int16_t));
}

flatbuffers::Offset<fb::Tensor> ModelWriter::TensorS16(const std::string& name, int rows, int cols,
                                                       const std::vector<int16_t>& v) {
  const uint64_t offset = Append(v.data(), v.size() * sizeof(int16_t));
  std::vector<uint32_t> shape = {static_cast<uint32_t>(rows), static_cast<uint32_t>(cols)};
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::S16, &shape, static_cast<uint32_t>(cols), offset,
                                v.size() * sizeof(int16_t));
}

flatbuffers::Offset<fb::ActQuant> ModelWriter::Act(const ActQuantParams& q) {
  return fb::CreateActQuant(fbb_, static_cast<float>(q.scale), q.zero_point);
}

flatbuffers::Offset<fb::ActQuant> ModelWriter::Act16(const ActQuantParams& q) {
  fbb_.ForceDefaults(true);
  const auto a = fb::CreateActQuant(fbb_, static_cast<float>(q.scale), q.zero_point);
  fbb_.ForceDefaults(false);
  return a;
}

flatbuffers::Offset<fb::Requant> ModelWriter::Requants(const std::vector<Requant>& r) {
  std::vector<int32_t> m, s;
  for (const Requant& x : r) {
    m.push_back(x.multiplier);
    s.push_back(x.shift);
  }
  return fb::CreateRequantDirect(fbb_, &m, &s);
}

flatbuffers::Offset<fb::SoftmaxQuant> ModelWriter::Softmax(const Requant& score, const Requant& pv) {
  return fb::CreateSoftmaxQuant(fbb_, score.multiplier, score.shift, pv.multiplier, pv.shift);
}

flatbuffers::Offset<fb::Tensor> ModelWriter::WeightS8Packed(const std::string& name, const QuantLinear& q) {
  std::vector<int8_t> packed(kernels::packed_weight_bytes(q.out, q.in));
  kernels::pack_weights_k4n16(q.out, q.in, q.w.data(), q.row_stride, packed.data());
  const uint64_t offset = Append(packed.data(), packed.size());
  std::vector<uint32_t> shape = {static_cast<uint32_t>(q.out), static_cast<uint32_t>(q.in)};
  return fb::CreateTensorDirect(fbb_, name.c_str(), fb::DType::S8, &shape,
                                static_cast<uint32_t>(kernels::packed_k(q.in)), offset,
                                packed.size(), &q.w_scale, fb::WeightLayout::PackedK4N16);
}

flatbuffers::Offset<fb::Linear> ModelWriter::LinearS8(const QuantLinear& q, const FloatLinear& f, bool output16,
                                                      bool own_flag) {
  const auto weight = WeightS8Packed(f.w_name, q);
  const std::string bias_name = f.b_name.empty() ? f.w_name + ":bias(folded, source has none)" : f.b_name + "(folded)";
  const auto bias = TensorS32(bias_name, q.bias);
  const auto in = Act(q.input);
  const auto out = output16 ? Act16(q.output) : Act(q.output);
  const auto rq = Requants(q.requant);
  return fb::CreateLinear(fbb_, static_cast<uint32_t>(q.in), static_cast<uint32_t>(q.out), weight,
                          bias, in, out, rq, output16 && own_flag);
}

flatbuffers::Offset<fb::Linear> ModelWriter::LinearF32(const FloatLinear& f) {
  const auto weight = TensorF32(f.w_name, f.out, f.in, f.w.data());
  flatbuffers::Offset<fb::Tensor> bias = 0;
  if (!f.b.empty()) bias = TensorF32(f.b_name, 0, f.out, f.b.data());
  return fb::CreateLinear(fbb_, static_cast<uint32_t>(f.in), static_cast<uint32_t>(f.out), weight, bias);
}

std::vector<uint8_t> ModelWriter::Finish(const std::string& source, uint64_t arena_bytes, uint64_t worker_bytes,
                                         flatbuffers::Offset<fb::Graph> graph) {
  const auto producer = fb::CreateProducerDirect(fbb_, kProducerName, kProducerVersion, source.c_str());
  const auto layers = fbb_.CreateVector(layers_);
  if (blob_.empty()) blob_.resize(16, 0);
  // ForceVectorAlignment(size, 1, 64) without its debug assertion:
  // FlatBuffers 2.0.8 asserts alignment <= FLATBUFFERS_MAX_ALIGNMENT (32) in
  // ForceVectorAlignment, but PreAlign itself handles 64 (it also raises the
  // buffer's minimum alignment to 64, so Finish pads the whole buffer to a
  // multiple of 64 and the data offset from the file start is a multiple of 64).
  fbb_.PreAlign(blob_.size(), 64);
  const auto data = fbb_.CreateVector(blob_);
  const auto model =
      fb::CreateModel(fbb_, EA_FORMAT_VERSION, producer, layers, arena_bytes, data, worker_bytes, graph);
  fb::FinishModelBuffer(fbb_, model);
  std::vector<uint8_t> file(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
  append_file_crc32(&file);
  return file;
}

void append_file_crc32(std::vector<uint8_t>* file) {
  const auto crc = static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), file->data(), static_cast<uInt>(file->size())));
  for (int i = 0; i < 4; ++i) file->push_back(static_cast<uint8_t>(crc >> (8 * i)));
}

}  // namespace convert
}  // namespace edgeattn
