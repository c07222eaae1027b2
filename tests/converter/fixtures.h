// Small deterministic fixtures for the converter tests: random state dicts,
// spec JSON and calibration/test inputs for every layer kind, plus an
// independent float64 implementation of each kind (written from the PyTorch
// definitions, not shared with converter/model/float_reference.cc).
#ifndef EDGEATTN_TESTS_CONVERTER_FIXTURES_H_
#define EDGEATTN_TESTS_CONVERTER_FIXTURES_H_

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "converter/base/array.h"

namespace fixtures {

using edgeattn::convert::Array;
using edgeattn::convert::ArrayMap;
using Entries = std::vector<std::pair<std::string, Array>>;

struct Rng {
  explicit Rng(unsigned seed) : g(seed) {}
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(g); }
  int integer(int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); }
  std::mt19937 g;
};

Array make(const std::string& dtype, std::vector<size_t> shape, std::vector<double> data);
// Uniform in [-a, a] with a = gain / sqrt(fan_in) (fan_in = last dim).
Array random_weight(Rng& rng, std::vector<size_t> shape, double gain = 1.0, const std::string& dtype = "F32");
Array random_normal(Rng& rng, std::vector<size_t> shape, double sigma = 1.0, const std::string& dtype = "<f4");

// One layer: its spec, weights, calibration set and held-out test inputs, and
// a float64 reference computing [n][q_len][out_dim] outputs from test inputs.
struct LayerCase {
  std::string name;
  std::string spec_json;   // the whole spec file
  Entries weights;         // state dict
  Entries calib;           // calibration npz entries
  ArrayMap test;           // test inputs (same keys)
  bool self_padding = false;  // compare only query rows < kv_valid_len
  // Output [n][q_len][out_dim] and weights [n][heads][q_len][kv_len].
  std::function<void(const ArrayMap& inputs, std::vector<double>* out, std::vector<double>* w)> reference;
};

LayerCase mha_case(const std::string& mask, bool cross, const std::string& preset, unsigned seed);
LayerCase additive_case(unsigned seed, bool separate_value = false);
// The decoder of the PyTorch seq2seq tutorial (AttnDecoderRNN): its
// `attention` is a BahdanauAttention whose Wa (query), Ua (keys) and Va are
// nn.Linear with biases, beside an embedding, a GRU and an output head no
// attention layer uses. Layer 'attn', spec mapping every bias; the reference
// is the tutorial's forward in float64: softmax(Va(tanh(Wa(q) + Ua(k)))) over
// the valid keys, context = weights @ keys. `spec_without` drops one tensor
// field ("b_q", ...) from the spec.
LayerCase additive_tutorial_case(unsigned seed);
std::string spec_without(const std::string& spec_json, const std::string& field);
LayerCase luong_case(const std::string& score, unsigned seed);
LayerCase pooling_case(unsigned seed);
// A linear layer (nn.Linear(30, 21), an output head) over 7 rows.
LayerCase linear_case(unsigned seed);
// nn.LayerNorm(27, eps=1e-6) over 6 rows whose mean and spread are not 0, 1.
LayerCase layernorm_case(unsigned seed);
// timm's Mlp (fc1, exact GELU, fc2), dim 24, hidden 37, over 5 rows.
LayerCase ffn_case(unsigned seed);
// nn.TransformerEncoderLayer(16, 2, 40) (ReLU), post-norm or norm_first,
// with a key padding mask, over 9 rows.
LayerCase encoder_block_case(unsigned seed, bool norm_first);
// nn.TransformerDecoderLayer(16, 4, 24) (ReLU, post-norm): 6 target rows
// (causal) over 7 memory rows with a memory padding mask.
LayerCase decoder_block_case(unsigned seed);
// ViT token preparation, width 12 over 7 rows whose columns are off zero:
// "learned": timm's cls_token [1, 1, 12] and pos_embed [1, 8, 12] under
// their default names (num_cls from the tensor); "sinusoidal": 2 class
// tokens [2, 12] named in "tensors", num_cls 2, the classic sin/cos table,
// key padding.
LayerCase positions_case(const std::string& table, unsigned seed);
// row_pool "first" or "mean" over 9 rows of width 10 (off zero) with key padding.
LayerCase row_pool_case(const std::string& mode, unsigned seed);
// A state dict under Torch-KWT's names (ID56/Torch-KWT models/kwt.py, KWT):
// to_patch_embedding.1 [dim, features], pos_embedding [1, rows, dim],
// cls_token, `depth` blocks transformer.layers.{i}. (to_qkv without bias,
// to_out.0 when `to_out`, the norms, fn.net.0 / fn.net.3), mlp_head.0 / .1.
Entries torch_kwt_weights(Rng& rng, bool to_out, int features, int dim, int mlp, int depth, int classes, int rows);
// One add layer ("dim" 12, max_q_len 7): query rows x and residual rows r
// (its keys) of different ranges and offsets; the reference is x + r.
LayerCase add_case(unsigned seed);

// nn.Embedding(23, 12) (layer 'emb', tensor 'tok.weight') with the spec's
// "scale" 2.0 (e.g. sqrt(d_model)) over 7 int32 token ids per sample; the
// reference is the table lookup times 2. Test ids cover the whole vocab;
// calibration ids use tokens 0..9 only, and the table's largest and
// smallest values (4.5, -4.75) are in rows 20 and 15.
LayerCase embedding_case(unsigned seed);
// argmax (layer 'top', dim 13, "k" as given) over 6 rows per sample whose
// values lie on a grid of 0.5 in [-4, 4] (ties included), so that int8 at
// the calibrated range keeps every order and tie; the reference is the
// indices of the k largest, largest first, ties to the lower index.
LayerCase argmax_case(unsigned seed, int k);
// models/transformer's weights (`bundled`) as a model copied from PyTorch's
// translation tutorial saves them (the converter's torch_transformer preset):
// nn.Transformer under "transformer." with one layer on each side (the
// bundled layers' ff1 / ff2 are nn.Transformer's linear1 / linear2,
// cross_attn its multihead_attn, norm_out the stacks' final norms), the
// embeddings as TokenEmbedding keeps them (src_tok_emb.embedding, divided by
// sqrt(d_model): its forward multiplies them back), the source positions as
// PositionalEncoding's [rows, 1, d_model] buffer
// (positional_encoding.pos_embedding), the target's as "tgt_pos", the head
// as "generator". The same model. With `positions`, that one table replaces
// both (the tutorial's shared buffer).
ArrayMap tutorial_transformer(const ArrayMap& bundled, const Array* positions = nullptr);
// The tutorial's PositionalEncoding buffer as PyTorch computes it in
// float32: den = exp(-(0, 2, 4, ...) ln(10000) / dim), sin(p den) in the even
// columns and cos(p den) in the odd; [maxlen, 1, dim].
Array tutorial_position_buffer(size_t maxlen, int dim);
// A fresh empty directory under the test's working directory or $TMPDIR.
std::string temp_dir(const std::string& tag);
void write_text(const std::string& path, const std::string& text);
// Writes weights.safetensors, spec.json and calib.npz into dir and converts
// them (run_convert, `edgeattn-convert convert`) at dtype, with --residual
// when given; returns the written file's path, dir/model_<dtype>.eatn.
std::string convert_files(const std::string& dir, const Entries& weights, const std::string& spec,
                          const Entries& calib, const std::string& dtype, const std::string& residual = "");

// The entries as a name -> array map (what load_spec and the converter take).
inline ArrayMap to_map(const Entries& e) {
  ArrayMap m;
  for (const auto& [k, v] : e) m[k] = v;
  return m;
}

}  // namespace fixtures

#endif  // EDGEATTN_TESTS_CONVERTER_FIXTURES_H_
