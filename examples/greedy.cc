#include "examples/greedy.h"

#include <algorithm>
#include <chrono>

#include "converter/base/error.h"

namespace edgeattn {
namespace demo {

namespace {

// The decoder layer and head in the runtime over the memory [src_len][d]:
// the host embeds each token and takes the argmax of the logits.
Decoded DecodeInRuntime(const TransformerFloat& m, RuntimeDecoder& decoder, const double* memory, int len,
                        SelfMode mode) {
  using Clock = std::chrono::steady_clock;
  const size_t d = static_cast<size_t>(m.d_model);
  decoder.CacheMemory(memory, m.src_len, len);
  const int max_len = std::min(m.tgt_len, decoder.max_target_len());
  std::vector<double> rows(static_cast<size_t>(max_len) * d), logits(static_cast<size_t>(m.vocab));
  Decoded out;
  decoder.BeginSequence();
  int token = kBos;
  for (int s = 0; s < max_len && token != kEos; ++s) {
    const Clock::time_point t0 = Clock::now();
    double* row = &rows[s * d];
    m.EmbedTarget(token, s, row);
    if (mode == SelfMode::kCached) {
      decoder.Step(row, logits.data());
    } else {
      decoder.Rerun(rows.data(), s + 1, logits.data());
    }
    bool tied = false;
    token = Argmax(logits.data(), m.vocab, &tied);
    const Clock::time_point t1 = Clock::now();
    out.tied_steps += tied;
    out.tokens.push_back(token);
    out.self_us.push_back(decoder.last_block_us());
    out.step_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return out;
}

}  // namespace

Decoded GreedyDecode(const TransformerFloat& m, RuntimeAttention& rt, const std::vector<int>& digits,
                     SelfMode mode, RuntimeEncoder* encoder, RuntimeDecoder* decoder) {
  using Clock = std::chrono::steady_clock;
  const int len = static_cast<int>(digits.size());
  if (len < 1 || len > m.src_len) convert::fail("a source has ", len, " digits; 1..", m.src_len, " allowed");
  const size_t d = static_cast<size_t>(m.d_model);
  const size_t src_rows = static_cast<size_t>(m.src_len);

  // Encoder over the whole padded source, as PyTorch runs it: padded rows are
  // computed but masked as keys here and in cross-attention (kv_valid_len = len).
  std::vector<double> x(src_rows * d), h(src_rows * d), att(src_rows * d);
  for (int p = 0; p < m.src_len; ++p) m.EmbedSource(p < len ? digits[static_cast<size_t>(p)] : kPad, p, &x[p * d]);
  if (encoder != nullptr) {
    encoder->Encode(x.data(), m.src_len, len, h.data());  // h = encoder memory
  } else {
    for (int p = 0; p < m.src_len; ++p) m.enc_norm1.Apply(&x[p * d], &h[p * d]);
    rt.Encoder(h.data(), m.src_len, len, att.data());
    for (size_t i = 0; i < x.size(); ++i) x[i] += att[i];
    for (int p = 0; p < m.src_len; ++p) {
      m.enc_ffn.AddTo(&x[p * d]);
      m.enc_norm_out.Apply(&x[p * d], &h[p * d]);  // h = encoder memory
    }
  }
  if (decoder != nullptr) return DecodeInRuntime(m, *decoder, h.data(), len, mode);
  rt.CacheMemory(h.data(), m.src_len, len);

  // Decoder, one row per step. `rows` keeps each step's norm1 output: the
  // re-run mode feeds all of them to dec_self again.
  const int max_len = std::min(m.tgt_len, rt.max_target_len());
  std::vector<double> rows(static_cast<size_t>(max_len) * d), y(d), t(d), a(d);
  Decoded out;
  rt.BeginSequence();
  int token = kBos;
  for (int s = 0; s < max_len && token != kEos; ++s) {
    const Clock::time_point t0 = Clock::now();
    double* row = &rows[s * d];
    m.EmbedTarget(token, s, y.data());
    m.dec_norm1.Apply(y.data(), row);
    if (mode == SelfMode::kCached) {
      rt.SelfStep(row, a.data());
    } else {
      rt.SelfRerun(rows.data(), s + 1, a.data());
    }
    for (size_t i = 0; i < d; ++i) y[i] += a[i];
    m.dec_norm2.Apply(y.data(), t.data());
    rt.Cross(t.data(), a.data());
    for (size_t i = 0; i < d; ++i) y[i] += a[i];
    m.dec_ffn.AddTo(y.data());
    m.dec_norm_out.Apply(y.data(), t.data());
    token = m.Predict(t.data());
    const Clock::time_point t1 = Clock::now();
    out.tokens.push_back(token);
    out.self_us.push_back(rt.last_self_us());
    out.step_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return out;
}

}  // namespace demo
}  // namespace edgeattn
