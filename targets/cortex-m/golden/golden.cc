// edgeattn-golden: host generator of the firmware's golden vectors.
//
//   edgeattn-golden MODEL.eatn REFERENCE.npz NAME OUT_PREFIX [SAMPLES]
//
// For every layer of MODEL, takes the first SAMPLES inputs of REFERENCE.npz,
// quantizes them with the layer's input quantization (ea_layer_info), runs the
// host runtime with the reference kernels forced (SetKernelPath("ref")) and
// writes OUT_PREFIX.h / OUT_PREFIX.c: the int8 inputs, the expected int8
// outputs and Q15 attention weights, as an array of ea_golden_case
// (targets/cortex-m/example/golden_case.h). Cross-attention MHA and additive
// layers get one more case that goes through CacheKeys + use_cached_keys.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "converter/model/dataset.h"
#include "converter/base/error.h"
#include "converter/io/file.h"
#include "converter/io/npy.h"
#include "converter/eval/runner.h"
#include "edgeattn/edgeattn.hpp"
#include "golden_files.h"

namespace {

using namespace edgeattn;
using namespace edgeattn::convert;

int8_t quantize(double x, const ea_quant& q) {
  const double v = std::round(x / q.scale) + q.zero_point;
  return static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
}

std::vector<int8_t> encode(const std::vector<double>& x, size_t offset, size_t count, const ea_quant& q) {
  std::vector<int8_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = quantize(x[offset + i], q);
  return out;
}

struct Case {
  int layer = 0, q_len = 0, kv_len = 0, kv_valid_len = 0, cached = 0, sample = 0;
  std::vector<int8_t> q, k, v, out;
  std::vector<uint16_t> w;
};

template <typename T>
void emit_array(std::ostream& s, const char* type, const std::string& name, const std::vector<T>& v) {
  s << "static const " << type << " " << name << "[" << std::max<size_t>(v.size(), 1) << "] = {";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 20 == 0) s << "\n ";
    s << " " << static_cast<long>(v[i]) << ",";
  }
  if (v.empty()) s << "0";
  s << "\n};\n";
}

int run(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: edgeattn-golden MODEL.eatn REFERENCE.npz NAME OUT_PREFIX [SAMPLES]\n");
    return 2;
  }
  const std::string model_path = argv[1], ref_path = argv[2], name = argv[3], prefix = argv[4];
  const int samples = argc > 5 ? std::atoi(argv[5]) : 2;
  if (SetKernelPath("ref") != Status::kOk) fail("cannot force the reference kernels");

  const std::vector<uint8_t> bytes = read_file(model_path);
  const LoadedModel lm(bytes, model_path);
  const Model& model = lm.model();
  const ArrayMap npz = load_npz(ref_path);

  const size_t arena_bytes = model.arena_bytes();
  std::vector<uint8_t> arena_storage(arena_bytes + 16);
  uint8_t* arena = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(arena_storage.data()) + 15) / 16 * 16);
  Interpreter interp;
  if (interp.Init(&model, arena, arena_bytes) != Status::kOk) fail("init: ", interp.error());

  std::vector<Case> cases;
  for (int li = 0; li < model.num_layers(); ++li) {
    LayerInfo info;
    model.GetLayerInfo(li, &info);
    if (info.dtype != EA_S8) fail("layer '", info.name, "' is not int8");
    const FloatLayer shell = layer_shell(model, li);
    const LayerData d = load_layer_data(npz, ref_path, shell, false);
    const bool self = !info.cross;  // keys (if any) are the query rows
    // Cached keys and values (cross-attention, additive); a decoder block also
    // caches its memory, but its cached run is a KV-cache step, not timed here.
    const bool cacheable = info.key_cache != 0 && info.kv_cache == 0;
    const bool learned_query = info.query_dim == 0;  // one output row, no query input
    const int lq = learned_query ? 1 : d.lq;
    const int n = std::min(samples, d.n);
    for (int s = 0; s < n + (cacheable ? 1 : 0); ++s) {
      const bool cached = s == n;
      const int si = cached ? 0 : s;
      Case c;
      c.layer = li;
      c.sample = si;
      c.cached = cached ? 1 : 0;
      c.q_len = lq;
      c.kv_len = self ? d.lq : d.lk;
      c.kv_valid_len = d.valid[static_cast<size_t>(si)];
      if (!d.query.empty() && !learned_query) {
        const size_t cnt = static_cast<size_t>(d.lq) * info.query_dim;
        c.q = encode(d.query, si * cnt, cnt, info.query_quant);
      }
      if (!self && !d.key.empty()) {
        const size_t cnt = static_cast<size_t>(d.lk) * info.key_dim;
        c.k = encode(d.key, si * cnt, cnt, info.key_quant);
      }
      if (!self && !d.value.empty()) {
        const size_t cnt = static_cast<size_t>(d.lk) * info.value_dim;
        c.v = encode(d.value, si * cnt, cnt, info.value_quant);
      }
      c.out.assign(static_cast<size_t>(lq) * info.output_dim, 0);
      c.w.assign(static_cast<size_t>(info.num_heads) * lq * c.kv_len, 0);
      RunArgs a = {};
      a.query = c.q.empty() ? nullptr : c.q.data();
      a.key = c.k.empty() ? nullptr : c.k.data();
      a.value = c.v.empty() ? nullptr : c.v.data();
      a.q_len = c.q_len;
      a.kv_len = c.kv_len;
      a.kv_valid_len = c.kv_valid_len;
      a.output = c.out.data();
      a.attn_weights = c.w.empty() ? nullptr : c.w.data();  // layernorm, ffn: no attention weights
      if (cached) {
        if (interp.CacheKeys(li, a.key, a.value, c.kv_len, c.kv_valid_len) != Status::kOk) {
          fail("layer '", info.name, "': CacheKeys: ", interp.error());
        }
        a.use_cached_keys = 1;
        if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) a.key = a.value = nullptr;
        if (info.kind == EA_LAYER_ADDITIVE) {
          a.key = nullptr;
          if (a.value == nullptr) a.value = c.k.data();  // value = key
        }
      }
      if (interp.Run(li, a) != Status::kOk) fail("layer '", info.name, "' sample ", si, ": ", interp.error());
      cases.push_back(std::move(c));
    }
  }

  std::ostringstream src;
  src << "/* Generated by edgeattn-golden. Do not edit. */\n#include \"golden_" << name << ".h\"\n\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string p = "c" + std::to_string(i) + "_";
    emit_array(src, "int8_t", p + "q", cases[i].q);
    emit_array(src, "int8_t", p + "k", cases[i].k);
    emit_array(src, "int8_t", p + "v", cases[i].v);
    emit_array(src, "int8_t", p + "out", cases[i].out);
    emit_array(src, "uint16_t", p + "w", cases[i].w);
  }
  src << "\nconst ea_golden_case golden_" << name << "[" << cases.size() << "] = {\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string p = "c" + std::to_string(i) + "_";
    auto ptr = [&](const char* what, bool present) { return present ? p + what : std::string("0"); };
    src << "  {" << c.layer << ", " << c.sample << ", " << c.q_len << ", " << c.kv_len << ", " << c.kv_valid_len
        << ", " << c.cached << ", " << ptr("q", !c.q.empty()) << ", " << ptr("k", !c.k.empty()) << ", "
        << ptr("v", !c.v.empty()) << ", " << p << "out, " << c.out.size() << "u, " << p << "w, " << c.w.size()
        << "u},\n";
  }
  src << "};\n";
  golden::write(prefix, golden::header("edgeattn-golden", name, "golden_case.h", "ea_golden_case", cases.size()),
                src.str());
  std::printf("edgeattn-golden: %s: %zu cases -> %s.{h,c}\n", name.c_str(), cases.size(), prefix.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return golden::main("edgeattn-golden", run, argc, argv); }
