// The multi-head attention kind: spec presets torch_mha / linear / tensors,
// the float64 forward, calibration points, quantization and its
// MultiHeadAttention table.
#include "converter/kinds/mha.h"

#include <algorithm>
#include <cmath>
#include <iomanip>

#include "converter/write/file_contents.h"
#include "converter/quantize/quantize.h"
#include "converter/write/writer.h"
#include "edgeattn/kernels/requant.h"

namespace edgeattn {
namespace convert {
namespace {
namespace mha_module {

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  MhaParams& P = L->params.emplace<MhaParams>();
  const int E = f.integer("embed_dim");
  const int H = f.integer("num_heads");
  if (E % H != 0) fail(f.where, ": embed_dim ", E, " is not divisible by num_heads ", H);
  P.num_heads = H;
  P.head_dim = E / H;
  P.num_kv_heads = f.integer("num_kv_heads", H);
  if (P.num_kv_heads < 1 || H % P.num_kv_heads != 0) {
    fail(f.where, ": num_kv_heads ", P.num_kv_heads, " must divide num_heads ", H);
  }
  const int KV = P.num_kv_heads * P.head_dim;  // width of the K and V projections
  P.cross = f.boolean("cross", false);
  P.kv_cache = f.boolean("kv_cache", false);
  const int kdim = f.integer("kdim", E), vdim = f.integer("vdim", E);
  if (!P.cross && (kdim != E || vdim != E)) {
    fail(f.where, ": self-attention needs kdim == vdim == embed_dim (", E, ")");
  }
  L->query_dim = E;
  L->key_dim = kdim;
  L->value_dim = vdim;
  L->output_dim = E;
  P.scale = f.number("scale").value_or(1.0 / std::sqrt(static_cast<double>(P.head_dim)));
  const bool bias = f.boolean("bias", true);
  if (f.has("tensors")) {
    auto name = [&](const char* k, bool required) {
      std::string n = f.tensor_name(k);
      if (n.empty() && required) fail(f.where, ": tensors.", k, " is required");
      return n;
    };
    const std::string qkv = name("qkv_w", false);
    if (!qkv.empty()) {  // one packed [3 E, E] weight (and [3 E] bias), q, k, v in that order
      if (!name("q_w", false).empty() || !name("k_w", false).empty() || !name("v_w", false).empty()) {
        fail(f.where, ": tensors.qkv_w with tensors.q_w / k_w / v_w: give the packed weight or the three");
      }
      if (P.cross || KV != E) fail(f.where, ": tensors.qkv_w needs self-attention without grouped-query heads");
      const std::string qkv_b = name("qkv_b", false);
      for (int part = 0; part < 3; ++part) {
        FloatLinear l = w.slice(qkv, qkv_b, E, part, !qkv_b.empty());
        (part == 0 ? P.q_proj : part == 1 ? P.k_proj : P.v_proj) = std::move(l);
      }
    } else {
      P.q_proj = w.linear(name("q_w", true), name("q_b", false), E, E, "q_proj [embed_dim, embed_dim]", false);
      P.k_proj = w.linear(name("k_w", true), name("k_b", false), KV, kdim,
                          "k_proj [num_kv_heads * head_dim, kdim]", false);
      P.v_proj = w.linear(name("v_w", true), name("v_b", false), KV, vdim,
                          "v_proj [num_kv_heads * head_dim, vdim]", false);
    }
    // "out_proj": false: no output projection (the heads' concatenation is
    // the output, Torch-KWT's one head of dim_head == dim), read as the identity.
    if (!f.boolean("out_proj", true)) {
      if (!name("o_w", false).empty() || !name("o_b", false).empty()) {
        fail(f.where, ": \"out_proj\": false with tensors.o_w / o_b: give one or the other");
      }
      P.out_proj = identity_linear(E);
    } else {
      P.out_proj = w.linear(name("o_w", true), name("o_b", false), E, E, "out_proj [embed_dim, embed_dim]", false);
    }
  } else {
    const std::string preset = f.string("preset");
    const std::string p = f.string("prefix", "");
    if (preset == "torch_mha") {
      if (KV != E) {
        fail(f.where, ": nn.MultiheadAttention has no grouped-query heads (num_kv_heads ", P.num_kv_heads,
             "); use preset \"linear\" or \"tensors\"");
      }
      if (w.has(p + "in_proj_weight") || (kdim == E && vdim == E && !w.has(p + "q_proj_weight"))) {
        if (kdim != E || vdim != E) {
          fail(f.where, ": packed in_proj_weight needs kdim == vdim == embed_dim");
        }
        for (int part = 0; part < 3; ++part) {
          FloatLinear l = w.slice(p + "in_proj_weight", p + "in_proj_bias", E, part, bias);
          (part == 0 ? P.q_proj : part == 1 ? P.k_proj : P.v_proj) = std::move(l);
        }
      } else {
        P.q_proj = w.linear(p + "q_proj_weight", "", E, E, "[embed_dim, embed_dim]", false);
        P.k_proj = w.linear(p + "k_proj_weight", "", E, kdim, "[embed_dim, kdim]", false);
        P.v_proj = w.linear(p + "v_proj_weight", "", E, vdim, "[embed_dim, vdim]", false);
        if (bias) {
          for (int part = 0; part < 3; ++part) {
            const std::vector<double>& all =
                w.get(p + "in_proj_bias", 0, 3 * static_cast<size_t>(E), "[3*embed_dim]").data;
            FloatLinear& l = part == 0 ? P.q_proj : part == 1 ? P.k_proj : P.v_proj;
            l.b.assign(all.begin() + static_cast<long>(part) * E, all.begin() + static_cast<long>(part + 1) * E);
            l.b_name = p + "in_proj_bias[" + std::to_string(part * E) + ":" + std::to_string((part + 1) * E) + "]";
          }
        }
      }
      P.out_proj = w.linear(p + "out_proj.weight", p + "out_proj.bias", E, E,
                            "out_proj [embed_dim, embed_dim]", bias);
    } else if (preset == "linear") {
      P.q_proj = w.linear(p + "q_proj.weight", p + "q_proj.bias", E, E, "[embed_dim, embed_dim]", false);
      P.k_proj = w.linear(p + "k_proj.weight", p + "k_proj.bias", KV, kdim, "[num_kv_heads * head_dim, kdim]", false);
      P.v_proj = w.linear(p + "v_proj.weight", p + "v_proj.bias", KV, vdim, "[num_kv_heads * head_dim, vdim]", false);
      P.out_proj = w.linear(p + "out_proj.weight", p + "out_proj.bias", E, E, "[embed_dim, embed_dim]", false);
    } else {
      fail(f.where, ": unknown preset '", preset, "' (expected torch_mha or linear, or give \"tensors\")");
    }
  }
  // "output": "int16" (issue 37): an int16 output row (contract 5c-out) for an int8 file.
  const std::string out_type = f.string("output", "int8");
  if (out_type != "int8" && out_type != "int16") {
    fail(f.where, ": field 'output' must be \"int8\" or \"int16\", got '", out_type, "'");
  }
  L->output16 = out_type == "int16";
  if (P.kv_cache && (P.cross || L->mask != MaskKind::kCausal)) {
    fail(f.where, ": kv_cache needs causal self-attention (\"mask\": \"causal\", no \"cross\")");
  }
}

void shell(const LayerInfo& info, FloatLayer* L) {
  MhaParams& P = L->params.emplace<MhaParams>();
  P.cross = info.cross != 0;
  P.kv_cache = info.kv_cache != 0;
  P.num_heads = info.num_heads;
  P.num_kv_heads = info.num_kv_heads;
  P.head_dim = info.num_heads > 0 ? info.query_dim / info.num_heads : 0;
}

LayerIo io(const FloatLayer& L) {
  const MhaParams& P = L.as<MhaParams>();
  return LayerIo{P.cross, P.num_heads};
}

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const MhaParams& P = L.as<MhaParams>();
  AttentionFrame f(L, in, weights, ranges);
  const int lq = f.lq, lk = f.lk, q_rec = f.q_rec, valid = f.valid;
  const int H = P.num_heads;
  const int E = P.q_proj.out, hd = P.head_dim;
  const int KV = P.k_proj.out;                    // num_kv_heads * head_dim
  const int group = H / (KV / hd);                // query heads per K/V head
  const std::vector<double> Q = linear(P.q_proj, in.query, lq);
  const std::vector<double> K = linear(P.k_proj, f.key, lk);
  const std::vector<double> V = linear(P.v_proj, f.value, lk);
  record(ranges, "q_proj", Q.data(), lq, E, E, q_rec);
  record(ranges, "k_proj", K.data(), lk, KV, KV, valid);
  record(ranges, "v_proj", V.data(), lk, KV, KV, valid);
  std::vector<double> ctx(static_cast<size_t>(lq) * E);
  // This head's keys transposed ([hd][lk]): a row's score for key j is
  // sum over i = 0..hd-1 in order of q[i] * k[j][i] from 0.0, times the
  // scale, as a per-key dot product would be; matmul() sums them for a
  // block of query rows and all keys at once.
  std::vector<double> kt(static_cast<size_t>(hd) * lk);
  constexpr int kRows = 64;  // query rows scored at once (their scores stay in cache)
  std::vector<double> sc(static_cast<size_t>(std::min(lq, kRows)) * lk);
  for (int h = 0; h < H; ++h) {
    const int kv_off = (h / group) * hd;
    for (int j = 0; j < lk; ++j) {
      const double* k = K.data() + static_cast<size_t>(j) * KV + kv_off;
      for (int i = 0; i < hd; ++i) kt[static_cast<size_t>(i) * lk + j] = k[i];
    }
    for (int rb = 0; rb < lq; rb += kRows) {
      const int re = std::min(lq, rb + kRows);
      int width = 0;  // keys any row of the block sees (scores past a row's limit go unused)
      for (int r = rb; r < re; ++r) width = std::max(width, f.limit(r));
      matmul(re - rb, hd, Q.data() + static_cast<size_t>(rb) * E + h * hd, static_cast<size_t>(E), kt.data(),
             static_cast<size_t>(lk), width, sc.data(), static_cast<size_t>(lk));
      for (int r = rb; r < re; ++r) {
        const int limit = f.limit(r);
        double* sr = sc.data() + static_cast<size_t>(r - rb) * lk;
        for (int j = 0; j < limit; ++j) sr[j] *= P.scale;
        softmax(sr, limit);
        f.store_weights(h, r, sr, limit);
      }
      // ctx[r][h*hd + c] = sum over j < limit in order of p[r][j] * v[j][c]
      // from 0.0; rows with the same limit (all of them but causal ones) together.
      for (int r = rb; r < re;) {
        const int limit = f.limit(r);
        int r2 = r + 1;
        while (r2 < re && f.limit(r2) == limit) ++r2;
        matmul(r2 - r, limit, sc.data() + static_cast<size_t>(r - rb) * lk, static_cast<size_t>(lk),
               V.data() + kv_off, static_cast<size_t>(KV), hd, ctx.data() + static_cast<size_t>(r) * E + h * hd,
               static_cast<size_t>(E));
        r = r2;
      }
    }
  }
  record(ranges, "context", ctx.data(), lq, E, E, q_rec);
  linear(P.out_proj, ctx.data(), lq, out);
  record(ranges, "output", out, lq, L.output_dim, L.output_dim, q_rec);
}

std::vector<std::string> value_points(const FloatLayer&) {
  return {"query", "key", "value", "q_proj", "k_proj", "v_proj", "context", "output"};
}
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  return mha_table_s8(w, L, c).Union();
}
flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) { return mha_table_f32(w, L).Union(); }


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  const auto* m = l.options_as_MultiHeadAttention();
  add_linear(out, name, "q_proj", m->q_proj());
  add_linear(out, name, "k_proj", m->k_proj());
  add_linear(out, name, "v_proj", m->v_proj());
  add_linear(out, name, "out_proj", m->out_proj());
}

void inspect(const fb::Layer& l, const LayerInfo& info, std::ostream& os) {
  const auto* a = l.options_as_MultiHeadAttention();
  os << "  embed_dim " << a->embed_dim() << ", head_dim " << a->head_dim() << ", scale "
     << std::setprecision(6) << a->scale() << "\n";
  if (a->output16()) os << "  output int16 (zero point 0, out_proj's epilogue, contract 5c-out)\n";
  if (info.kv_cache) {
    os << "  kv cache: " << info.max_kv_len << " positions, " << info.kv_cache_bytes
       << " arena bytes (K and V)\n";
  }
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* a = l.options_as_MultiHeadAttention();
  print_linear(os, "q_proj", a->q_proj());
  print_linear(os, "k_proj", a->k_proj());
  print_linear(os, "v_proj", a->v_proj());
  print_linear(os, "out_proj", a->out_proj(), a->output16());
  print_softmax(os, a->softmax());
}

}  // namespace mha_module
}  // namespace

flatbuffers::Offset<fb::MultiHeadAttention> mha_table_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c,
                                                         const QuantAdd* residual) {
  const MhaParams& P = L.as<MhaParams>();
  const ActQuantParams qin = c("query"), kin = c("key"), vin = c("value");
  const ActQuantParams qo = c("q_proj"), ko = c("k_proj"), vo = c("v_proj");
  const ActQuantParams ctx = c("context");
  const std::string& at = c.where;
  const QuantLinear q = quantize_linear(P.q_proj, qin, qo, at + ": " + P.q_proj.w_name);
  const QuantLinear k = quantize_linear(P.k_proj, kin, ko, at + ": " + P.k_proj.w_name);
  const QuantLinear v = quantize_linear(P.v_proj, vin, vo, at + ": " + P.v_proj.w_name);
  const std::string o_what = at + ": " + P.out_proj.w_name;
  // A block's add (contract 5b / 5c), an int16 output (5c-out: the int16
  // stream's scale for "output", 5c's n) or an int8 one; no "output" in a block.
  const bool out16 = residual == nullptr && L.output16;
  const QuantLinear o = residual != nullptr ? quantize_linear(P.out_proj, ctx, residual->output, o_what, residual->shift)
                        : out16 ? quantize_linear(P.out_proj, ctx, c.s16("output"), o_what, kernels::kResidual5cOutShift)
                                : quantize_linear(P.out_proj, ctx, c("output"), o_what);
  const Requant score = requant(qo.scale * ko.scale * P.scale * kLog2e * 65536.0, at + ": softmax score");
  const Requant pv = requant(vo.scale / (32768.0 * ctx.scale), at + ": softmax output");
  const auto fq = w.LinearS8(q, P.q_proj), fk = w.LinearS8(k, P.k_proj);
  const auto fv = w.LinearS8(v, P.v_proj), fo = w.LinearS8(o, P.out_proj, out16);
  const auto sm = w.Softmax(score, pv);
  return fb::CreateMultiHeadAttention(w.fbb(), L.query_dim, L.key_dim, L.value_dim, P.num_heads, P.head_dim,
                                      P.cross, L.mask == MaskKind::kCausal, static_cast<float>(P.scale), fq, fk,
                                      fv, fo, sm, P.kv_cache, static_cast<uint32_t>(P.num_kv_heads), out16);
}

flatbuffers::Offset<fb::MultiHeadAttention> mha_table_f32(ModelWriter& w, const FloatLayer& L) {
  const MhaParams& P = L.as<MhaParams>();
  const auto fq = w.LinearF32(P.q_proj), fk = w.LinearF32(P.k_proj);
  const auto fv = w.LinearF32(P.v_proj), fo = w.LinearF32(P.out_proj);
  return fb::CreateMultiHeadAttention(w.fbb(), L.query_dim, L.key_dim, L.value_dim, P.num_heads, P.head_dim,
                                      P.cross, L.mask == MaskKind::kCausal, static_cast<float>(P.scale), fq, fk,
                                      fv, fo, 0, P.kv_cache, static_cast<uint32_t>(P.num_kv_heads));
}

namespace {
namespace mha_module {

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_MULTI_HEAD_ATTENTION);
  m.causal_mask = true;
  m.fields = {"embed_dim", "num_heads", "cross", "kdim", "vdim", "scale", "bias", "preset", "kv_cache", "num_kv_heads",
              "output", "out_proj"};
  m.tensor_fields = {"q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "qkv_w", "qkv_b", "o_w", "o_b"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  return m;
}

}  // namespace mha_module
}  // namespace

namespace kinds {
const KindModule kind_mha = mha_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
