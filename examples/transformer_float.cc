#include "examples/transformer_float.h"

#include <cmath>

#include "converter/base/array.h"
#include "converter/base/error.h"
#include "converter/io/formats.h"

namespace edgeattn {
namespace demo {

using convert::fail;

void Linear::Apply(const double* x, double* y) const {
  for (int o = 0; o < out; ++o) {
    const double* row = w.data() + static_cast<size_t>(o) * in;
    double acc = b[o];
    for (int i = 0; i < in; ++i) acc += row[i] * x[i];
    y[o] = acc;
  }
}

void LayerNorm::Apply(const double* x, double* y) const {
  const size_t n = gamma.size();
  double mean = 0.0, var = 0.0;
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= n;
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= n;
  const double inv = 1.0 / std::sqrt(var + 1e-5);
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

void FeedForward::AddTo(double* x) const {
  std::vector<double> h(static_cast<size_t>(ff1.in)), mid(static_cast<size_t>(ff1.out)),
      o(static_cast<size_t>(ff2.out));
  norm.Apply(x, h.data());
  ff1.Apply(h.data(), mid.data());
  for (double& v : mid) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  ff2.Apply(mid.data(), o.data());
  for (int i = 0; i < ff2.out; ++i) x[i] += o[static_cast<size_t>(i)];
}

namespace {

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), map_(convert::load_weights(path)) {}

  std::vector<double> Get(const std::string& name, std::vector<size_t> shape) const {
    const auto it = map_.find(name);
    if (it == map_.end()) fail(path_, ": missing tensor '", name, "'");
    if (it->second.shape != shape) {
      fail(path_, ": tensor '", name, "' is ", convert::shape_string(it->second.shape), ", expected ",
           convert::shape_string(shape));
    }
    return it->second.data;
  }
  const std::vector<size_t>& ShapeOf(const std::string& name) const {
    const auto it = map_.find(name);
    if (it == map_.end()) fail(path_, ": missing tensor '", name, "'");
    return it->second.shape;
  }
  Linear GetLinear(const std::string& prefix, size_t in, size_t out) const {
    Linear l;
    l.in = static_cast<int>(in);
    l.out = static_cast<int>(out);
    l.w = Get(prefix + ".weight", {out, in});
    l.b = Get(prefix + ".bias", {out});
    return l;
  }
  LayerNorm GetNorm(const std::string& prefix, size_t d) const {
    return LayerNorm{Get(prefix + ".weight", {d}), Get(prefix + ".bias", {d})};
  }

 private:
  std::string path_;
  convert::ArrayMap map_;
};

}  // namespace

TransformerFloat TransformerFloat::Load(const std::string& path) {
  const Reader r(path);
  TransformerFloat m;
  // Sizes come from the tensors themselves; every other tensor must agree.
  const std::vector<size_t>& emb = r.ShapeOf("tgt_emb.weight");
  if (emb.size() != 2) fail(path, ": 'tgt_emb.weight' must be [vocab, d_model]");
  const size_t vocab = emb[0], d = emb[1];
  const std::vector<size_t>& sp = r.ShapeOf("src_pos");
  const std::vector<size_t>& tp = r.ShapeOf("tgt_pos");
  if (sp.size() != 2 || tp.size() != 2) fail(path, ": 'src_pos' / 'tgt_pos' must be [len, d_model]");
  const size_t d_ff = r.ShapeOf("decoder.ff1.weight").at(0);
  m.d_model = static_cast<int>(d);
  m.vocab = static_cast<int>(vocab);
  m.src_len = static_cast<int>(sp[0]);
  m.tgt_len = static_cast<int>(tp[0]);
  if (vocab <= static_cast<size_t>(kEos)) fail(path, ": vocab ", vocab, " has no EOS token ", kEos);
  m.src_emb = r.Get("src_emb.weight", {vocab, d});
  m.tgt_emb = r.Get("tgt_emb.weight", {vocab, d});
  m.src_pos = r.Get("src_pos", {sp[0], d});
  m.tgt_pos = r.Get("tgt_pos", {tp[0], d});
  m.enc_norm1 = r.GetNorm("encoder.norm1", d);
  m.enc_ffn = FeedForward{r.GetNorm("encoder.norm2", d), r.GetLinear("encoder.ff1", d, d_ff),
                          r.GetLinear("encoder.ff2", d_ff, d)};
  m.enc_norm_out = r.GetNorm("encoder.norm_out", d);
  m.dec_norm1 = r.GetNorm("decoder.norm1", d);
  m.dec_norm2 = r.GetNorm("decoder.norm2", d);
  m.dec_ffn = FeedForward{r.GetNorm("decoder.norm3", d), r.GetLinear("decoder.ff1", d, d_ff),
                          r.GetLinear("decoder.ff2", d_ff, d)};
  m.dec_norm_out = r.GetNorm("decoder.norm_out", d);
  m.head = r.GetLinear("out", d, vocab);
  return m;
}

void TransformerFloat::EmbedSource(int token, int pos, double* x) const {
  const size_t d = static_cast<size_t>(d_model);
  for (size_t i = 0; i < d; ++i) x[i] = src_emb[token * d + i] + src_pos[pos * d + i];
}

void TransformerFloat::EmbedTarget(int token, int pos, double* x) const {
  const size_t d = static_cast<size_t>(d_model);
  for (size_t i = 0; i < d; ++i) x[i] = tgt_emb[token * d + i] + tgt_pos[pos * d + i];
}

int TransformerFloat::Predict(const double* y) const {
  std::vector<double> logits(static_cast<size_t>(vocab));
  head.Apply(y, logits.data());
  bool tied = false;
  return Argmax(logits.data(), vocab, &tied);
}

int Argmax(const double* logits, int n, bool* tied) {
  int best = 0;
  *tied = false;
  for (int c = 1; c < n; ++c) {
    if (logits[c] > logits[best]) {
      best = c;
      *tied = false;
    } else if (logits[c] == logits[best]) {
      *tied = true;
    }
  }
  return best;
}

}  // namespace demo
}  // namespace edgeattn
