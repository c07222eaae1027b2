// The whole model as one call (format 6): the file's Graph verified at load,
// its intermediate tensors for the arena plan, its public description.
// Interpreter::Invoke (interpreter.cc) runs it.
#include <cstring>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/edgeattn_generated.h"
#include "layers/layer_kind.h"
#include "graph.h"
#include "model_access.h"

namespace edgeattn {

StepIo step_io(const fb::Layer& l, int q_cap) {
  const LayerInfo info = layer_info(l);
  const LayerKindModule* kind = find_layer_kind(l.options_type());
  const int max_q = static_cast<int>(l.max_q_len());
  const int capped_q = q_cap > 0 && q_cap < max_q ? q_cap : max_q;
  StepIo io = {};
  io.learned_query = kind != nullptr && kind->learned_query;
  io.cross = info.cross != 0 && !io.learned_query;  // pooling's "keys" are its primary input
  io.input_dim = io.learned_query ? info.key_dim : info.query_dim;
  io.input_quant = io.learned_query ? info.key_quant : info.query_quant;
  io.max_input_rows = io.learned_query ? info.max_kv_len : info.max_q_len;
  io.memory_dim = info.key_dim;
  io.memory_quant = info.key_quant;
  io.max_memory_rows = info.max_kv_len;
  io.output_dim = info.output_dim;
  io.output_quant = info.output_quant;
  io.added_rows = info.added_rows;
  io.max_output_rows = io.learned_query ? 1 : capped_q + info.added_rows;
  io.dtype = info.dtype;
  io.input_dtype = info.input_dtype;
  io.input_range = info.input_range;
  io.output_dtype = info.output_dtype;
  return io;
}

TokenStep token_step(const fb::Layer& l) {
  const LayerKindModule* kind = find_layer_kind(l.options_type());
  if (kind == nullptr) return TokenStep::kNone;
  const LayerShape shape = shape_of_options(static_cast<int>(kind->kind), l.options(), layer_info(l).dtype,
                                            l.tile_scratch());
  if (kind->has_kv_cache != nullptr && kind->has_kv_cache(shape)) return TokenStep::kKvCache;
  const LayerInfo info = layer_info(l);
  if (info.cross != 0 && !kind->learned_query && kind->has_key_cache != nullptr && kind->has_key_cache(shape) &&
      !kind->cached_run_reads_values && !shape.coverage) {
    return TokenStep::kCachedMemory;
  }
  if (kind->rows_independent) return TokenStep::kRow;
  // A step without a KV cache at all (positions); MHA without "kv_cache"
  // has a step function too, but attends over rows it does not keep.
  if (kind->step != nullptr && kind->has_kv_cache == nullptr && info.added_rows == 0) return TokenStep::kPosition;
  return TokenStep::kNone;
}

namespace {

bool same_quant(const ea_quant& a, const ea_quant& b) {
  return std::memcmp(&a.scale, &b.scale, sizeof(float)) == 0 && a.zero_point == b.zero_point;
}

// A scale for a message: micro-units (ErrorMessage prints integers), capped
// at 2e9 (scales up to 2000; NaN prints the cap). Float to int32 only: on
// Cortex-M4 (single-precision FPU) a double here, or a float to int64
// conversion (libgcc's __fixunssfdi computes in double), linked about 2 KB of
// software double arithmetic into every firmware with a graph.
int64_t micro(float scale) {
  const float v = scale * 1e6f + 0.5f;
  return v > -2e9f && v < 2e9f ? static_cast<int32_t>(v) : 2000000000;
}

const char* dtype_label(ea_dtype t) {
  return t == EA_S8 ? "int8" : t == EA_S16 ? "int16" : t == EA_S32 ? "int32" : "float";
}

const char* source_name(int source) {
  return source == kModelInput    ? "the model's input"
         : source == kModelMemory ? "the model's memory"
         : source == kGeneratedToken ? "the last token"
                                     : "step";
}

const char* kind_label(const fb::Layer& l) {
  const LayerKindModule* kind = find_layer_kind(l.options_type());
  return kind != nullptr ? kind->name : "?";
}

}  // namespace

int graph_tensors(const fb::Layer* const* layers, int num_layers, const fb::Graph& graph, int max_q_len,
                  GraphTensor* tensors) {
  const int n = static_cast<int>(graph.steps()->size());
  const int decoder_start = graph.decoder_start() > 0 ? graph.decoder_start() : n;
  for (int s = 0; s < n; ++s) {
    const uint32_t layer = graph.steps()->Get(static_cast<uint32_t>(s))->layer();
    const StepIo io = layer < static_cast<uint32_t>(num_layers) ? step_io(*layers[layer], max_q_len) : StepIo{};
    // A generating graph's decoder part runs one row per token.
    const uint64_t rows = s >= decoder_start ? 1u : static_cast<uint64_t>(io.max_output_rows);
    tensors[s] = GraphTensor{rows * static_cast<uint64_t>(io.output_dim) * elem_size(io.output_dtype), s, s};
  }
  for (int s = 0; s < n; ++s) {
    const fb::GraphStep* st = graph.steps()->Get(static_cast<uint32_t>(s));
    for (const int src : {st->query(), st->memory()}) {
      if (src >= 0 && src < s && tensors[src].last < s) tensors[src].last = s;
    }
  }
  if (n > 0) tensors[n - 1].bytes = 0;  // the caller's output buffer
  return n;
}

const fb::GraphStep* Model::step(int index) const {
  if (index < 0 || index >= num_steps_) return nullptr;
  return model_->graph()->steps()->Get(static_cast<uint32_t>(index));
}

Status Model::VerifyGraph() {
  num_steps_ = 0;
  decoder_start_ = 0;
  const fb::Graph* g = model_->graph();
  if (g == nullptr) return Status::kOk;  // layers run one by one only
  error_.Clear();
  const int n = g->steps() != nullptr ? static_cast<int>(g->steps()->size()) : 0;
  if (n < 1 || n > kMaxGraphSteps) {
    error_ << "graph must have 1.." << kMaxGraphSteps << " steps, has " << n;
    return Status::kInvalidModel;
  }
  // A generating graph: steps decoder_start.. run once per token (Generate).
  const int decoder_start = g->decoder_start() == -1 ? 0 : g->decoder_start();
  if (decoder_start < 0 || decoder_start >= n || g->decoder_start() == 0) {
    error_ << "graph decoder_start " << g->decoder_start() << " is not a step 1.." << n - 1
           << " (or -1: no decoder part)";
    return Status::kInvalidModel;
  }
  const bool generates = decoder_start > 0;
  bool used[kMaxGraphSteps] = {};
  bool read[kMaxGraphSteps] = {};
  StepIo io[kMaxGraphSteps];
  bool have_input = false, have_memory = false;
  StepIo model_in = {}, model_mem = {};
  for (int s = 0; s < n; ++s) {
    const fb::GraphStep* st = g->steps()->Get(static_cast<uint32_t>(s));
    const int layer = static_cast<int>(st->layer());
    if (st->layer() >= static_cast<uint32_t>(num_layers())) {
      error_ << "graph step " << s << " names layer " << st->layer() << ", the model has " << num_layers();
      return Status::kInvalidModel;
    }
    if (used[layer]) {
      error_ << "graph step " << s << ": layer '" << this->layer(layer)->name()->c_str()
             << "' appears twice in the graph";
      return Status::kInvalidModel;
    }
    used[layer] = true;
    const char* name = this->layer(layer)->name()->c_str();
    io[s] = step_io(*this->layer(layer), 0);
    const bool decoder_part = generates && s >= decoder_start;
    if (decoder_part) {
      if (token_step(*this->layer(layer)) == TokenStep::kNone) {
        error_ << "graph step " << s << " (layer '" << name << "', " << kind_label(*this->layer(layer))
               << ") cannot run one token at a time in the decoder part (per-row kinds, positions without "
                  "class tokens, KV-cache layers and cross-attention over cached memory can)";
        return Status::kInvalidModel;
      }
      io[s].max_output_rows = 1;  // one row per token
    }
    if (s == decoder_start && generates && st->query() != kGeneratedToken) {
      error_ << "graph step " << s << " (layer '" << name << "'): the decoder part's first step reads the last "
             << "token (query -3), not " << st->query();
      return Status::kInvalidModel;
    }
    if (s > 0 && io[s].dtype != io[0].dtype) {
      error_ << "graph step " << s << " (layer '" << name << "'): float and int8 layers in one graph";
      return Status::kInvalidModel;
    }
    // Its primary input, then (cross layers) its memory.
    struct Edge {
      int source;
      int dim;
      ea_quant quant;
      int max_rows;
      const char* what;
    };
    const Edge edges[2] = {{st->query(), io[s].input_dim, io[s].input_quant, io[s].max_input_rows,
                            io[s].learned_query ? "the rows it pools" : "its query"},
                           {st->memory(), io[s].memory_dim, io[s].memory_quant, io[s].max_memory_rows,
                            "its memory (keys and values)"}};
    for (int e = 0; e < 2; ++e) {
      const Edge& edge = edges[e];
      if (e == 0 && edge.source == kModelMemory) {
        error_ << "graph step " << s << " (layer '" << name << "') reads the model's memory as its query";
        return Status::kInvalidModel;
      }
      if (e == 1 && !io[s].cross) {
        if (edge.source != kModelMemory) {
          error_ << "graph step " << s << " (layer '" << name << "') reads no memory (not cross-attention)";
          return Status::kInvalidModel;
        }
        continue;
      }
      if (e == 1) {
        const LayerInfo info = layer_info(*this->layer(layer));
        if (info.value_dim != info.key_dim || !same_quant(info.key_quant, info.value_quant)) {
          error_ << "graph step " << s << " (layer '" << name
                 << "'): its keys and values differ in width or quantization, one memory cannot feed both";
          return Status::kInvalidModel;
        }
      }
      const bool token = decoder_part && e == 0 && edge.source == kGeneratedToken;
      if ((edge.source < kModelMemory && !token) || edge.source >= s) {
        error_ << "graph step " << s << " (layer '" << name << "') reads " << edge.what << " from step "
               << edge.source << ": a source is an earlier step, -1 (input) or -2 (memory)"
               << (decoder_part ? ", or -3 (the last token) for a decoder-part query" : "");
        return Status::kInvalidModel;
      }
      if (generates && edge.source == kModelMemory) {
        error_ << "graph step " << s << " (layer '" << name << "') reads the model's memory: a generating graph "
               << "takes input rows only (a decoder's memory is an encoder step's output)";
        return Status::kInvalidModel;
      }
      if (decoder_part && e == 0 && edge.source >= 0 && edge.source < decoder_start) {
        error_ << "graph step " << s << " (layer '" << name << "') reads " << edge.what << " from encoder step "
               << edge.source << ": a decoder-part query is the last token or a decoder-part step's row";
        return Status::kInvalidModel;
      }
      // Generate caches it from that step's rows in the arena: the model's
      // input (-1) is no step (F9: it indexed the steps' tables at -1).
      if (decoder_part && e == 1 && (edge.source < 0 || edge.source >= decoder_start)) {
        error_ << "graph step " << s << " (layer '" << name << "') reads " << edge.what << " from ";
        if (edge.source >= 0) {
          error_ << "decoder step " << edge.source;
        } else {
          error_ << source_name(edge.source);
        }
        error_ << ": a decoder's memory is an encoder step's output, cached once";
        return Status::kInvalidModel;
      }
      StepIo from = {};
      if (token) {
        from.output_dim = 1;
        from.output_dtype = EA_S32;
        from.max_output_rows = 1;
      } else if (edge.source >= 0) {
        read[edge.source] = true;
        from = io[edge.source];
      } else {
        // Every step that reads a model input agrees on its width and quantization.
        bool& have = edge.source == kModelInput ? have_input : have_memory;
        StepIo& model = edge.source == kModelInput ? model_in : model_mem;
        if (!have) {
          have = true;
          model.output_dim = edge.dim;
          model.output_quant = edge.quant;
          model.max_output_rows = edge.max_rows;
          model.output_dtype = e == 0 ? io[s].input_dtype : io[s].dtype;
        }
        if (edge.max_rows < model.max_output_rows) model.max_output_rows = edge.max_rows;
        from = model;
      }
      if (from.output_dim != edge.dim) {
        error_ << "graph step " << s << " (layer '" << name << "'): " << edge.what << " is " << edge.dim
               << " wide, " << source_name(edge.source);
        if (edge.source >= 0) error_ << " " << edge.source;
        error_ << " gives " << from.output_dim;
        return Status::kInvalidModel;
      }
      const ea_dtype wants = e == 0 ? io[s].input_dtype : io[s].dtype;
      if (from.output_dtype != wants) {
        error_ << "graph step " << s << " (layer '" << name << "'): " << edge.what << " takes "
               << dtype_label(wants) << " elements, " << source_name(edge.source);
        if (edge.source >= 0) error_ << " " << edge.source;
        error_ << " gives " << dtype_label(from.output_dtype);
        return Status::kInvalidModel;
      }
      if ((wants == EA_S8 || wants == EA_S16) && !same_quant(from.output_quant, edge.quant)) {
        error_ << "graph step " << s << " (layer '" << name << "'): " << edge.what << " is quantized at scale "
               << micro(edge.quant.scale) << "e-6 zp " << edge.quant.zero_point << ", "
               << source_name(edge.source);
        if (edge.source >= 0) error_ << " " << edge.source;
        error_ << " gives " << micro(from.output_quant.scale) << "e-6 zp " << from.output_quant.zero_point
               << ": the bytes cannot be passed on";
        return Status::kInvalidModel;
      }
      if (edge.source >= 0 && from.max_output_rows > edge.max_rows) {
        error_ << "graph step " << s << " (layer '" << name << "'): " << edge.what << " takes at most "
               << edge.max_rows << " rows, step " << edge.source << " gives up to " << from.max_output_rows;
        return Status::kInvalidModel;
      }
    }
  }
  if (generates) {
    // The argmax's index is the next token: every step reading the last
    // token must take each index it can give.
    const StepIo& last = io[n - 1];
    const char* last_name = layer(static_cast<int>(g->steps()->Get(n - 1)->layer()))->name()->c_str();
    if (last.output_dtype != EA_S32 || last.output_dim != 1) {
      error_ << "graph step " << n - 1 << " (layer '" << last_name << "'): a generating graph ends in an argmax "
             << "giving one index per row (the next token), this step gives " << last.output_dim << " "
             << dtype_label(last.output_dtype) << " values";
      return Status::kInvalidModel;
    }
    for (int s = decoder_start; s < n; ++s) {
      if (g->steps()->Get(static_cast<uint32_t>(s))->query() != kGeneratedToken) continue;
      if (io[s].input_range < last.input_dim) {
        error_ << "graph step " << s << " (layer '" << layer(static_cast<int>(g->steps()->Get(s)->layer()))->name()->c_str()
               << "') takes token ids 0.." << io[s].input_range - 1 << ", the argmax of step " << n - 1
               << " gives 0.." << last.input_dim - 1;
        return Status::kInvalidModel;
      }
    }
  }
  for (int s = 0; s + 1 < n; ++s) {
    if (!read[s]) {
      error_ << "graph step " << s << " (layer '" << layer(static_cast<int>(g->steps()->Get(s)->layer()))->name()->c_str()
             << "'): no later step reads its output, and only the last step's is the model's";
      return Status::kInvalidModel;
    }
  }
  num_steps_ = n;
  decoder_start_ = decoder_start;
  return Status::kOk;
}

int Model::GraphOutputRows(int num_rows) const {
  GraphInfo info;
  int rows = 0;
  return GetGraphInfo(&info, num_rows, &rows) == Status::kOk ? rows : 0;
}

Status Model::GetGraphInfo(GraphInfo* info) const {
  int rows = 0;
  return GetGraphInfo(info, 0, &rows);
}

// One pass over the steps (Invoke calls it once per run): the description
// and the rows each step gives for num_rows input rows.
Status Model::GetGraphInfo(GraphInfo* info, int num_rows, int* output_rows) const {
  error_.Clear();
  if (info == nullptr) {
    error_ << "GetGraphInfo: info is null";
    return Status::kInvalidArgument;
  }
  if (num_steps_ == 0) {
    error_ << "the model has no graph (convert a spec whose layers are chained with \"input\")";
    return Status::kUnsupported;
  }
  *info = GraphInfo{};
  info->num_steps = num_steps_;
  int rows[kMaxGraphSteps];
  if (num_rows < 0 || num_rows > static_cast<int>(kMaxLength)) num_rows = 0;  // the caller refuses it; no overflow here
  info->decoder_start = decoder_start_;
  for (int s = 0; s < num_steps_; ++s) {
    const fb::GraphStep* st = step(s);
    const fb::Layer& l = *layer(static_cast<int>(st->layer()));
    const StepIo io = step_io(l, 0);
    rows[s] = step_output_rows(io, st->query() >= 0 ? rows[st->query()] : st->query() == kGeneratedToken ? 1 : num_rows);
    if (decoder_start_ > 0 && s >= decoder_start_) {
      // Token t runs at position t: each decoder step holds max_q_len of
      // them (a KV cache of self-attention MHA: max_kv_len).
      const int limit = token_step(l) == TokenStep::kKvCache && !find_layer_kind(l.options_type())->kv_positions_on_q_len
                            ? static_cast<int>(l.max_kv_len())
                            : static_cast<int>(l.max_q_len());
      if (s == decoder_start_ || limit < info->max_tokens) info->max_tokens = limit;
      if (st->query() == kGeneratedToken && (info->token_range == 0 || io.input_range < info->token_range)) {
        info->token_range = io.input_range;
      }
    }
    info->dtype = io.dtype;
    if (st->query() == kModelInput) {
      info->input_dtype = io.input_dtype;
      info->input_range = io.input_range;
      if (info->input_dim == 0 || io.max_input_rows < info->max_input_rows) info->max_input_rows = io.max_input_rows;
      info->input_dim = io.input_dim;
      info->input_quant = io.input_quant;
    }
    if (io.cross && st->memory() == kModelMemory) {
      if (info->memory_dim == 0 || io.max_memory_rows < info->max_memory_rows) {
        info->max_memory_rows = io.max_memory_rows;
      }
      info->memory_dim = io.memory_dim;
      info->memory_quant = io.memory_quant;
    }
    if (s == num_steps_ - 1) {
      info->output_dim = io.output_dim;
      info->output_dtype = io.output_dtype;
      info->output_quant = io.output_quant;
      info->max_output_rows = io.max_output_rows;
      info->output_layer = static_cast<int32_t>(st->layer());
    }
  }
  *output_rows = rows[num_steps_ - 1];
  return Status::kOk;
}

}  // namespace edgeattn
