// The encoder_block kind: a transformer encoder layer (LayerNorm, multi-head
// self-attention, residual add, LayerNorm, feed-forward, residual add) in
// pre-norm or post-norm order, as nn.TransformerEncoderLayer and ViT/SVTR
// blocks write it. The attention is an MHA sub-layer run by the MHA module
// (kinds/mha.h); the other steps are block_parts.h. Calibration points:
// "query" (x), "attn.<MHA's points>", "add1", "norm1" / "norm2",
// "ffn.hidden", "ffn.act", "ffn.output", "add2" (post-norm), "output".
#include <cmath>
#include <ostream>

#include "converter/write/file_contents.h"
#include "converter/kinds/encoder_block.h"
#include "converter/write/writer.h"

namespace edgeattn {
namespace convert {
namespace {
namespace encoder_block_module {

// Default tensor names of the presets, in the order of kTensorKeys.
const char* const kTensorKeys[] = {"norm1_w", "norm1_b", "qkv_w", "qkv_b", "o_w",   "o_b",
                                   "norm2_w", "norm2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"};
const char* const kTorchNames[] = {"norm1.weight",  "norm1.bias",  "self_attn.in_proj_weight",
                                   "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                                   "norm2.weight",  "norm2.bias",  "linear1.weight",
                                   "linear1.bias",  "linear2.weight", "linear2.bias"};
const char* const kVitNames[] = {"norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias",
                                 "attn.proj.weight", "attn.proj.bias", "norm2.weight", "norm2.bias",
                                 "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias"};
// Hugging Face ViTLayer: separate query / key / value (kHfQkvNames), so no
// fused qkv entry.
const char* const kHfNames[] = {"layernorm_before.weight", "layernorm_before.bias", "", "",
                                "attention.output.dense.weight", "attention.output.dense.bias",
                                "layernorm_after.weight", "layernorm_after.bias", "intermediate.dense.weight",
                                "intermediate.dense.bias", "output.dense.weight", "output.dense.bias"};
const char* const kSeparateQkvKeys[] = {"q_w", "q_b", "k_w", "k_b", "v_w", "v_b"};
const char* const kHfQkvNames[] = {"attention.attention.query.weight", "attention.attention.query.bias",
                                   "attention.attention.key.weight",   "attention.attention.key.bias",
                                   "attention.attention.value.weight", "attention.attention.value.bias"};
constexpr int kNumTensorKeys = 12;

void resolve(const SpecFields& f, const SpecWeights& w, FloatLayer* L) {
  BlockParams& P = L->params.emplace<BlockParams>();
  const int E = f.integer("embed_dim");
  const int H = f.integer("num_heads");
  if (E % H != 0) fail(f.where, ": embed_dim ", E, " is not divisible by num_heads ", H);
  const std::string preset = f.string("preset", "");
  const char* const* defaults = nullptr;
  if (preset == "torch") {
    defaults = kTorchNames;  // nn.TransformerEncoderLayer: relu and post-norm unless told
  } else if (preset == "vit") {
    defaults = kVitNames;  // timm ViT / SVTR blocks: GELU, pre-norm
  } else if (preset == "hf_vit") {
    defaults = kHfNames;  // Hugging Face ViT layers: GELU, pre-norm, eps 1e-12
  } else if (!preset.empty()) {
    fail(f.where, ": unknown preset '", preset,
         "' (expected torch, vit or hf_vit, or name every tensor in \"tensors\")");
  }
  const bool hf = preset == "hf_vit";
  const std::string p = f.string("prefix", "");
  std::string names[kNumTensorKeys];
  for (int i = 0; i < kNumTensorKeys; ++i) {
    names[i] = f.tensor_name(kTensorKeys[i]);
    if (names[i].empty() && defaults != nullptr && defaults[i][0] != '\0') names[i] = p + defaults[i];
  }
  // Separate q/k/v: named in "tensors", or the hf_vit preset's (whose biases,
  // as every preset's, are used when the file has them).
  std::string qkv[6];
  for (int i = 0; i < 6; ++i) {
    qkv[i] = f.tensor_name(kSeparateQkvKeys[i]);
    if (qkv[i].empty() && hf && names[2].empty()) qkv[i] = p + kHfQkvNames[i];
  }
  const bool separate_qkv = !qkv[0].empty();
  // "out_proj": false: the attention has no output projection (its heads'
  // concatenation is its output), read as the identity.
  const bool out_proj = f.boolean("out_proj", true);
  if (!out_proj && (!f.tensor_name("o_w").empty() || !f.tensor_name("o_b").empty())) {
    fail(f.where, ": \"out_proj\": false with tensors.o_w / o_b: give one or the other");
  }
  for (int i : {0, 2, 4, 6, 8, 10}) {  // the weights (biases are optional)
    if (names[i].empty() && !(i == 2 && separate_qkv) && !(i == 4 && !out_proj)) {
      fail(f.where, ": tensors.", kTensorKeys[i], " is required (or give \"preset\": torch, vit or hf_vit)");
    }
  }
  P.branch_norm = f.boolean("branch_norm", false);
  P.norm_first = f.boolean("norm_first", !P.branch_norm && (preset == "vit" || hf));
  if (P.branch_norm && P.norm_first) {
    fail(f.where, ": \"branch_norm\" (y = x + norm(f(x))) and \"norm_first\" (y = x + f(norm(x))) are two forms; "
         "give one");
  }
  const double eps = f.number("eps").value_or(preset == "vit" ? 1e-6 : hf ? 1e-12 : 1e-5);
  P.norm1 = read_norm(w, names[0], names[1], E, eps);
  P.norm2 = read_norm(w, names[6], names[7], E, eps);
  P.ffn = read_ffn(f, w, names[8], names[9], names[10], names[11], E, f.has("ffn_dim") ? f.integer("ffn_dim") : 0,
                   read_activation(f, preset == "torch" ? "relu" : "gelu"));

  FloatLayer& A = P.attn;
  A.name = L->name + ".attn";
  A.kind = &kinds::kind_mha;
  A.mask = L->mask;
  A.max_q_len = A.max_kv_len = L->max_q_len;
  A.query_dim = A.key_dim = A.value_dim = A.output_dim = E;
  MhaParams& M = A.params.emplace<MhaParams>();
  M.num_heads = M.num_kv_heads = H;
  M.head_dim = E / H;
  M.scale = f.number("scale").value_or(1.0 / std::sqrt(static_cast<double>(M.head_dim)));
  if (separate_qkv) {
    for (int i : {2, 4}) {
      if (qkv[i].empty()) fail(f.where, ": tensors.", kSeparateQkvKeys[i], " is required with tensors.q_w");
    }
    M.q_proj = w.linear(qkv[0], qkv[1], E, E, "q_proj [embed_dim, embed_dim]", false);
    M.k_proj = w.linear(qkv[2], qkv[3], E, E, "k_proj [embed_dim, embed_dim]", false);
    M.v_proj = w.linear(qkv[4], qkv[5], E, E, "v_proj [embed_dim, embed_dim]", false);
  } else {
    const bool bias = !names[3].empty() && w.has(names[3]);
    for (int part = 0; part < 3; ++part) {
      FloatLinear l = w.slice(names[2], names[3], E, part, bias);
      (part == 0 ? M.q_proj : part == 1 ? M.k_proj : M.v_proj) = std::move(l);
    }
  }
  M.out_proj = out_proj ? w.linear(names[4], names[5], E, E, "out_proj [embed_dim, embed_dim]", false)
                        : identity_linear(E);
  L->query_dim = L->key_dim = L->value_dim = L->output_dim = E;
  L->max_kv_len = L->max_q_len;
}

void shell(const LayerInfo& info, FloatLayer* L) {
  BlockParams& P = L->params.emplace<BlockParams>();
  MhaParams& M = P.attn.params.emplace<MhaParams>();
  M.num_heads = M.num_kv_heads = info.num_heads;
}

LayerIo io(const FloatLayer& L) { return LayerIo{false, L.as<BlockParams>().attn.as<MhaParams>().num_heads}; }

void forward_layer(const FloatLayer& L, const SampleInput& in, double* out, double* weights, RangeMap* ranges) {
  const BlockParams& P = L.as<BlockParams>();
  const int lq = in.q_len, d = L.query_dim;
  // Rows that enter calibration: with key padding the padded rows are meaningless.
  const int rec = L.mask == MaskKind::kKeyPadding && in.valid >= 0 && in.valid < lq ? in.valid : lq;
  const size_t n = static_cast<size_t>(lq) * d;
  std::vector<double> a(n), o(n), h(n), f(n);
  // The attention's points, recorded by the MHA module and stored under
  // "attn." (sub_ranges keeps values where the calibration method needs
  // them); its keys and values are its query rows, as calibrate() copies
  // them for a self-attention layer of its own.
  RangeMap attn_ranges = ranges != nullptr ? sub_ranges(*ranges, "attn.") : RangeMap();
  auto attend = [&](const double* x) {
    SampleInput s;
    s.query = s.key = s.value = x;
    s.q_len = s.kv_len = lq;
    s.valid = in.valid;
    P.attn.kind->forward(P.attn, s, o.data(), weights, ranges != nullptr ? &attn_ranges : nullptr);
    if (ranges != nullptr) {
      attn_ranges["key"] = attn_ranges["query"];
      attn_ranges["value"] = attn_ranges["query"];
      merge_ranges(attn_ranges, "attn.", ranges);
    }
  };
  record(ranges, "query", in.query, lq, d, d, rec);
  if (P.branch_norm) {  // h = x + norm1(attn(x)); y = h + norm2(ffn(h))
    attend(in.query);
    layernorm_forward(P.norm1, lq, o.data(), a.data());
    record(ranges, "norm1", a.data(), lq, d, d, rec);
    for (size_t i = 0; i < n; ++i) h[i] = in.query[i] + a[i];
    record(ranges, "add1", h.data(), lq, d, d, rec);
    ffn_forward_recorded(P.ffn, lq, h.data(), f.data(), ranges, "ffn.", rec);
    layernorm_forward(P.norm2, lq, f.data(), a.data());
    record(ranges, "norm2", a.data(), lq, d, d, rec);
    for (size_t i = 0; i < n; ++i) out[i] = h[i] + a[i];
  } else if (P.norm_first) {
    layernorm_forward(P.norm1, lq, in.query, a.data());
    attend(a.data());
    for (size_t i = 0; i < n; ++i) h[i] = in.query[i] + o[i];
    record(ranges, "add1", h.data(), lq, d, d, rec);
    layernorm_forward(P.norm2, lq, h.data(), a.data());
    record(ranges, "norm2", a.data(), lq, d, d, rec);
    ffn_forward_recorded(P.ffn, lq, a.data(), f.data(), ranges, "ffn.", rec);
    for (size_t i = 0; i < n; ++i) out[i] = h[i] + f[i];
  } else {
    attend(in.query);
    for (size_t i = 0; i < n; ++i) h[i] = in.query[i] + o[i];
    record(ranges, "add1", h.data(), lq, d, d, rec);
    layernorm_forward(P.norm1, lq, h.data(), a.data());
    record(ranges, "norm1", a.data(), lq, d, d, rec);
    ffn_forward_recorded(P.ffn, lq, a.data(), f.data(), ranges, "ffn.", rec);
    for (size_t i = 0; i < n; ++i) h[i] = a[i] + f[i];
    record(ranges, "add2", h.data(), lq, d, d, rec);
    layernorm_forward(P.norm2, lq, h.data(), out);
  }
  record(ranges, "output", out, lq, d, d, rec);
}

std::vector<std::string> value_points(const FloatLayer& L) {
  const BlockParams& P = L.as<BlockParams>();
  std::vector<std::string> v = {"query", "add1", "ffn.hidden", "ffn.act", "ffn.output", "output"};
  if (P.branch_norm) {
    v.push_back("norm1");
    v.push_back("norm2");
  } else if (P.norm_first) {
    v.push_back("norm2");
  } else {
    v.push_back("norm1");
    v.push_back("add2");
  }
  for (const std::string& k : P.attn.kind->value_points(P.attn)) v.push_back("attn." + k);
  return v;
}
std::vector<std::string> minmax_points(const FloatLayer&) { return {}; }

// The 16-bit residual stream (L.output16, convert --residual int16): x, the
// adds and y int16 at their calibrated ranges (zero point 0), every GEMM
// input int8 as in write_s8 (runtime/src/layers/encoder_block.cc).
flatbuffers::Offset<void> write_s8_stream16(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const BlockParams& P = L.as<BlockParams>();
  const Calibrated a = c.sub("attn.");
  const std::string& at = c.where;
  const ActQuantParams x = c.s16("query"), h = c.s16("add1"), y = c.s16("output");
  QuantNorm n1, n2;
  QuantAdd q1, q2;
  flatbuffers::Offset<fb::Requant> narrow;
  if (P.norm_first) {  // h = x + attn(norm1(x)); y = h + ffn(norm2(h))
    const ActQuantParams n1q = a("query"), n2q = c("norm2");
    n1 = quantize_layernorm16(P.norm1, x, &n1q, nullptr, at + ": norm1");
    q1 = quantize_add16(x, h, at + ": add1");
    n2 = quantize_layernorm16(P.norm2, h, &n2q, nullptr, at + ": norm2");
    q2 = quantize_add16(h, y, at + ": add2");
  } else {  // h = norm1(x + attn(x)); y = norm2(h + ffn(h))
    const ActQuantParams x8 = a("query"), n1q = c("norm1"), n1s = c.s16("norm1"), h2 = c.s16("add2");
    narrow = w.Requants({requant(x.scale / x8.scale, at + ": input_requant")});
    q1 = quantize_add16(x, h, at + ": add1");
    n1 = quantize_layernorm16(P.norm1, h, &n1q, &n1s, at + ": norm1");
    q2 = quantize_add16(n1s, h2, at + ": add2");
    n2 = quantize_layernorm16(P.norm2, h2, nullptr, &y, at + ": norm2");
  }
  const auto t1 = write_layernorm_s8(w, P.norm1, n1), t2 = write_layernorm_s8(w, P.norm2, n2);
  const auto ffn = ffn_table_s8(w, P.ffn, P.norm_first ? n2.output : n1.output, c.sub("ffn."), at + ": ffn", &q2);
  const auto add1 = write_add_s8(w, q1), add2 = write_add_s8(w, q2);
  const auto mha = mha_table_s8(w, P.attn, a, &q1);
  fb::EncoderBlockBuilder b(w.fbb());
  b.add_dim(static_cast<uint32_t>(L.query_dim));
  b.add_norm_first(P.norm_first);
  b.add_norm1(t1);
  b.add_self_attn(mha);
  b.add_add1(add1);
  b.add_norm2(t2);
  b.add_ffn(ffn);
  b.add_add2(add2);
  b.add_residual16(true);
  if (!P.norm_first) b.add_input_requant(narrow);
  return b.Finish().Union();
}

// The norms in the residual branch: out_proj and fc2 write their own int8
// outputs (norm1's and norm2's inputs), the adds are the add contract. On
// the 16-bit residual stream (L.output16) x, h and y are int16 (zero point
// 0), narrowed to the attention's and the FFN's int8 inputs (input_requant,
// branch_requant), and the adds the add16 contract (int8 norm output plus
// the int16 residual).
flatbuffers::Offset<void> write_s8_branch_norm(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  const BlockParams& P = L.as<BlockParams>();
  const Calibrated a = c.sub("attn."), f = c.sub("ffn.");
  const std::string& at = c.where;
  const int d = L.query_dim;
  const bool s16 = L.output16;
  const ActQuantParams x8 = a("query"), n1q = c("norm1"), h8 = c("add1"), n2q = c("norm2");
  const ActQuantParams x = s16 ? c.s16("query") : x8, h = s16 ? c.s16("add1") : h8;
  const ActQuantParams y = s16 ? c.s16("output") : c("output");
  flatbuffers::Offset<fb::Requant> narrow_x, narrow_h;
  if (s16) {
    narrow_x = w.Requants({requant(x.scale / x8.scale, at + ": input_requant")});
    narrow_h = w.Requants({requant(h.scale / h8.scale, at + ": branch_requant")});
  }
  const auto mha = mha_table_s8(w, P.attn, a);
  const auto n1 = norm_table_s8(w, P.norm1, a("output"), n1q, at + ": norm1");
  const auto add1 = add_table_s8(w, d, n1q, x, h, at + ": branch_add1", s16);
  const auto ffn = ffn_table_s8(w, P.ffn, h8, f, at + ": ffn");
  const auto n2 = norm_table_s8(w, P.norm2, f("output"), n2q, at + ": norm2");
  const auto add2 = add_table_s8(w, d, n2q, h, y, at + ": branch_add2", s16);
  fb::EncoderBlockBuilder b(w.fbb());
  b.add_dim(static_cast<uint32_t>(d));
  b.add_norm1(n1);
  b.add_self_attn(mha);
  b.add_norm2(n2);
  b.add_ffn(ffn);
  b.add_branch_norm(true);
  b.add_branch_add1(add1);
  b.add_branch_add2(add2);
  if (s16) {
    b.add_residual16(true);
    b.add_input_requant(narrow_x);
    b.add_branch_requant(narrow_h);
  }
  return b.Finish().Union();
}

flatbuffers::Offset<void> write_s8(ModelWriter& w, const FloatLayer& L, const Calibrated& c) {
  if (L.as<BlockParams>().branch_norm) return write_s8_branch_norm(w, L, c);
  if (L.output16) return write_s8_stream16(w, L, c);
  const BlockParams& P = L.as<BlockParams>();
  const Calibrated a = c.sub("attn.");
  const std::string& at = c.where;
  const ActQuantParams h = c("add1");
  const ActQuantParams y = c("output");
  flatbuffers::Offset<fb::LayerNorm> n1, n2;
  flatbuffers::Offset<fb::FeedForward> ffn;
  // The adds run in out_proj's and fc2's epilogues (contract 5b).
  QuantAdd q1, q2;
  if (P.norm_first) {  // h = x + attn(norm1(x)); y = h + ffn(norm2(h))
    const ActQuantParams x = c("query"), n2q = c("norm2");
    n1 = norm_table_s8(w, P.norm1, x, a("query"), at + ": norm1");
    q1 = quantize_add(x, h, at + ": add1");
    n2 = norm_table_s8(w, P.norm2, h, n2q, at + ": norm2");
    q2 = quantize_add(h, y, at + ": add2");
    ffn = ffn_table_s8(w, P.ffn, n2q, c.sub("ffn."), at + ": ffn", &q2);
  } else {  // h = norm1(x + attn(x)); y = norm2(h + ffn(h))
    const ActQuantParams x = a("query"), n1q = c("norm1"), h2 = c("add2");
    q1 = quantize_add(x, h, at + ": add1");
    n1 = norm_table_s8(w, P.norm1, h, n1q, at + ": norm1");
    q2 = quantize_add(n1q, h2, at + ": add2");
    ffn = ffn_table_s8(w, P.ffn, n1q, c.sub("ffn."), at + ": ffn", &q2);
    n2 = norm_table_s8(w, P.norm2, h2, y, at + ": norm2");
  }
  const auto add1 = write_add_s8(w, q1), add2 = write_add_s8(w, q2);
  const auto mha = mha_table_s8(w, P.attn, a, &q1);
  return fb::CreateEncoderBlock(w.fbb(), static_cast<uint32_t>(L.query_dim), P.norm_first, n1, mha, add1, n2, ffn,
                                add2)
      .Union();
}

flatbuffers::Offset<void> write_f32(ModelWriter& w, const FloatLayer& L) {
  const BlockParams& P = L.as<BlockParams>();
  const auto n1 = write_layernorm_f32(w, P.norm1), n2 = write_layernorm_f32(w, P.norm2);
  const auto mha = mha_table_f32(w, P.attn);
  const auto ffn = ffn_table_f32(w, P.ffn);
  return fb::CreateEncoderBlock(w.fbb(), static_cast<uint32_t>(L.query_dim), P.norm_first, n1, mha, 0, n2, ffn, 0,
                                false, 0, P.branch_norm)
      .Union();
}


void tensors(const fb::Layer& l, const std::string& name, std::vector<TensorEntry>* out) {
  const auto* b = l.options_as_EncoderBlock();
  add_norm_tensors(out, name, "norm1", b->norm1());
  add_linear(out, name, "q_proj", b->self_attn()->q_proj());
  add_linear(out, name, "k_proj", b->self_attn()->k_proj());
  add_linear(out, name, "v_proj", b->self_attn()->v_proj());
  add_linear(out, name, "out_proj", b->self_attn()->out_proj());
  add_norm_tensors(out, name, "norm2", b->norm2());
  add_ffn_tensors(out, name, "", b->ffn());
}

void inspect(const fb::Layer& l, const LayerInfo&, std::ostream& os) {
  const auto* b = l.options_as_EncoderBlock();
  os << "  " << (b->branch_norm() ? "branch-norm (x + norm(f(x)))" : b->norm_first() ? "pre-norm" : "post-norm")
     << ", embed_dim " << b->dim() << ", "
     << b->self_attn()->num_heads() << " heads, FFN " << b->ffn()->hidden_dim() << " ("
     << fb::EnumNameActivation(b->ffn()->activation()) << ")";
  if (l.dtype() == fb::DType::S8) os << ", residual stream " << (b->residual16() ? "int16" : "int8");
  os << "\n";
}

void inspect_quant(const fb::Layer& l, std::ostream& os) {
  const auto* b = l.options_as_EncoderBlock();
  const bool s16 = b->residual16();
  if (s16 && b->input_requant() != nullptr) {
    print_requant(os, "  input_requant (int16 x -> attention's int8)", b->input_requant());
  }
  if (s16 && b->branch_requant() != nullptr) {
    print_requant(os, "  branch_requant (int16 h -> the FFN's int8)", b->branch_requant());
  }
  print_norm(os, "norm1", b->norm1());
  print_linear(os, "q_proj", b->self_attn()->q_proj());
  print_linear(os, "k_proj", b->self_attn()->k_proj());
  print_linear(os, "v_proj", b->self_attn()->v_proj());
  print_linear(os, "out_proj", b->self_attn()->out_proj(), s16);
  print_softmax(os, b->self_attn()->softmax());
  if (b->branch_norm()) {
    print_add_table(os, "branch_add1 (norm1's output + x)", b->branch_add1());
  } else {
    print_add(os, "add1", "out_proj", b->add1(), s16);
  }
  print_norm(os, "norm2", b->norm2());
  print_ffn(os, "ffn", b->ffn(), s16);
  if (b->branch_norm()) {
    print_add_table(os, "branch_add2 (norm2's output + h)", b->branch_add2());
  } else {
    print_add(os, "add2", "fc2", b->add2(), s16);
  }
}

// Pre-norm: norm1 feeds only the attention's q/k/v projections, norm2 only
// fc1. Post-norm LayerNorm outputs are also the residual stream.
std::vector<SmoothPair> smooth_pairs(FloatLayer* L) {
  BlockParams& P = L->as<BlockParams>();
  if (!P.norm_first) {
    fail("layer '", L->name, "': --smooth-alpha needs a pre-norm block (norm_first); in this ",
         P.branch_norm ? "branch-norm" : "post-norm", " block each LayerNorm's output is also the next residual "
         "add's input, so no smoothing factor can be folded");
  }
  MhaParams& M = P.attn.as<MhaParams>();
  return {SmoothPair{"attn.query", "norm1 -> q/k/v_proj", &P.norm1, {&M.q_proj, &M.k_proj, &M.v_proj}},
          SmoothPair{"norm2", "norm2 -> fc1", &P.norm2, {&P.ffn.fc1}}};
}

// Post-norm: the attention reads the block's input x itself, so x is
// quantized by the attention's query (and key, value) points too.
std::vector<std::string> input_points(const FloatLayer& L) {
  if (L.as<BlockParams>().norm_first) return {"query"};
  return {"query", "attn.query", "attn.key", "attn.value"};
}

// The kind's traits, by name (the rest keep KindModule's defaults).
KindModule module() {
  KindModule m = kind_identity(EA_LAYER_ENCODER_BLOCK);
  m.causal_mask = true;
  m.fields = {"embed_dim", "num_heads", "ffn_dim", "activation", "norm_first", "branch_norm", "eps", "scale", "preset",
              "out_proj"};
  m.tensor_fields = {"norm1_w", "norm1_b", "qkv_w", "qkv_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b", "norm2_w", "norm2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"};
  m.resolve = resolve;
  m.shell = shell;
  m.io = io;
  m.forward = forward_layer;
  m.value_points = value_points;
  m.minmax_points = minmax_points;
  m.input_points = input_points;
  m.write_s8 = write_s8;
  m.write_f32 = write_f32;
  m.tensors = tensors;
  m.inspect = inspect;
  m.inspect_quant = inspect_quant;
  m.smooth_pairs = smooth_pairs;
  return m;
}

}  // namespace encoder_block_module
}  // namespace

namespace kinds {
const KindModule kind_encoder_block = encoder_block_module::module();
}  // namespace kinds

}  // namespace convert
}  // namespace edgeattn
