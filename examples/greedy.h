// Greedy decoding of the bundled transformer: float64 embeddings, LayerNorms,
// FFNs and head (transformer_float.h) around the runtime's attention layers
// (runtime_attention.h), or the encoder and decoder layers and the head as
// layers of the runtime (runtime_encoder.h, runtime_decoder.h), mirroring
// scripts/train_models.py's pre-LN EncLayer / DecLayer /
// TinyTransformer.greedy one decoder row at a time.
#ifndef EDGEATTN_CONVERTER_DEMO_GREEDY_H_
#define EDGEATTN_CONVERTER_DEMO_GREEDY_H_

#include <vector>

#include "examples/runtime_attention.h"
#include "examples/runtime_decoder.h"
#include "examples/runtime_encoder.h"
#include "examples/transformer_float.h"

namespace edgeattn {
namespace demo {

// How dec_self sees the prefix: kCached = one Interpreter::Step per token on
// the KV cache; kRerun = a full causal Run over every token so far (last row used).
enum class SelfMode { kCached, kRerun };

struct Decoded {
  std::vector<int> tokens;      // generated tokens, up to and including EOS
  std::vector<double> self_us;  // per step: the dec_self runtime call alone
  std::vector<double> step_us;  // per step: the whole decoder step, embedding to argmax
  int tied_steps = 0;           // steps whose largest logit was shared (argmax took the lower token id)
};

// Encodes `digits` (at most m.src_len, padded with PAD like the training data),
// caches the cross-attention memory, then decodes from BOS until EOS or
// max_target_len() tokens. With `encoder` the whole encoder layer runs in the
// runtime as block kinds; without, its LayerNorms and FFN run in float64
// around rt's enc_self. With `decoder` the whole decoder layer, its final
// LayerNorm and the output head run in the runtime (a decoder_block Step per
// token, or a re-run of the block over the prefix, then dec_norm and head on
// the last row), leaving the embedding and the argmax; self_us then times the
// block call.
Decoded GreedyDecode(const TransformerFloat& m, RuntimeAttention& rt, const std::vector<int>& digits,
                     SelfMode mode, RuntimeEncoder* encoder = nullptr, RuntimeDecoder* decoder = nullptr);

}  // namespace demo
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_DEMO_GREEDY_H_
