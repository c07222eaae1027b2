// The decoder_block kind: a transformer decoder layer (nn.TransformerDecoderLayer,
// the bundled transformer's DecLayer): causal self-attention with a KV cache,
// cross-attention over the memory (the layer's key input), feed-forward, three
// LayerNorms and three residual adds, pre-norm or post-norm. The attentions
// are MHA sub-layers run by the MHA module (kinds/mha.h); the other steps are
// block_parts.h. Calibration points: "query" (x), "key" (the memory),
// "self.<MHA's points>", "add1", "cross.<MHA's points>", "add2", pre-norm
// "norm3" / post-norm "norm1" is cross.query, "norm2", "add3",
// "ffn.hidden", "ffn.act", "ffn.output", "output".
#include "converter/kinds/decoder_block.h"

#include <cmath>
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace decoder_block_module {

// Default tensor names of the torch preset, in the order of kTensorKeys.
const char* const kTensorKeys[] = {"norm1_w",     "norm1_b",     "qkv_w",     "qkv_b",     "o_w",   "o_b",
                                   "norm2_w",     "norm2_b",     "cross_qkv_w", "cross_qkv_b", "cross_o_w",
                                   "cross_o_b",   "norm3_w",     "norm3_b",   "fc1_w",     "fc1_b", "fc2_w",
                                   "fc2_b"};
const char* const kTorchNames[] = {
    "norm1.weight", "norm1.bias", "self_attn.in_proj_weight", "self_attn.in_proj_bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm2.weight", "norm2.bias",
    "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias", "multihead_attn.out_proj.weight",
    "multihead_attn.out_proj.bias", "norm3.weight", "norm3.bias", "linear1.weight", "linear1.bias",
    "linear2.weight", "linear2.bias"};
constexpr int kNumTensorKeys = 18;
enum { kNorm1W = 0, kQkvW = 2, kOW = 4, kNorm2W = 6, kCrossQkvW = 8, kCrossOW = 10, kNorm3W = 12, kFc1W = 14,
       kFc2W = 16 };

// One attention sub-layer's projections: packed in_proj (qkv_w) or separate
// <role>q_w / k_w / v_w (`role` "" or "cross_").
void read_attention(const SpecFields& f, const SpecWeights& w, const std::string& role, const std::string& qkv_w,
                    const std::string& qkv_b, const std::string& o_w, const std::string& o_b, int E, MhaParams* M) {
  if (!f.tensor_name((role + "q_w").c_str()).empty()) {
    auto name = [&](const std::string& k) {
      const std::string n = f.tensor_name(k.c_str());
      if (n.empty()) fail(f.where, ": tensors.", k, " is required with tensors.", role, "q_w");
      return n;
    };
    M->q_proj = w.linear(name(role + "q_w"), f.tensor_name((role + "q_b").c_str()), E, E, "q_proj [embed_dim, embed_dim]", false);
    M->k_proj = w.linear(name(role + "k_w"), f.tensor_name((role + "k_b").c_str()), E, E, "k_proj [embed_dim, embed_dim]", false);
    M->v_proj = w.linear(name(role + "v_w"), f.tensor_name((role + "v_b").c_str()), E, E, "v_proj [embed_dim, embed_dim]", false);
  } else {
    if (qkv_w.empty()) fail(f.where, ": tensors.", role, "qkv_w is required (or give \"preset\": torch)");
    const bool bias = !qkv_b.empty() && w.has(qkv_b);
    for (int part = 0; part < 3; ++part) {
      FloatLinear l = w.slice(qkv_w, qkv_b, E, part, bias);
      (part == 0 ? M->q_proj : part == 1 ? M->k_proj : M->v_proj) = std::move(l);
    }
  }
  M->out_proj = w.linear(o_w, o_b, E, E, "out_proj [embed_dim, embed_dim]", false);
}

void attention_layer(const FloatLayer& L, const char* role, bool cross, int E, int H, double scale, FloatLayer* A) {
  A->name = L.name + "." + role;
  A->kind = &kinds::kind_mha;
  A->mask = cross ? MaskKind::kKeyPadding : MaskKind::kCausal;
  A->max_q_len = L.max_q_len;
  A->max_kv_len = cross ? L.max_kv_len : L.max_q_len;
  A->query_dim = A->key_dim = A->value_dim = A->output_dim = E;
  MhaParams& M = A->params.emplace<MhaParams>();
  M.cross = cross;
  M.kv_cache = !cross;
  M.num_heads = M.num_kv_heads = H;
  M.head_dim = E / H;
  M.scale = scale;
}

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  DecoderParams& P = L->params.emplace<DecoderParams>();
  const int E = f.integer("embed_dim");
  const int H = f.integer("num_heads");
  if (E % H != 0) fail(f.where, ": embed_dim ", E, " is not divisible by num_heads ", H);
  if (L->mask == MaskKind::kCausal) {
    fail(f.where, ": mask applies to the memory (key_padding or none); the self-attention is always causal");
  }
  const std::string preset = f.string("preset", "");
  if (!preset.empty() && preset != "torch") {
    fail(f.where, ": unknown preset '", preset, "' (expected torch, or name every tensor in \"tensors\")");
  }
  const std::string p = f.string("prefix", "");
  std::string names[kNumTensorKeys];
  for (int i = 0; i < kNumTensorKeys; ++i) {
    names[i] = f.tensor_name(kTensorKeys[i]);
    if (names[i].empty() && preset == "torch") names[i] = p + kTorchNames[i];
  }
  for (int i : {kNorm1W, kOW, kNorm2W, kCrossOW, kNorm3W, kFc1W, kFc2W}) {  // qkv: read_attention
    if (names[i].empty()) fail(f.where, ": tensors.", kTensorKeys[i], " is required (or give \"preset\": torch)");
  }
  P.norm_first = f.boolean("norm_first", false);
  const double eps = f.number("eps").value_or(1e-5);
  P.norm1 = read_norm(w, names[kNorm1W], names[kNorm1W + 1], E, eps);
  P.norm2 = read_norm(w, names[kNorm2W], names[kNorm2W + 1], E, eps);
  P.norm3 = read_norm(w, names[kNorm3W], names[kNorm3W + 1], E, eps);
  P.ffn = read_ffn(f, w, names[kFc1W], names[kFc1W + 1], names[kFc2W], names[kFc2W + 1], E,
                   f.has("ffn_dim") ? f.integer("ffn_dim") : 0, read_activation(f, "relu"));
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = E;
  const double scale = f.number("scale").value_or(1.0 / std::sqrt(static_cast<double>(E / H)));
  // max_q_len / max_kv_len are set after resolve (spec.cc); the sub-layers' are set by shape().
  attention_layer(*L, "self", false, E, H, scale, &P.self_attn);
  attention_layer(*L, "cross", true, E, H, scale, &P.cross_attn);
  read_attention(f, w, "", names[kQkvW], names[kQkvW + 1], names[kOW], names[kOW + 1], E,
                 &P.self_attn.as<MhaParams>());
  read_attention(f, w, "cross_", names[kCrossQkvW], names[kCrossQkvW + 1], names[kCrossOW], names[kCrossOW + 1], E,
                 &P.cross_attn.as<MhaParams>());
}

void shell(const LayerInfo& info, FloatLayer* L) {
  DecoderParams& P = L->params.emplace<DecoderParams>();
  MhaParams& M = P.cross_attn.params.emplace<MhaParams>();
  M.num_heads = M.num_kv_heads = info.num_heads;
}

// The memory is its own key sequence; the weights are the cross-attention's.
LayerIo io(const FloatLayer& L) {
  return LayerIo{true, L.as<DecoderParams>().cross_attn.as<MhaParams>().num_heads};
}

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const DecoderParams& P = L.as<DecoderParams>();
  const int lq = in.q_len, lk = in.kv_len, d = L.query_dim;
  const int valid = in.valid >= 0 && in.valid < lk ? in.valid : lk;  // memory rows that enter calibration
  const size_t n = static_cast<size_t>(lq) * d;
  std::vector<double> a(n), o(n), h(n), f(n);
  // An attention's points, recorded by the MHA module and stored under its
  // prefix (sub_ranges keeps values where the calibration method needs them).
  auto attend = [&](const FloatLayer& A, const char* prefix, const double* x, double* w) {
    RangeMap sub = ranges != nullptr ? sub_ranges(*ranges, prefix) : RangeMap();
    SampleInput s;
    s.query = x;
    s.q_len = lq;
    if (A.as<MhaParams>().cross) {
      s.key = in.key;
      s.kv_len = lk;
      s.valid = in.valid;
    } else {
      s.key = s.value = x;
      s.kv_len = lq;
    }
    A.kind->forward(A, s, o.data(), w, ranges != nullptr ? &sub : nullptr);
    if (ranges != nullptr) {
      if (A.as<MhaParams>().cross) {
        sub["value"] = sub["key"];  // the memory: one quantization for both projections
      } else {
        sub["key"] = sub["query"];
        sub["value"] = sub["query"];
      }
      merge_ranges(sub, prefix, ranges);
    }
  };
  record(ranges, "query", in.query, lq, d, d, lq);
  record(ranges, "key", in.key, lk, d, d, valid);
  if (P.norm_first) {
    layernorm_forward(P.norm1, lq, in.query, a.data());
    attend(P.self_attn, "self.", a.data(), nullptr);
    for (size_t i = 0; i < n; ++i) h[i] = in.query[i] + o[i];
    record(ranges, "add1", h.data(), lq, d, d, lq);
    layernorm_forward(P.norm2, lq, h.data(), a.data());
    attend(P.cross_attn, "cross.", a.data(), weights);
    for (size_t i = 0; i < n; ++i) h[i] += o[i];
    record(ranges, "add2", h.data(), lq, d, d, lq);
    layernorm_forward(P.norm3, lq, h.data(), a.data());
    record(ranges, "norm3", a.data(), lq, d, d, lq);
    ffn_forward_recorded(P.ffn, lq, a.data(), f.data(), ranges, "ffn.", lq);
    for (size_t i = 0; i < n; ++i) out[i] = h[i] + f[i];
  } else {
    attend(P.self_attn, "self.", in.query, nullptr);
    for (size_t i = 0; i < n; ++i) h[i] = in.query[i] + o[i];
    record(ranges, "add1", h.data(), lq, d, d, lq);
    layernorm_forward(P.norm1, lq, h.data(), a.data());
    attend(P.cross_attn, "cross.", a.data(), weights);
    for (size_t i = 0; i < n; ++i) h[i] = a[i] + o[i];
    record(ranges, "add2", h.data(), lq, d, d, lq);
    layernorm_forward(P.norm2, lq, h.data(), a.data());
    record(ranges, "norm2", a.data(), lq, d, d, lq);
    ffn_forward_recorded(P.ffn, lq, a.data(), f.data(), ranges, "ffn.", lq);
    for (size_t i = 0; i < n; ++i) h[i] = a[i] + f[i];
    record(ranges, "add3", h.data(), lq, d, d, lq);
    layernorm_forward(P.norm3, lq, h.data(), out);
  }
  record(ranges, "output", out, lq, d, d, lq);
}

std::vector<std::string> value_points(const FloatLayer& L) {
  const DecoderParams& P = L.as<DecoderParams>();
  std::vector<std::string> v = {"query", "key", "add1", "add2", "ffn.hidden", "ffn.act", "ffn.output", "output"};
  if (P.norm_first) {
    v.push_back("norm3");
  } else {
    v.push_back("norm2");
    v.push_back("add3");
  }
  for (const std::string& k : P.self_attn.kind->value_points(P.self_attn)) v.push_back("self." + k);
  for (const std::string& k : P.cross_attn.kind->value_points(P.cross_attn)) v.push_back("cross." + k);
  return v;
}
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }
// The memory: the block's key input and its cross-attention's k/v inputs.
std::vector<std::string> memory_points(const FloatLayer&) { return {"key", "cross.key", "cross.value"}; }

// The sub-layers with the block's lengths (spec.cc sets them after resolve).
FloatLayer with_lengths(const FloatLayer& A, const FloatLayer& L) {
  FloatLayer B = A;
  B.max_q_len = L.max_q_len;
  B.max_kv_len = A.as<MhaParams>().cross ? L.max_kv_len : L.max_q_len;
  return B;
}

// The 16-bit residual stream (L.output16, convert --residual int16): x,
// the adds and y int16 (zero point 0), every GEMM input int8 as in
// write_s8 (runtime/src/layers/decoder_block.cc).
flatbuffers::Offset<void> write_s8_stream16(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const DecoderParams& P = L.as<DecoderParams>();
  const Calibrated s = c.sub("self."), x = c.sub("cross.");
  const std::string& at = c.where;
  const ActQuantParams in = c.s16("query"), h1 = c.s16("add1"), h2 = c.s16("add2"), y = c.s16("output");
  QuantNorm n1, n2, n3;
  QuantAdd q1, q2, q3;
  flatbuffers::Offset<fb::Requant> narrow;
  if (P.norm_first) {
    const ActQuantParams n1q = s("query"), n2q = x("query"), n3q = c("norm3");
    n1 = quantize_layernorm16(P.norm1, in, &n1q, nullptr, at + ": norm1");
    q1 = quantize_add16(in, h1, at + ": add1");
    n2 = quantize_layernorm16(P.norm2, h1, &n2q, nullptr, at + ": norm2");
    q2 = quantize_add16(h1, h2, at + ": add2");
    n3 = quantize_layernorm16(P.norm3, h2, &n3q, nullptr, at + ": norm3");
    q3 = quantize_add16(h2, y, at + ": add3");
  } else {
    const ActQuantParams x8 = s("query"), n1q = x("query"), n1s = x.s16("query"), n2q = c("norm2"),
                         n2s = c.s16("norm2"), h3 = c.s16("add3");
    narrow = w.Requants({requant(in.scale / x8.scale, at + ": input_requant")});
    q1 = quantize_add16(in, h1, at + ": add1");
    n1 = quantize_layernorm16(P.norm1, h1, &n1q, &n1s, at + ": norm1");
    q2 = quantize_add16(n1s, h2, at + ": add2");
    n2 = quantize_layernorm16(P.norm2, h2, &n2q, &n2s, at + ": norm2");
    q3 = quantize_add16(n2s, h3, at + ": add3");
    n3 = quantize_layernorm16(P.norm3, h3, nullptr, &y, at + ": norm3");
  }
  const auto t1 = write_layernorm_s8(w, P.norm1, n1), t2 = write_layernorm_s8(w, P.norm2, n2);
  const auto t3 = write_layernorm_s8(w, P.norm3, n3);
  const auto ffn = ffn_table_s8(w, P.ffn, P.norm_first ? n3.output : n2.output, c.sub("ffn."), at + ": ffn", &q3);
  const auto add1 = write_add_s8(w, q1), add2 = write_add_s8(w, q2), add3 = write_add_s8(w, q3);
  const auto sa = mha_table_s8(w, with_lengths(P.self_attn, L), s, &q1);
  const auto ca = mha_table_s8(w, with_lengths(P.cross_attn, L), x, &q2);
  fb::DecoderBlockBuilder b(w.fbb());
  b.add_dim(static_cast<uint32_t>(L.query_dim));
  b.add_norm_first(P.norm_first);
  b.add_norm1(t1);
  b.add_self_attn(sa);
  b.add_add1(add1);
  b.add_norm2(t2);
  b.add_cross_attn(ca);
  b.add_add2(add2);
  b.add_norm3(t3);
  b.add_ffn(ffn);
  b.add_add3(add3);
  b.add_residual16(true);
  if (!P.norm_first) b.add_input_requant(narrow);
  return b.Finish().Union();
}

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  if (L.output16) return write_s8_stream16(w, L, c);
  const DecoderParams& P = L.as<DecoderParams>();
  const Calibrated s = c.sub("self."), x = c.sub("cross.");
  const std::string& at = c.where;
  const ActQuantParams h1 = c("add1"), h2 = c("add2");
  const ActQuantParams y = c("output");
  flatbuffers::Offset<fb::LayerNorm> n1, n2, n3;
  flatbuffers::Offset<fb::FeedForward> ffn;
  // The adds run in the out_projs' and fc2's epilogues (contract 5b).
  QuantAdd q1, q2, q3;
  if (P.norm_first) {
    const ActQuantParams in = c("query"), n3q = c("norm3");
    n1 = norm_table_s8(w, P.norm1, in, s("query"), at + ": norm1");
    q1 = quantize_add(in, h1, at + ": add1");
    n2 = norm_table_s8(w, P.norm2, h1, x("query"), at + ": norm2");
    q2 = quantize_add(h1, h2, at + ": add2");
    n3 = norm_table_s8(w, P.norm3, h2, n3q, at + ": norm3");
    q3 = quantize_add(h2, y, at + ": add3");
    ffn = ffn_table_s8(w, P.ffn, n3q, c.sub("ffn."), at + ": ffn", &q3);
  } else {
    const ActQuantParams in = s("query"), n2q = c("norm2"), h3 = c("add3");
    q1 = quantize_add(in, h1, at + ": add1");
    n1 = norm_table_s8(w, P.norm1, h1, x("query"), at + ": norm1");
    q2 = quantize_add(x("query"), h2, at + ": add2");
    n2 = norm_table_s8(w, P.norm2, h2, n2q, at + ": norm2");
    q3 = quantize_add(n2q, h3, at + ": add3");
    ffn = ffn_table_s8(w, P.ffn, n2q, c.sub("ffn."), at + ": ffn", &q3);
    n3 = norm_table_s8(w, P.norm3, h3, y, at + ": norm3");
  }
  const auto add1 = write_add_s8(w, q1), add2 = write_add_s8(w, q2), add3 = write_add_s8(w, q3);
  const auto sa = mha_table_s8(w, with_lengths(P.self_attn, L), s, &q1);
  const auto ca = mha_table_s8(w, with_lengths(P.cross_attn, L), x, &q2);
  return fb::CreateDecoderBlock(w.fbb(), static_cast<uint32_t>(L.query_dim), P.norm_first, n1, sa, add1, n2, ca,
                                add2, n3, ffn, add3)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const DecoderParams& P = L.as<DecoderParams>();
  const auto n1 = write_layernorm_f32(w, P.norm1), n2 = write_layernorm_f32(w, P.norm2);
  const auto n3 = write_layernorm_f32(w, P.norm3);
  const auto sa = mha_table_f32(w, with_lengths(P.self_attn, L));
  const auto ca = mha_table_f32(w, with_lengths(P.cross_attn, L));
  const auto ffn = ffn_table_f32(w, P.ffn);
  return fb::CreateDecoderBlock(w.fbb(), static_cast<uint32_t>(L.query_dim), P.norm_first, n1, sa, 0, n2, ca, 0, n3,
                                ffn)
      .Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  const auto* b = l.options_as_DecoderBlock();
  add_norm_tensors(out, name, "norm1", b->norm1());
  for (const auto& [role, m] : {std::make_pair(std::string("self_attn."), b->self_attn()),
                                std::make_pair(std::string("cross_attn."), b->cross_attn())}) {
    add_linear(out, name, role + "q_proj", m->q_proj());
    add_linear(out, name, role + "k_proj", m->k_proj());
    add_linear(out, name, role + "v_proj", m->v_proj());
    add_linear(out, name, role + "out_proj", m->out_proj());
    if (m == b->self_attn()) add_norm_tensors(out, name, "norm2", b->norm2());
  }
  add_norm_tensors(out, name, "norm3", b->norm3());
  add_ffn_tensors(out, name, "", b->ffn());
}

void inspect(const fb::Layer& l, const LayerInfo& info, std::ostream& os) {
  const auto* b = l.options_as_DecoderBlock();
  os << "  " << (b->norm_first() ? "pre-norm" : "post-norm") << ", embed_dim " << b->dim() << ", "
     << b->self_attn()->num_heads() << " heads, FFN " << b->ffn()->hidden_dim() << " ("
     << fb::EnumNameActivation(b->ffn()->activation()) << ")";
  if (l.dtype() == fb::DType::S8) os << ", residual stream " << (b->residual16() ? "int16" : "int8");
  os << "\n";
  os << "  self-attention kv cache: " << info.max_q_len << " positions, " << info.kv_cache_bytes
     << " arena bytes (K and V); memory: " << info.max_kv_len << " rows\n";
}

// s16: the block's 16-bit residual stream, whose out_proj writes int16 (its add's epilogue).
void print_mha(std::ostream& os, const fb::MultiHeadAttention* m, bool s16) {
  print_linear(os, "q_proj", m->q_proj());
  print_linear(os, "k_proj", m->k_proj());
  print_linear(os, "v_proj", m->v_proj());
  print_linear(os, "out_proj", m->out_proj(), s16);
  print_softmax(os, m->softmax());
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* b = l.options_as_DecoderBlock();
  const bool s16 = b->residual16();
  if (s16 && b->input_requant() != nullptr) {
    print_requant(os, "  input_requant (int16 x -> self-attention's int8)", b->input_requant());
  }
  print_norm(os, "norm1", b->norm1());
  os << "  self_attn:\n";
  print_mha(os, b->self_attn(), s16);
  print_add(os, "add1", "self_attn.out_proj", b->add1(), s16);
  print_norm(os, "norm2", b->norm2());
  os << "  cross_attn:\n";
  print_mha(os, b->cross_attn(), s16);
  print_add(os, "add2", "cross_attn.out_proj", b->add2(), s16);
  print_norm(os, "norm3", b->norm3());
  print_ffn(os, "ffn", b->ffn(), s16);
  print_add(os, "add3", "fc2", b->add3(), s16);
}

// Pre-norm: norm1 feeds only the self-attention's q/k/v projections, norm2
// only the cross-attention's q_proj (its k/v read the memory), norm3 only fc1.
std::vector<SmoothPair> smooth_pairs(FloatLayer* L) {
  DecoderParams& P = L->as<DecoderParams>();
  if (!P.norm_first) {
    fail("layer '", L->name, "': --smooth-alpha needs a pre-norm block (norm_first); in this post-norm block each "
         "LayerNorm's output is also the next residual add's input, so no smoothing factor can be folded");
  }
  MhaParams& S = P.self_attn.as<MhaParams>();
  MhaParams& X = P.cross_attn.as<MhaParams>();
  return {SmoothPair{"self.query", "norm1 -> self q/k/v_proj", &P.norm1, {&S.q_proj, &S.k_proj, &S.v_proj}},
          SmoothPair{"cross.query", "norm2 -> cross q_proj", &P.norm2, {&X.q_proj}},
          SmoothPair{"norm3", "norm3 -> fc1", &P.norm3, {&P.ffn.fc1}}};
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_DECODER_BLOCK);
  m.fields = {"embed_dim", "num_heads", "ffn_dim", "activation", "norm_first", "eps", "scale", "preset"};
  m.tensor_fields = {"norm1_w", "norm1_b", "qkv_w", "qkv_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b", "norm2_w", "norm2_b", "cross_qkv_w", "cross_qkv_b", "cross_q_w", "cross_q_b", "cross_k_w", "cross_k_b", "cross_v_w", "cross_v_b", "cross_o_w", "cross_o_b", "norm3_w", "norm3_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.memory_points = memory_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  m.smooth_pairs = smooth_pairs;
  return m;
}

}  // namespace decoder_block_module
}  // namespace

namespace kinds {
const KindModule kind_decoder_block = decoder_block_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
