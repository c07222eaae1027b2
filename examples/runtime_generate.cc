#include "examples/runtime_generate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "converter/base/error.h"
#include "converter/io/file.h"

namespace edgeattn {
namespace demo {

using convert::fail;

RuntimeGenerator::RuntimeGenerator(const std::string& path) : path_(path) {
  model_ = std::make_unique<convert::LoadedModel>(convert::read_file(path), path);
  const Model& m = model_->model();
  if (m.GetGraphInfo(&info_) != Status::kOk || info_.decoder_start == 0) {
    fail(path, ": not a generating model (convert models/transformer/generate.spec.json)");
  }
  if (info_.input_dtype != EA_S32 || info_.input_dim != 1) fail(path, ": its input is not token ids");
  arena_bytes_ = m.arena_bytes();
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, std::max<size_t>((arena_bytes_ + 63) / 64 * 64, 64)));
  if (arena_ == nullptr) throw std::bad_alloc();
  const Status st = interp_.Init(&m, arena_, m.arena_bytes());
  if (st != Status::kOk) fail(path, ": Init failed (", status_string(st), "): ", interp_.error());
  source_.resize(static_cast<size_t>(info_.max_input_rows));
  tokens_.resize(static_cast<size_t>(info_.max_tokens));
}

RuntimeGenerator::~RuntimeGenerator() { std::free(arena_); }

std::vector<int> RuntimeGenerator::Generate(const std::vector<int>& digits, int pad, int bos, int eos) {
  const int len = static_cast<int>(digits.size());
  if (len < 1 || len > info_.max_input_rows) {
    fail("a source has ", len, " digits; 1..", info_.max_input_rows, " allowed");
  }
  // PyTorch's encoder sees the whole padded source, the padding masked.
  std::fill(source_.begin(), source_.end(), pad);
  std::copy(digits.begin(), digits.end(), source_.begin());
  ModelInputs in = {};
  in.rows = source_.data();
  in.num_rows = info_.max_input_rows;
  in.valid_rows = len;
  const GenerateOptions options = {bos, eos, info_.max_tokens};
  int n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = interp_.Generate(in, options, tokens_.data(), static_cast<int>(tokens_.size()), &n);
  last_us_ = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (st != Status::kOk) fail(path_, ": Generate failed (", status_string(st), "): ", interp_.error());
  return std::vector<int>(tokens_.begin(), tokens_.begin() + n);
}

}  // namespace demo
}  // namespace edgeattn
