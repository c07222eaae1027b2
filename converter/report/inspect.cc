#include "converter/report/inspect.h"

#include <algorithm>
#include <iomanip>

#include "converter/kinds/kind.h"

namespace edgeattn {
namespace convert {

namespace {

std::string shape_str(const std::vector<uint32_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// One row per tensor: role (what the layer uses it for) and the tensor's
// name in the file in columns as wide as the layer's longest, so a long role
// never runs into the name.
void print_tensors(const std::vector<TensorEntry>& tensors, const std::string& layer, std::ostream& os) {
  size_t role_w = 4, name_w = 4;
  for (const TensorEntry& t : tensors) {
    if (t.layer != layer) continue;
    role_w = std::max(role_w, t.role.size());
    name_w = std::max(name_w, t.name.size());
  }
  for (const TensorEntry& t : tensors) {
    if (t.layer != layer) continue;
    os << "    " << std::left << std::setw(static_cast<int>(role_w)) << t.role << "  "
       << std::setw(static_cast<int>(name_w)) << t.name << "  " << std::setw(6) << t.dtype << std::setw(12)
       << shape_str(t.shape) << (t.packed ? " K4N16  " : " stride ") << std::setw(4) << t.row_stride << " "
       << std::right << std::setw(7) << t.size << " B @ " << t.offset << std::left;
    if (!t.scales.empty()) {
      const auto [lo, hi] = std::minmax_element(t.scales.begin(), t.scales.end());
      os << "  scale " << std::setprecision(5) << *lo;
      if (t.scales.size() > 1) os << " .. " << *hi << " (" << t.scales.size() << " channels)";
    }
    os << "\n";
  }
}

// An int8 LayerNorm stores its gain as int16 (role "<norm>.gain"; a
// positional table is int16 too).
bool has_layernorm(const std::vector<TensorEntry>& tensors, const std::string& layer) {
  const std::string gain = ".gain";
  for (const TensorEntry& t : tensors) {
    if (t.layer == layer && t.dtype == "int16" && t.role.size() >= gain.size() &&
        t.role.compare(t.role.size() - gain.size(), gain.size(), gain) == 0) {
      return true;
    }
  }
  return false;
}

// What the int8 LayerNorm's constants are (quantize/block_quant.h, requant.h
// contract 4), since inspect prints them without their formulas.
void print_layernorm_legend(std::ostream& os) {
  os << "  LayerNorm constants: gain int16 at s_g = max|gain| / 32767 and bias int32 at s_g 2^-f (tensors "
        "above); E = round(2^16 dim^2 eps / s_in^2) is eps in the int8 input's units; one requant "
        "s_g 2^-f / s_out to the output\n";
}

// The graph (format 6): one line per step, where it reads and what it gives,
// and the activations' share of the arena.
void print_graph(const Model& model, std::ostream& os) {
  GraphInfo g;
  if (model.GetGraphInfo(&g) != Status::kOk) {
    os << "graph: none (the layers run one by one; chain them with \"input\" for one Invoke)\n";
    return;
  }
  std::vector<uint64_t> offsets(static_cast<size_t>(g.num_steps));
  const ArenaLayout a = model.LayOutArena(0, 0, nullptr, offsets.data());
  os << "graph: " << g.num_steps << " steps, input [" << g.max_input_rows << "][" << g.input_dim << "]";
  if (g.memory_dim > 0) os << ", memory [" << g.max_memory_rows << "][" << g.memory_dim << "]";
  os << " -> output [" << g.max_output_rows << "][" << g.output_dim << "]; intermediate rows "
     << a.scratch_offset - a.activation_offset << " arena bytes at " << a.activation_offset << "\n";
  if (g.decoder_start > 0) {
    os << "generates (Generate): steps 0.." << g.decoder_start - 1 << " the encoder, run once; steps "
       << g.decoder_start << ".." << g.num_steps - 1 << " the decoder, run once per token (one row), up to "
       << g.max_tokens << " tokens, ids 0.." << g.token_range - 1 << "\n";
  }
  const auto source = [](int src) {
    return src == -1   ? std::string("input")
           : src == -2 ? std::string("memory")
           : src == -3 ? std::string("last token")
                       : "step " + std::to_string(src);
  };
  for (int s = 0; s < g.num_steps; ++s) {
    const fb::GraphStep* st = model.step(s);
    LayerInfo info;
    model.GetLayerInfo(static_cast<int>(st->layer()), &info);
    os << "  step " << s << ": " << info.name << " <- " << source(st->query());
    if (info.cross && !layer_shell(model, static_cast<int>(st->layer())).learned_query()) os << ", memory <- " << source(st->memory());
    if (s + 1 < g.num_steps) {
      os << "; output at arena +" << a.activation_offset + offsets[static_cast<size_t>(s)] << "\n";
    } else {
      os << "; output: the model's\n";
    }
  }
}

}  // namespace

void print_inspect(const LoadedModel& lm, const std::string& path, std::ostream& os) {
  const fb::Model& m = *lm.model().flatbuffer();
  os << "file: " << path << " (" << lm.size() << " bytes)\n";
  os << "format_version: " << m.format_version() << "\n";
  if (const auto* p = m.producer()) {
    os << "producer: " << (p->name() ? p->name()->str() : "") << " " << (p->version() ? p->version()->str() : "")
       << " (source: " << (p->source() ? p->source()->str() : "") << ")\n";
  }
  const size_t data_offset = m.data() != nullptr ? static_cast<size_t>(m.data()->data() - lm.data()) : 0;
  // Since format 3: the last 4 bytes are the CRC-32 of the rest (Load checked it).
  const uint8_t* tail = lm.data() + lm.size() - 4;
  const uint32_t file_crc = static_cast<uint32_t>(tail[0]) | static_cast<uint32_t>(tail[1]) << 8 |
                            static_cast<uint32_t>(tail[2]) << 16 | static_cast<uint32_t>(tail[3]) << 24;
  os << "weight data: " << (m.data() ? m.data()->size() : 0) << " bytes at file offset " << data_offset << "\n";
  os << "file checksum: CRC-32 0x" << std::hex << std::setw(8) << std::setfill('0') << file_crc << std::dec
     << std::setfill(' ') << " of bytes 0.." << lm.size() - 4 << "\n";
  os << "model arena: " << m.arena_bytes() << " bytes, " << m.worker_bytes()
     << " more per extra pool worker (ea_model_arena_bytes_for_workers)\n";
  print_graph(lm.model(), os);
  const std::vector<TensorEntry> tensors = list_tensors(m);
  for (int i = 0; i < lm.model().num_layers(); ++i) {
    const fb::Layer* l = lm.model().layer(i);
    LayerInfo info;
    lm.model().GetLayerInfo(i, &info);
    const FloatLayer shell = layer_shell(lm.model(), i);
    const LayerIo io = shell.io();
    os << "\nlayer " << i << ": " << info.name << "  kind " << shell.kind->name << "  dtype "
       << dtype_name(l->dtype()) << "\n";
    os << "  dims: query " << info.query_dim << ", key " << info.key_dim << ", value " << info.value_dim
       << ", output " << info.output_dim << "; heads " << info.num_heads << "; "
       << (shell.learned_query() ? "learned query" : io.keys ? "cross" : "self") << "; "
       << (shell.kind->keys_pair_rows ? "its keys pair up with its rows" : "mask " + mask_name(info.causal != 0))
       << "\n";
    os << "  max_q_len " << l->max_q_len() << ", max_kv_len " << l->max_kv_len() << ", arena "
       << l->arena_bytes() << " bytes\n";
    if (shell.kind->inspect != nullptr) shell.kind->inspect(*l, info, os);
    os << "  tensors:\n";
    print_tensors(tensors, info.name, os);
    if (l->dtype() != fb::DType::S8) continue;
    os << "  quantization:\n";
    if (shell.kind->inspect_quant != nullptr) shell.kind->inspect_quant(*l, os);
    if (has_layernorm(tensors, info.name)) print_layernorm_legend(os);
  }
  uint64_t total = 0;
  for (const TensorEntry& t : tensors) total += t.size;
  os << "\ntotal: " << tensors.size() << " tensors, " << total << " weight bytes ("
     << (m.data() ? m.data()->size() : 0) << " with alignment padding)\n";
}

}  // namespace convert
}  // namespace edgeattn
