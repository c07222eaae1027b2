// libFuzzer target: model load + verification + one inference of every layer,
// and of the whole model when it has a graph (Invoke).
//
// The input is a model file, optionally followed by a 16-byte trailer that
// picks the run lengths, the kv_valid_len, whether attention weights are
// requested, NaN/Inf injection, the XNNPACK backend (when built) and the seed
// of the layer inputs (model_input.h; a model file without a trailer takes
// these from a hash of its bytes). Models that need more than kMaxArena bytes at the capped
// lengths are loaded and verified but not run, so huge declared dimensions
// cannot make the fuzzer itself run out of memory or time.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "model_input.h"

namespace {

using eafuzz::Die;

constexpr size_t kMaxArena = 4u << 20;   // skip models needing more at the capped lengths
constexpr size_t kMaxIo = 4u << 20;      // bytes of inputs + outputs per run
constexpr int kMaxLen = 8;               // run lengths are 1..kMaxLen
constexpr size_t kXnnpackTail = 2u << 20;  // arena after the plan for XNNPACK (when built)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // [model | 16-byte trailer], else the whole input as a model (the seeds are
  // whole .eatn files; run parameters then come from a hash of the input).
  eafuzz::AlignedBuffer whole(data, size);
  eafuzz::Input input;
  if (!eafuzz::OpenInput(data, size, whole, kMaxLen, kMaxArena, &input)) return 0;
  const edgeattn::Model& model = input.model;
  const uint8_t* trailer = input.trailer;
  // Trailer bit: int8 projections through the XNNPACK backend (when built),
  // with its operators and packed weights in the arena after the plan.
  static const bool xnnpack = edgeattn::XnnpackBuilt() &&
                              edgeattn::XnnpackInitialize() == edgeattn::Status::kOk;
  const bool use_xnnpack = xnnpack && (trailer[6] & 4) != 0;
  const size_t arena_bytes = input.arena_bytes + (use_xnnpack ? kXnnpackTail : 0);
  eafuzz::AlignedBuffer arena(arena_bytes);
  edgeattn::Interpreter interp;
  edgeattn::Status s = interp.Init(&model, arena.p, arena_bytes, input.q_cap, input.kv_cap);
  if (s != edgeattn::Status::kOk) Die("Init", interp.error());  // ArenaBytesFor promised enough
  if (use_xnnpack) {
    s = interp.UseXnnpack();  // too small a tail for huge weights is a valid answer
    if (s != edgeattn::Status::kOk && s != edgeattn::Status::kArenaTooSmall) Die("UseXnnpack", interp.error());
  }
  std::vector<uint8_t> out, w;
  eafuzz::LayerInput in;
  for (int i = 0; i < model.num_layers(); ++i) {
    if (!eafuzz::PrepareLayer(model, i, trailer, input.q_cap, input.kv_cap, kMaxIo, input.seed, &in)) continue;
    out.assign(in.out_bytes + 1, 0);
    w.assign(in.weight_bytes + 4, 0);
    edgeattn::RunArgs& a = in.args;
    a.output = out.data();
    a.attn_weights = in.want_weights ? w.data() : nullptr;
    s = interp.Run(i, a);
    if (s != edgeattn::Status::kOk) Die("Run", interp.error());  // valid arguments, verified model
    if (in.cacheable) {
      eafuzz::UseCachedKeys(interp, i, &in);
      s = interp.Run(i, a);
      if (s != edgeattn::Status::kOk) Die("Run (cached keys)", interp.error());
      if (in.info.coverage) {  // the coverage sequence continues, then starts over
        s = interp.Run(i, a);
        if (s != edgeattn::Status::kOk) Die("Run (coverage, continued)", interp.error());
        if (interp.BeginSequence(i) != edgeattn::Status::kOk) Die("BeginSequence", interp.error());
        if (interp.Step(i, a.query, out.data()) != edgeattn::Status::kInvalidArgument) {
          Die("Step", "a coverage layer accepted Step");
        }
        s = interp.Run(i, a);
        if (s != edgeattn::Status::kOk) Die("Run (coverage, new sequence)", interp.error());
      }
    }
  }
  edgeattn::GraphInfo g;
  if (model.GetGraphInfo(&g) == edgeattn::Status::kOk) {
    // Rows within the caps, the trailer's padding; inputs of the layers' seed.
    const int rows = 1 + trailer[2] % (g.max_input_rows < input.q_cap ? g.max_input_rows : input.q_cap);
    const int cap_m = g.max_memory_rows < input.kv_cap ? g.max_memory_rows : input.kv_cap;
    const int memory_rows = g.memory_dim > 0 ? 1 + trailer[3] % cap_m : 0;
    const auto bytes = [](ea_dtype t) -> size_t { return t == EA_S8 ? 1 : t == EA_S16 ? 2 : 4; };
    const size_t in_elem = bytes(g.input_dtype), mem_elem = bytes(g.dtype);
    const size_t out_bytes = static_cast<size_t>(model.GraphOutputRows(rows)) * g.output_dim * bytes(g.output_dtype);
    if (static_cast<size_t>(rows) * g.input_dim * in_elem + out_bytes > kMaxIo) return 0;
    std::vector<uint32_t> x((static_cast<size_t>(rows) * g.input_dim * in_elem + 3) / 4);
    std::vector<uint32_t> m((static_cast<size_t>(memory_rows) * g.memory_dim * mem_elem + 3) / 4 + 1);
    std::vector<uint32_t> y(out_bytes / 4 + 1);
    uint64_t state = input.seed | 1;
    for (uint32_t& v : x) v = static_cast<uint32_t>(eafuzz::Mix(state));
    for (uint32_t& v : m) v = static_cast<uint32_t>(eafuzz::Mix(state));
    if (g.input_dtype == EA_S32) {  // token ids inside the table
      for (uint32_t& v : x) v %= static_cast<uint32_t>(g.input_range > 0 ? g.input_range : 1);
    } else if (g.input_dtype == EA_F32) {
      for (uint32_t& v : x) v = (v & 0x807FFFFFu) | 0x3F000000u;  // finite, |v| in [0.5, 1)
    }
    if (g.dtype == EA_F32) {
      for (uint32_t& v : m) v = (v & 0x807FFFFFu) | 0x3F000000u;
    }
    edgeattn::ModelInputs mi = {x.data(), rows, 1 + trailer[4] % rows,
                                g.memory_dim > 0 ? m.data() : nullptr, memory_rows,
                                memory_rows > 0 ? 1 + trailer[5] % memory_rows : 0};
    edgeattn::ModelOutputs mo = {y.data(), 0};
    if (g.decoder_start > 0) {  // a generating graph: Generate (up to 4 tokens), Invoke refuses it
      mi.memory = nullptr;
      mi.memory_rows = mi.memory_valid_rows = 0;
      int32_t tokens[4];
      int n = 0;
      const edgeattn::GenerateOptions options = {0, -1, g.max_tokens < 4 ? g.max_tokens : 4};
      s = interp.Generate(mi, options, tokens, 4, &n);
      if (s != edgeattn::Status::kOk && s != edgeattn::Status::kLengthExceedsPlan) Die("Generate", interp.error());
      return 0;
    }
    s = interp.Invoke(mi, &mo);
    // Valid arguments and a verified graph: only a step past its capped length
    // (rows a step adds under an Init cap) may refuse.
    if (s != edgeattn::Status::kOk && s != edgeattn::Status::kLengthExceedsPlan) Die("Invoke", interp.error());
  }
  return 0;
}
