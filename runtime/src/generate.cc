// Generation (Interpreter::Generate, format 6): a graph whose steps from
// Graph.decoder_start on are a decoder run once per token. The encoder part
// runs once (Interpreter::RunGraphSteps), the decoder's cross-attention
// caches its memory once, and each token goes through the decoder part as
// one row: KV-cache layers step on their caches, positions adds the token's
// row of its table, per-row layers run over the one row, and the argmax at
// the end writes the next token straight into the caller's buffer, where the
// next step's embedding reads it. Everything stays in the arena.
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "graph.h"
#include "layers/layer_kind.h"
#include "model_access.h"

namespace edgeattn {
namespace {

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes == 0 || b_bytes == 0) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

// The most tokens one generation holds under the interpreter's length caps:
// token t runs at position t of every decoder step (a decoder block's
// positions are its max_q_len, a self-attention KV cache's its max_kv_len).
int token_limit(const Model& model, int q_cap, int kv_cap) {
  int limit = 0;
  for (int s = model.decoder_start(); s < model.num_steps(); ++s) {
    const int layer = static_cast<int>(model.step(s)->layer());
    const fb::Layer& l = *model.layer(layer);
    const bool kv_positions =
        token_step(l) == TokenStep::kKvCache && !find_layer_kind(l.options_type())->kv_positions_on_q_len;
    const int n = kv_positions ? model.CappedKvLen(layer, kv_cap) : model.CappedQLen(layer, q_cap);
    if (s == model.decoder_start() || n < limit) limit = n;
  }
  return limit;
}

}  // namespace

Status Interpreter::Generate(const ModelInputs& in, const GenerateOptions& options, int32_t* tokens, int capacity,
                             int* num_tokens) {
  error_.Clear();
  if (num_tokens != nullptr) *num_tokens = 0;
  if (model_ == nullptr) {
    error_ << "interpreter has no model (Init failed or was not called)";
    return Status::kNotReady;
  }
  GraphInfo g;
  int out_rows = 0;
  if (model_->GetGraphInfo(&g, in.num_rows, &out_rows) != Status::kOk) {
    error_ << model_->error();
    return Status::kUnsupported;
  }
  if (g.decoder_start == 0) {
    error_ << "the graph has no decoder part (Graph.decoder_start): Invoke runs it";
    return Status::kUnsupported;
  }
  if (in.rows == nullptr || tokens == nullptr || num_tokens == nullptr) {
    error_ << "Generate needs input rows, a tokens buffer and num_tokens";
    return Status::kInvalidArgument;
  }
  if (in.memory != nullptr || in.memory_rows != 0) {
    error_ << "Generate: a generating graph reads no memory rows (its decoder's memory is the encoder's output)";
    return Status::kInvalidArgument;
  }
  if (in.num_rows < 1 || in.valid_rows > in.num_rows) {
    error_ << "Generate: num_rows " << in.num_rows << " must be >= 1 and valid_rows " << in.valid_rows
           << " at most num_rows";
    return Status::kInvalidArgument;
  }
  if (in.num_rows > g.max_input_rows) {
    error_ << "Generate: " << in.num_rows << " input rows exceed the model's " << g.max_input_rows;
    return Status::kLengthExceedsPlan;
  }
  const int limit = token_limit(*model_, q_cap_, kv_cap_);
  if (options.max_tokens < 1) {
    error_ << "Generate: max_tokens " << options.max_tokens << " must be >= 1";
    return Status::kInvalidArgument;
  }
  if (options.max_tokens > limit) {
    error_ << "Generate: max_tokens " << options.max_tokens << " exceeds the plan's " << limit
           << " (the decoder's positions" << (limit < g.max_tokens ? ", under the Init length cap" : "") << ")";
    return Status::kLengthExceedsPlan;
  }
  if (capacity < options.max_tokens) {
    error_ << "Generate: the tokens buffer holds " << capacity << " ids, max_tokens " << options.max_tokens
           << " may need them all";
    return Status::kInvalidArgument;
  }
  if (options.bos < 0 || options.bos >= g.token_range) {
    error_ << "Generate: bos " << options.bos << " is outside the token ids 0.." << g.token_range - 1;
    return Status::kInvalidArgument;
  }
  const size_t in_bytes = static_cast<size_t>(in.num_rows) * static_cast<size_t>(g.input_dim) *
                          (g.input_dtype == EA_S8 ? 1u : 4u);
  const size_t token_bytes = static_cast<size_t>(capacity) * sizeof(int32_t);
  if (reinterpret_cast<uintptr_t>(tokens) % alignof(int32_t) != 0 ||
      (g.input_dtype != EA_S8 && reinterpret_cast<uintptr_t>(in.rows) % 4 != 0)) {
    error_ << "Generate: the tokens buffer and float or token-id input rows must be 4-byte aligned";
    return Status::kInvalidArgument;
  }
  if (overlaps(tokens, token_bytes, arena_, arena_bytes_) || overlaps(in.rows, in_bytes, arena_, arena_bytes_) ||
      overlaps(tokens, token_bytes, in.rows, in_bytes)) {
    error_ << "Generate: the tokens buffer and the input rows must overlap neither each other nor the arena";
    return Status::kInvalidArgument;
  }

  int32_t rows[kMaxGraphSteps], valid[kMaxGraphSteps];
  Status s = RunGraphSteps(in, g.decoder_start, nullptr, rows, valid);
  if (s != Status::kOk) return s;
  // The decoder's memory: its keys and values projected once; a new sequence
  // in every KV cache.
  for (int st = g.decoder_start; st < model_->num_steps(); ++st) {
    const fb::GraphStep* step = model_->step(st);
    const int layer = static_cast<int>(step->layer());
    const TokenStep how = token_step(*model_->layer(layer));
    if (step_io(*model_->layer(layer), q_cap_).cross) {
      const int src = step->memory();  // an encoder step (verified at load)
      // Its cache holds the plan's rows: under an Init length cap a step that
      // adds rows (class tokens) can give more (F10; CacheKeys checks the same).
      const int max_kv = model_->CappedKvLen(layer, kv_cap_);
      if (rows[src] > max_kv) {
        error_ << "layer '" << model_->layer(layer)->name()->c_str() << "': its memory, step " << src << "'s "
               << rows[src] << " rows, exceeds the plan's " << max_kv;
        return Status::kLengthExceedsPlan;
      }
      FillKeyCache(layer, arena_ + activation_offset_[src], nullptr, rows[src], valid[src]);
    }
    if (how == TokenStep::kKvCache) position_[layer] = 0;
  }
  for (int t = 0; t < options.max_tokens; ++t) {
    s = RunDecoderToken(t == 0 ? &options.bos : &tokens[t - 1], t, &tokens[t]);
    if (s != Status::kOk) return s;
    *num_tokens = t + 1;
    if (options.eos >= 0 && tokens[t] == options.eos) break;
  }
  return Status::kOk;
}

Status Interpreter::RunDecoderToken(const int32_t* token, int position, int32_t* next) {
  const int n = model_->num_steps();
  for (int s = model_->decoder_start(); s < n; ++s) {
    const fb::GraphStep* st = model_->step(s);
    const int layer = static_cast<int>(st->layer());
    const void* query = st->query() == kGeneratedToken ? static_cast<const void*>(token)
                                                       : arena_ + activation_offset_[st->query()];
    void* output = s == n - 1 ? static_cast<void*>(next) : arena_ + activation_offset_[s];
    Status status = Status::kOk;
    switch (token_step(*model_->layer(layer))) {
      case TokenStep::kKvCache:
        status = StepWith(layer, query, output, nullptr, /*check_buffers=*/nullptr);
        break;
      case TokenStep::kPosition: {  // the row plus the table's row at this position
        const LayerShape shape = model_->ShapeOf(layer);
        Call c = {};
        c.layer = model_->layer(layer);
        c.s8 = shape.dtype == EA_S8;
        c.query = query;
        c.output = output;
        c.q_len = 1;
        c.kv_len = 1;
        c.kv_valid_len = 1;
        c.max_q_len = model_->CappedQLen(layer, q_cap_);
        c.cache = arena_ + cache_offset_[layer];
        c.scratch = scratch_;
        find_layer_kind(shape.kind)->step(*model_->flatbuffer(), c, model_->CappedKvLen(layer, kv_cap_), position);
        break;
      }
      case TokenStep::kRow:
      case TokenStep::kCachedMemory: {
        RunArgs a = {};
        a.query = query;
        a.q_len = 1;
        a.output = output;
        a.use_cached_keys = token_step(*model_->layer(layer)) == TokenStep::kCachedMemory;
        status = RunWith(layer, a, nullptr, arena_bytes_, /*check_buffers=*/nullptr);
        break;
      }
      case TokenStep::kNone:  // refused at load
        error_ << "graph step " << s << " cannot run one token at a time";
        return Status::kInvalidModel;
    }
    if (status != Status::kOk) return status;
  }
  return Status::kOk;
}

}  // namespace edgeattn
