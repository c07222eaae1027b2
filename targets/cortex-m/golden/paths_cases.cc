// edgeattn-paths-cases: host generator of the Cortex-M replay of the
// fuzz_paths corpus (targets/cortex-m/paths_replay).
//
//   edgeattn-paths-cases OUT_PREFIX DATA_BUDGET ARENA_BUDGET MAC_BUDGET first|turns DIR...
//
// Takes the files of the DIRs (the committed corpus, the generated seeds of
// make_paths_seeds.cc), each DIR in a fixed pseudo-random order (by a hash
// of the file name, so that a budget cut spreads over the seed models, whose
// names group them), either DIR after DIR
// ("first": the first DIR has priority) or in turns (one file of each DIR at
// a time: a mix when the budget is small), and decodes each exactly as fuzz_paths does (model_input.h,
// paths_limits.h: same trailer, caps, seeds, skipped layers). Keeps an input
// when its model is int8 only (the firmware is EA_INT8_ONLY and refuses float
// layers), needs at most ARENA_BUDGET arena bytes at its caps and, with its
// inputs and expected outputs, fits in what is left of DATA_BUDGET bytes and
// MAC_BUDGET estimated multiply-accumulates. For a kept input it runs the
// host runtime on the "ref" path as fuzz_paths' RunLayer does (Run, then a
// KV-cache Step, then the cached-keys run) and writes OUT_PREFIX.h /
// OUT_PREFIX.cc: the model bytes, inputs and expected outputs as const arrays
// (ea_paths_input, targets/cortex-m/paths_replay/paths_case.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "model_input.h"
#include "paths_limits.h"

namespace {

using namespace edgeattn;
namespace fs = std::filesystem;
using eafuzz::paths::kMaxArena;
using eafuzz::paths::kMaxIo;
using eafuzz::paths::kMaxLen;
using eafuzz::paths::kMaxMacs;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "edgeattn-paths-cases: error: %s\n", what.c_str());
  std::exit(1);
}

struct LayerCase {
  int layer = 0, q_len = 0, kv_len = 0, kv_valid_len = 0, cached = 0, step = 0;
  std::vector<uint8_t> q, k, v, out, w, step_out, step_w;  // empty: none
};

struct InputCase {
  std::string name;
  std::vector<uint8_t> model;
  int q_cap = 0, kv_cap = 0;
  size_t arena_bytes = 0;
  std::vector<LayerCase> layers;
  size_t bytes() const {
    size_t n = model.size();
    for (const LayerCase& l : layers) {
      n += l.q.size() + l.k.size() + l.v.size() + l.out.size() + l.w.size() + l.step_out.size() +
           l.step_w.size() + 64;
    }
    return n;
  }
};

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return p != nullptr ? std::vector<uint8_t>(b, b + n) : std::vector<uint8_t>();
}

// Runs layer `i` on the ref path like fuzz_paths' RunLayer; false when the
// cached-keys run differs from the uncached one (fuzz_paths would report it).
bool RunRef(Interpreter& interp, int i, eafuzz::LayerInput in, LayerCase* c) {
  RunArgs& a = in.args;
  c->out.assign(in.out_bytes, 0);
  c->w.assign(in.want_weights ? in.weight_bytes : 0, 0);
  a.output = c->out.data();
  a.attn_weights = in.want_weights ? c->w.data() : nullptr;
  if (interp.Run(i, a) != Status::kOk) Fail(std::string("Run: ") + interp.error());
  if (in.info.kv_cache) {
    const int position = interp.CachedLength(i);
    std::vector<uint8_t> so(static_cast<size_t>(in.info.output_dim) * eafuzz::ElemBytes(in.info.output_dtype));
    // The step's weights cover the positions so far, or a decoder block's memory.
    const size_t keys = in.info.kind == EA_LAYER_DECODER_BLOCK ? static_cast<size_t>(in.kv_len)
                                                                : static_cast<size_t>(position + 1);
    std::vector<uint8_t> sw(static_cast<size_t>(in.info.num_heads) * keys * 2);
    const Status s = interp.Step(i, a.query, so.data(), in.want_weights ? sw.data() : nullptr);
    if (s == Status::kOk) {
      c->step = 1;
      c->step_out = so;
      if (in.want_weights) c->step_w = sw;
    } else if (s != Status::kLengthExceedsPlan) {
      Fail(std::string("Step: ") + interp.error());
    }
  }
  if (!in.cacheable) return true;
  c->cached = 1;
  eafuzz::UseCachedKeys(interp, i, &in);
  std::vector<uint8_t> out(c->out.size()), w(c->w.size());
  a.output = out.data();
  a.attn_weights = in.want_weights ? w.data() : nullptr;
  if (interp.Run(i, a) != Status::kOk) Fail(std::string("Run (cached keys): ") + interp.error());
  return out == c->out && w == c->w;
}

enum class Skip { kNone, kNoLoad, kFloat, kArena, kNoLayer };

// Decodes one corpus file; kNone when the firmware can run it.
Skip Decode(const std::string& name, const std::vector<uint8_t>& data, size_t arena_budget, double* macs,
            InputCase* ic) {
  eafuzz::AlignedBuffer whole(data.data(), data.size());
  eafuzz::Input input;
  if (!eafuzz::OpenInput(data.data(), data.size(), whole, kMaxLen, kMaxArena, &input)) return Skip::kNoLoad;
  const Model& fmodel = input.model;
  for (int i = 0; i < fmodel.num_layers(); ++i) {
    LayerInfo info;
    if (fmodel.GetLayerInfo(i, &info) != Status::kOk || info.dtype != EA_S8) return Skip::kFloat;
  }
  if (input.arena_bytes > arena_budget) return Skip::kArena;
  // The bytes Model::Load verified (re-sealed when trailer bit 8 says so):
  // [model | trailer] when the trailer is the file's last 16 bytes.
  const size_t t = eafuzz::kTrailerBytes;
  const bool has_trailer =
      data.size() > t + 8 && std::memcmp(input.trailer, data.data() + data.size() - t, t) == 0;
  ic->name = name;
  ic->model = Bytes(whole.p, data.size() - (has_trailer ? t : 0));
  ic->q_cap = input.q_cap;
  ic->kv_cap = input.kv_cap;
  ic->arena_bytes = input.arena_bytes;

  // The expected outputs come from the embedded bytes, loaded as the firmware will.
  eafuzz::AlignedBuffer copy(ic->model.data(), ic->model.size());
  Model model;
  if (model.Load(copy.p, ic->model.size()) != Status::kOk) Fail(name + ": embedded bytes: " + model.error());
  if (model.ArenaBytesFor(ic->q_cap, ic->kv_cap) != ic->arena_bytes) Fail(name + ": arena bytes differ");
  eafuzz::AlignedBuffer arena(ic->arena_bytes);
  Interpreter interp;
  if (interp.Init(&model, arena.p, ic->arena_bytes, ic->q_cap, ic->kv_cap) != Status::kOk) {
    Fail(name + ": Init: " + interp.error());
  }
  eafuzz::LayerInput in;
  *macs = 0;
  for (int i = 0; i < fmodel.num_layers(); ++i) {
    if (!eafuzz::PrepareLayer(fmodel, i, input.trailer, input.q_cap, input.kv_cap, kMaxIo, input.seed, &in)) {
      continue;
    }
    const double m = eafuzz::paths::Macs(fmodel, i, in);
    if (m > kMaxMacs) continue;
    *macs += m;
    LayerCase c;
    c.layer = i;
    c.q_len = in.q_len;
    c.kv_len = in.kv_len;
    c.kv_valid_len = in.args.kv_valid_len;
    const RunArgs& a = in.args;
    // The rows in their element types, as model_input.h made them: the
    // query rows in the layer's input type (int16 rows of a block on the
    // 16-bit stream), a row_pool's keys too, other keys and values int8.
    const size_t q_es = eafuzz::ElemBytes(in.info.input_dtype);
    const size_t k_es = in.info.kind == EA_LAYER_ROW_POOL ? q_es : 1;
    c.q = Bytes(a.query, static_cast<size_t>(in.q_len) * in.info.query_dim * q_es);
    c.k = Bytes(a.key, static_cast<size_t>(in.kv_len) * in.info.key_dim * k_es);
    c.v = Bytes(a.value, static_cast<size_t>(in.kv_len) * in.info.value_dim);
    if (!RunRef(interp, i, in, &c)) {
      std::fprintf(stderr, "edgeattn-paths-cases: %s layer %d: cached-keys run differs on ref (skipped)\n",
                   name.c_str(), i);
      continue;
    }
    ic->layers.push_back(std::move(c));
  }
  return ic->layers.empty() ? Skip::kNoLayer : Skip::kNone;
}

void EmitArray(std::ostream& s, const char* type, const std::string& name, const std::vector<uint8_t>& v,
               int elem) {
  // Aligned for any element type the bytes hold (int16 rows: Helium's
  // VLDRH needs halfword alignment).
  s << "alignas(4) static const " << type << " " << name << "[" << v.size() / elem << "] = {";
  for (size_t i = 0; i < v.size(); i += elem) {
    if (i / elem % 24 == 0) s << "\n ";
    long x;
    if (elem == 1) {
      x = std::strcmp(type, "int8_t") == 0 ? static_cast<int8_t>(v[i]) : v[i];
    } else {
      uint16_t u;
      std::memcpy(&u, &v[i], 2);
      x = u;
    }
    s << " " << x << ",";
  }
  s << "\n};\n";
}

std::string Ptr(std::ostream& s, const char* type, const std::string& name, const std::vector<uint8_t>& v,
                int elem) {
  if (v.empty()) return "0";
  EmitArray(s, type, name, v, elem);
  return name;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) Fail("cannot write " + path);
}

uint64_t NameHash(const std::string& s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Every regular file of the dirs as "dir/name", each dir ordered by NameHash:
// dir after dir, or in turns (the first file of each dir, then the second...).
std::vector<std::string> Order(const std::vector<std::string>& dirs, bool turns) {
  std::vector<std::vector<std::string>> lists;
  size_t longest = 0;
  for (const std::string& dir : dirs) {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name[0] != '.') names.push_back(dir + "/" + name);  // not .stamp
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      const uint64_t ha = NameHash(fs::path(a).filename().string()), hb = NameHash(fs::path(b).filename().string());
      return ha != hb ? ha < hb : a < b;
    });
    longest = std::max(longest, names.size());
    lists.push_back(std::move(names));
  }
  std::vector<std::string> out;
  if (!turns) {
    for (const std::vector<std::string>& l : lists) out.insert(out.end(), l.begin(), l.end());
    return out;
  }
  for (size_t i = 0; i < longest; ++i) {
    for (const std::vector<std::string>& l : lists) {
      if (i < l.size()) out.push_back(l[i]);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7 || (std::strcmp(argv[5], "first") != 0 && std::strcmp(argv[5], "turns") != 0)) {
    std::fprintf(stderr,
                 "usage: edgeattn-paths-cases OUT_PREFIX DATA_BUDGET ARENA_BUDGET MAC_BUDGET first|turns DIR...\n");
    return 2;
  }
  const std::string prefix = argv[1];
  const size_t data_budget = std::strtoull(argv[2], nullptr, 0);
  const size_t arena_budget = std::strtoull(argv[3], nullptr, 0);
  const double mac_budget = std::strtod(argv[4], nullptr);
  const bool turns = std::strcmp(argv[5], "turns") == 0;
  const std::vector<std::string> dirs(argv + 6, argv + argc);
  if (SetKernelPath("ref") != Status::kOk) Fail("cannot force the reference kernels");

  const std::vector<std::string> names = Order(dirs, turns);
  std::vector<InputCase> kept;
  size_t bytes = 0, max_arena = 0, max_out = 0, max_w = 0;
  double macs = 0;
  int skipped[5] = {}, over_budget = 0;
  for (const std::string& name : names) {
    std::ifstream f(name, std::ios::binary);
    const std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    InputCase ic;
    double m = 0;
    const Skip skip = Decode(name, data, arena_budget, &m, &ic);
    if (skip != Skip::kNone) {
      ++skipped[static_cast<int>(skip)];
      continue;
    }
    if (bytes + ic.bytes() > data_budget || macs + m > mac_budget) {
      ++over_budget;
      continue;
    }
    bytes += ic.bytes();
    macs += m;
    max_arena = std::max(max_arena, ic.arena_bytes);
    for (const LayerCase& l : ic.layers) {
      max_out = std::max({max_out, l.out.size(), l.step_out.size()});
      max_w = std::max({max_w, l.w.size() / 2, l.step_w.size() / 2});
    }
    kept.push_back(std::move(ic));
  }
  if (kept.empty()) Fail("no input fits");

  std::ostringstream h, src;
  size_t num_layers = 0;
  for (const InputCase& ic : kept) num_layers += ic.layers.size();
  h << "/* Generated by edgeattn-paths-cases (host, kernel path \"ref\"). Do not edit. */\n"
    << "#ifndef EA_PATHS_CASES_H_\n#define EA_PATHS_CASES_H_\n\n#include \"paths_case.h\"\n\n"
    << "#define EA_PATHS_NUM_INPUTS " << kept.size() << "\n"
    << "#define EA_PATHS_NUM_LAYER_CASES " << num_layers << "\n"
    << "#define EA_PATHS_MAX_ARENA " << max_arena << "u\n"
    << "#define EA_PATHS_MAX_OUTPUT " << std::max<size_t>(max_out, 1) << "u  /* int8 */\n"
    << "#define EA_PATHS_MAX_WEIGHTS " << std::max<size_t>(max_w, 1) << "u /* uint16 */\n"
    << "extern const ea_paths_input ea_paths_inputs[EA_PATHS_NUM_INPUTS];\n\n#endif\n";
  src << "/* Generated by edgeattn-paths-cases. Do not edit. */\n#include \""
      << fs::path(prefix).filename().string() << ".h\"\n";
  for (size_t n = 0; n < kept.size(); ++n) {
    const InputCase& ic = kept[n];
    const std::string p = "i" + std::to_string(n) + "_";
    src << "\n/* " << fs::path(ic.name).filename().string() << " */\nalignas(16) ";
    EmitArray(src, "uint8_t", p + "model", ic.model, 1);
    std::ostringstream table;
    for (size_t j = 0; j < ic.layers.size(); ++j) {
      const LayerCase& l = ic.layers[j];
      const std::string lp = p + "l" + std::to_string(j) + "_";
      table << "  {" << l.layer << ", " << l.q_len << ", " << l.kv_len << ", " << l.kv_valid_len << ", "
            << l.cached << ", " << l.step << ", " << Ptr(src, "int8_t", lp + "q", l.q, 1) << ", "
            << Ptr(src, "int8_t", lp + "k", l.k, 1) << ", " << Ptr(src, "int8_t", lp + "v", l.v, 1) << ", "
            << Ptr(src, "int8_t", lp + "out", l.out, 1) << ", " << l.out.size() << "u, "
            << Ptr(src, "uint16_t", lp + "w", l.w, 2) << ", " << l.w.size() / 2 << "u, "
            << Ptr(src, "int8_t", lp + "sout", l.step_out, 1) << ", " << l.step_out.size() << "u, "
            << Ptr(src, "uint16_t", lp + "sw", l.step_w, 2) << ", " << l.step_w.size() / 2 << "u},\n";
    }
    src << "static const ea_paths_layer " << p << "layers[] = {\n" << table.str() << "};\n";
  }
  src << "\nconst ea_paths_input ea_paths_inputs[EA_PATHS_NUM_INPUTS] = {\n";
  for (size_t n = 0; n < kept.size(); ++n) {
    const InputCase& ic = kept[n];
    const std::string p = "i" + std::to_string(n) + "_";
    src << "  {\"" << fs::path(ic.name).parent_path().filename().string() << "/"
        << fs::path(ic.name).filename().string() << "\", " << p << "model, " << ic.model.size() << "u, " << ic.q_cap << ", "
        << ic.kv_cap << ", " << ic.arena_bytes << "u, " << p << "layers, " << ic.layers.size() << "},\n";
  }
  src << "};\n";
  Write(prefix + ".h", h.str());
  Write(prefix + ".cc", src.str());
  for (const std::string& dir : dirs) {
    size_t n = 0;
    for (const InputCase& ic : kept) n += fs::path(ic.name).parent_path() == fs::path(dir) ? 1 : 0;
    std::printf("edgeattn-paths-cases: %zu inputs from %s\n", n, dir.c_str());
  }
  std::printf("edgeattn-paths-cases: %zu inputs, %zu int8 layer cases, %zu data bytes, %.3g MACs, "
              "max arena %zu; skipped: %d with float layers, %d not loading, %d with no layer fuzz_paths runs, %d arena > %zu, "
              "%d over the budgets -> %s.{h,cc}\n",
              kept.size(), num_layers, bytes, macs, max_arena, skipped[static_cast<int>(Skip::kFloat)],
              skipped[static_cast<int>(Skip::kNoLoad)],
              skipped[static_cast<int>(Skip::kNoLayer)], skipped[static_cast<int>(Skip::kArena)], arena_budget,
              over_budget, prefix.c_str());
  return 0;
}
