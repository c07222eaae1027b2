// The non-attention parts of the bundled transformer (models/transformer,
// scripts/train_models.py TinyTransformer) in float64, read from its PyTorch
// state dict: embeddings, pre-LN LayerNorms, GELU FFNs and the output head.
// The attention layers run in the edgeattn runtime (runtime_attention.h);
// with the block models, everything but the embeddings and the argmax does.
#ifndef EDGEATTN_CONVERTER_DEMO_TRANSFORMER_FLOAT_H_
#define EDGEATTN_CONVERTER_DEMO_TRANSFORMER_FLOAT_H_

#include <string>
#include <vector>

namespace edgeattn {
namespace demo {

// Token ids of the digit-reversal task (scripts/train_models.py).
constexpr int kPad = 10, kBos = 11, kEos = 12;

// nn.Linear: y = W x + b, W [out][in].
struct Linear {
  int in = 0, out = 0;
  std::vector<double> w, b;
  void Apply(const double* x, double* y) const;
};

// nn.LayerNorm(d) (eps 1e-5, biased variance).
struct LayerNorm {
  std::vector<double> gamma, beta;
  void Apply(const double* x, double* y) const;
};

// x += ff2(gelu(ff1(norm(x)))), GELU with erf as F.gelu's default.
struct FeedForward {
  LayerNorm norm;
  Linear ff1, ff2;
  void AddTo(double* x) const;
};

struct TransformerFloat {
  int d_model = 0, vocab = 0, src_len = 0, tgt_len = 0;
  std::vector<double> src_emb, tgt_emb;  // [vocab][d_model]
  std::vector<double> src_pos, tgt_pos;  // [src_len | tgt_len][d_model]
  LayerNorm enc_norm1, enc_norm_out;
  FeedForward enc_ffn;
  LayerNorm dec_norm1, dec_norm2, dec_norm_out;
  FeedForward dec_ffn;
  Linear head;  // `out`: d_model -> vocab

  // Reads the state dict (safetensors, .npz or torch zip); throws ConvertError
  // naming the file and tensor when one is missing or has the wrong shape.
  static TransformerFloat Load(const std::string& weights_path);

  // Token + positional embedding of position `pos`.
  void EmbedSource(int token, int pos, double* x) const;
  void EmbedTarget(int token, int pos, double* x) const;
  // argmax of the head's logits (first maximum, like torch.argmax).
  int Predict(const double* y) const;
};

// The first index of the largest of logits[0..n) (torch.argmax's choice);
// *tied: another index holds the same value.
int Argmax(const double* logits, int n, bool* tied);

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_TRANSFORMER_FLOAT_H_
