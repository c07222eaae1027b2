// Transformer encoder block (nn.TransformerEncoderLayer, ViT/SVTR blocks):
// LayerNorm, self-attention, residual add, LayerNorm, feed-forward, residual
// add, in pre-norm or post-norm order, each step run by its own kind's code
// (parts.h) over buffers of one layout (BlockLayout) that both the plan and
// the run read:
//   pre-norm:  a = norm1(x); a = attn's context; o = x + out_proj(a);
//              a = norm2(o); y = o + ffn(a)
//   post-norm: a = attn's context; o = x + out_proj(a); a = norm1(o);
//              o = a + ffn(a); y = norm2(o)
//   branch norm (Torch-KWT's PostNorm): a = attn's context; o = out_proj(a);
//              a = norm1(o); o = x + a; a = ffn(o); y = norm2(a); y = o + y
//              (int8: the adds are the add contract, kind add's AddStep;
//              on the 16-bit stream x, h and y int16, narrowed to the GEMMs'
//              int8 inputs, and the adds the add16 contract)
// `region` holds the attention's own scratch first and the FFN's hidden
// rows after it, so the block's scratch is 2 rows of d plus the larger of
// the two. Each residual add runs in the epilogue of the projection before
// it (int8: requant.h contract 5b), so neither out_proj's nor fc2's output
// is rounded to int8 on its own.
// The 16-bit residual stream (EncoderBlock.residual16, issue 37): x, y and
// `o` are int16 rows; the adds are contract 5c, the LayerNorms contract 4b
// (int16 in, the int8 GEMM input out; post-norm norm1 also rewrites the
// stream in `o`, norm2 the output in place). Post-norm first narrows x to
// the attention's int8 input in `a` (free until the context lands there).
#include "edgeattn/kernels/dispatch.h"
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {

bool verify_add(Checker& c, const fb::ResidualAdd* a, const fb::ActQuant* in_a, const fb::Linear* from,
                const char* what) {
  if (a == nullptr) {
    c.Msg() << "missing residual add " << what;
    return false;
  }
  if (!c.Quant(a->a(), what) || !c.Quant(a->output(), what)) return false;
  if (a->a()->scale() != in_a->scale() || a->a()->zero_point() != in_a->zero_point()) {
    c.Msg() << "residual add " << what << ": its residual input's quantization differs from the tensor it adds";
    return false;
  }
  if (a->output()->scale() != from->output()->scale() || a->output()->zero_point() != from->output()->zero_point()) {
    c.Msg() << "residual add " << what << ": its output quantization differs from the projection computing it";
    return false;
  }
  if (a->shift() < 1 || a->shift() > kernels::kResidualMaxShift || a->a_multiplier() < 0 ||
      a->a_multiplier() > kernels::kResidualMaxMultiplier) {
    c.Msg() << "residual add " << what << ": multiplier " << a->a_multiplier() << " or shift " << a->shift()
            << " out of range (0.." << kernels::kResidualMaxMultiplier << ", 1.." << kernels::kResidualMaxShift
            << ")";
    return false;
  }
  return true;
}

// Contract 5c's add: both sides int16 with zero point 0, A and n in range.
bool verify_add16(Checker& c, const fb::ResidualAdd* a, const fb::ActQuant* in_a, const fb::Linear* from,
                  const char* what) {
  if (a == nullptr) {
    c.Msg() << "missing residual add " << what;
    return false;
  }
  if (!c.Quant16(a->a(), what) || !c.Quant16(a->output(), what) || !c.Quant16(from->output(), what)) return false;
  if (a->a()->scale() != in_a->scale() || a->a()->zero_point() != in_a->zero_point()) {
    c.Msg() << "residual add " << what << ": its residual input's quantization differs from the tensor it adds";
    return false;
  }
  if (a->output()->scale() != from->output()->scale()) {
    c.Msg() << "residual add " << what << ": its output quantization differs from the projection computing it";
    return false;
  }
  if (a->shift() < 1 || a->shift() > kernels::kResidual16MaxShift || a->a_multiplier() < 0 ||
      a->a_multiplier() > kernels::kResidual16MaxMultiplier) {
    c.Msg() << "residual add " << what << " (int16 stream): multiplier " << a->a_multiplier() << " or shift "
            << a->shift() << " out of range (0.." << kernels::kResidual16MaxMultiplier << ", 1.."
            << kernels::kResidual16MaxShift << ")";
    return false;
  }
  return true;
}

bool verify_add_table(Checker& c, const fb::Add* a, const char* what) {
  if (a == nullptr) {
    c.Msg() << "missing " << what;
    return false;
  }
  const bool s16 = a->residual16();
  if (s16 && !c.Stream16()) return false;
  if (!c.Quant(a->input(), what) ||
      !(s16 ? c.Quant16(a->residual(), what) && c.Quant16(a->output(), what)
            : c.Quant(a->residual(), what) && c.Quant(a->output(), what))) {
    return false;
  }
  const int32_t ma = a->input_multiplier(), mb = a->residual_multiplier(), n = a->shift();
  const int32_t max_shift = s16 ? kernels::kAdd16MaxShift : kernels::kAddMaxShift;
  if (ma < 0 || ma > kernels::kAddMaxMultiplier || mb < 0 || mb > kernels::kAddMaxMultiplier || n < 1 ||
      n > max_shift) {
    c.Msg() << what << ": multipliers " << ma << ", " << mb << " shift " << n << " out of range (multipliers 0.."
            << kernels::kAddMaxMultiplier << ", shift 1.." << max_shift << ")";
    return false;
  }
  return true;
}

namespace {

// Offsets in the scratch (see the top of this file).
struct BlockLayout {
  uint64_t a, o, region, hidden, total;
};

BlockLayout block_layout(const LayerShape& s, int q_len, int kv_len) {
  const bool s8 = s.dtype == EA_S8;
  const uint64_t row = static_cast<uint64_t>(q_len) * static_cast<uint64_t>(s.embed_dim) * (s8 ? 1 : 4);
  const uint64_t stream_row = s.residual16 ? 2 * row : row;  // `o`: int16 with the 16-bit stream
  const uint64_t hidden = ffn_hidden_bytes(s.hidden_dim, s8, q_len);  // in `region`, after the attention
  const uint64_t attn = plan_mha(s, q_len, kv_len).scratch_bytes;
  Regions scratch;
  BlockLayout b = {};
  b.a = scratch.Add(row);
  b.o = scratch.Add(stream_row);
  b.region = scratch.Add(attn > hidden ? attn : hidden);
  b.hidden = b.region;
  b.total = scratch.bytes();
  return b;
}

struct Handover {
  bool applies;  // pre-norm only, post-norm only, or both
  const fb::ActQuant* from;
  const fb::ActQuant* to;
  const char* what;
};

bool same_quant(Checker& c, const Handover* hs, int n) {
  for (int i = 0; i < n; ++i) {
    const Handover& h = hs[i];
    if (h.applies && (h.from->scale() != h.to->scale() || h.from->zero_point() != h.to->zero_point())) {
      c.Msg() << "quantization differs at " << h.what;
      return false;
    }
  }
  return true;
}

// The int8 block with the 16-bit residual stream (see the top of this file).
bool verify_stream16(Checker& c, const fb::EncoderBlock& b) {
  const fb::LayerNorm* n1 = b.norm1();
  const fb::LayerNorm* n2 = b.norm2();
  const fb::MultiHeadAttention* m = b.self_attn();
  const fb::Linear* q = m->q_proj();
  const bool pre = b.norm_first();
  if (!n1->input16() || !n2->input16()) {
    c.Msg() << "a block with the int16 residual stream needs LayerNorms that read int16 (input16)";
    return false;
  }
  // The int8 outputs the GEMMs read, the int16 ones the stream.
  const bool outputs = pre ? n1->output() != nullptr && n2->output() != nullptr
                           : n1->output() != nullptr && n1->output16() != nullptr && n2->output16() != nullptr;
  if (!outputs) {
    c.Msg() << (pre ? "norm1 and norm2 need int8 outputs (the GEMMs' inputs)"
                    : "post-norm: norm1 needs its int8 and int16 outputs, norm2 its int16 output");
    return false;
  }
  if (b.add1() == nullptr || b.add2() == nullptr) {
    c.Msg() << "missing residual add " << (b.add1() == nullptr ? "add1" : "add2");
    return false;
  }
  const fb::ActQuant* x = pre ? n1->input() : b.add1()->a();
  if (!c.Quant16(x, "the block's int16 input") ||
      !verify_add16(c, b.add1(), x, m->out_proj(), "add1") ||
      !verify_add16(c, b.add2(), pre ? b.add1()->output() : n1->output16(), b.ffn()->fc2(), "add2")) {
    return false;
  }
  if (!pre && !c.Requant(b.input_requant(), 1, "input_requant (the int16 input to the attention's int8)")) {
    return false;
  }
  const Handover handovers[] = {
      {pre, n1->output(), q->input(), "norm1's output / self_attn's input"},
      {pre, b.add1()->output(), n2->input(), "add1's output / norm2's input"},
      {pre, n2->output(), b.ffn()->fc1()->input(), "norm2's output / the FFN's input"},
      {!pre, b.add1()->output(), n1->input(), "add1's output / norm1's input"},
      {!pre, n1->output(), b.ffn()->fc1()->input(), "norm1's output / the FFN's input"},
      {!pre, b.add2()->output(), n2->input(), "add2's output / norm2's input"},
      {true, q->input(), m->k_proj()->input(), "self_attn's query / key input"},
      {true, q->input(), m->v_proj()->input(), "self_attn's query / value input"}};
  return same_quant(c, handovers, static_cast<int>(sizeof handovers / sizeof handovers[0]));
}

// The int8 block with its norms in the residual branch: out_proj -> norm1
// -> branch_add1 (+ x) -> the FFN -> norm2 -> branch_add2 (+ h), each
// hand-over at one quantization, no epilogue adds.
bool verify_branch_norm(Checker& c, const fb::EncoderBlock& b) {
  if (b.add1() != nullptr || b.add2() != nullptr) {
    c.Msg() << "branch_norm with epilogue adds (add1 / add2): its adds are branch_add1 / branch_add2";
    return false;
  }
  const fb::Add* a1 = b.branch_add1();
  const fb::Add* a2 = b.branch_add2();
  if (!verify_add_table(c, a1, "branch_add1") || !verify_add_table(c, a2, "branch_add2")) return false;
  const bool s16 = b.residual16();
  if (a1->residual16() != s16 || a2->residual16() != s16) {
    c.Msg() << "branch_add1 / branch_add2 " << (s16 ? "need" : "have") << " int16 residuals (residual16) in a block "
            << (s16 ? "on" : "off") << " the 16-bit stream";
    return false;
  }
  if (b.norm1()->input16() || b.norm2()->input16() || b.norm1()->output16() != nullptr ||
      b.norm2()->output16() != nullptr) {
    c.Msg() << "branch_norm: its LayerNorms read and write int8 (the sub-layers' outputs), not the int16 stream";
    return false;
  }
  if (s16 && (!c.Requant(b.input_requant(), 1, "input_requant (the int16 input to the attention's int8)") ||
              !c.Requant(b.branch_requant(), 1, "branch_requant (the int16 h to the FFN's int8)"))) {
    return false;
  }
  const fb::LayerNorm* n1 = b.norm1();
  const fb::LayerNorm* n2 = b.norm2();
  const fb::MultiHeadAttention* m = b.self_attn();
  const fb::Linear* q = m->q_proj();
  const Handover handovers[] = {
      {true, m->out_proj()->output(), n1->input(), "out_proj's output / norm1's input"},
      {true, n1->output(), a1->input(), "norm1's output / branch_add1's input"},
      {!s16, q->input(), a1->residual(), "the block's input / branch_add1's residual"},
      {!s16, a1->output(), b.ffn()->fc1()->input(), "branch_add1's output / the FFN's input"},
      {true, b.ffn()->fc2()->output(), n2->input(), "the FFN's output / norm2's input"},
      {true, n2->output(), a2->input(), "norm2's output / branch_add2's input"},
      {true, a1->output(), a2->residual(), "branch_add1's output / branch_add2's residual"},
      {true, q->input(), m->k_proj()->input(), "self_attn's query / key input"},
      {true, q->input(), m->v_proj()->input(), "self_attn's query / value input"}};
  return same_quant(c, handovers, static_cast<int>(sizeof handovers / sizeof handovers[0]));
}

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* b = l.options_as_EncoderBlock();
  if (!c.Dim(b->dim(), "dim") || !verify_mha(c, b->self_attn(), s8)) return false;
  const auto* m = b->self_attn();
  if (m->embed_dim() != b->dim() || m->cross() || m->kv_cache()) {
    c.Msg() << "self_attn must be self-attention over dim " << b->dim() << " without a KV cache";
    return false;
  }
  if (!verify_layernorm(c, b->norm1(), s8, b->dim(), "norm1") ||
      !verify_layernorm(c, b->norm2(), s8, b->dim(), "norm2") ||
      !verify_ffn(c, b->ffn(), s8, b->dim(), "ffn")) {
    return false;
  }
  if (b->branch_norm() && !c.BranchNorm()) return false;
  if (b->branch_norm() && b->norm_first()) {
    c.Msg() << "branch_norm (the norms on the sub-layers' outputs) with norm_first: a block has one form";
    return false;
  }
  if (!s8) return true;
  if (kWithBranchNorm && b->branch_norm()) return verify_branch_norm(c, *b);
  if (b->residual16()) return c.Stream16() && verify_stream16(c, *b);
  if (b->norm1()->input16() || b->norm2()->input16() || b->norm1()->output16() != nullptr ||
      b->norm2()->output16() != nullptr) {
    c.Msg() << "LayerNorms on an int16 stream in a block whose residual stream is int8 (residual16 false)";
    return false;
  }
  // The int8 steps must agree on the quantization of every tensor one hands
  // to the next (the converter writes them so; a file that does not is refused).
  const fb::LayerNorm* n1 = b->norm1();
  const fb::LayerNorm* n2 = b->norm2();
  const fb::Linear* q = m->q_proj();
  const fb::ActQuant* add1_a = b->norm_first() ? n1->input() : q->input();
  const fb::ActQuant* add2_a = b->norm_first() ? b->add1()->output() : n1->output();
  if (!verify_add(c, b->add1(), add1_a, m->out_proj(), "add1") ||
      !verify_add(c, b->add2(), add2_a, b->ffn()->fc2(), "add2")) {
    return false;
  }
  const bool pre = b->norm_first();
  const Handover handovers[] = {
      {pre, n1->output(), q->input(), "norm1's output / self_attn's input"},
      {pre, b->add1()->output(), n2->input(), "add1's output / norm2's input"},
      {pre, n2->output(), b->ffn()->fc1()->input(), "norm2's output / the FFN's input"},
      {!pre, b->add1()->output(), n1->input(), "add1's output / norm1's input"},
      {!pre, n1->output(), b->ffn()->fc1()->input(), "norm1's output / the FFN's input"},
      {!pre, b->add2()->output(), n2->input(), "add2's output / norm2's input"},
      {true, q->input(), m->k_proj()->input(), "self_attn's query / key input"},
      {true, q->input(), m->v_proj()->input(), "self_attn's query / value input"}};
  return same_quant(c, handovers, static_cast<int>(sizeof handovers / sizeof handovers[0]));
}

void shape(const void* options, LayerShape* s) {
  const auto* b = static_cast<const fb::EncoderBlock*>(options);
  mha_shape(*b->self_attn(), s);
  s->hidden_dim = static_cast<int>(b->ffn()->hidden_dim());
  s->residual16 = kWithInt16Stream && s->dtype == EA_S8 && b->residual16();
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* b = l.options_as_EncoderBlock();
  info->query_dim = static_cast<int32_t>(b->dim());
  info->key_dim = info->query_dim;
  info->value_dim = info->query_dim;
  info->output_dim = info->query_dim;
  info->num_heads = static_cast<int32_t>(b->self_attn()->num_heads());
  info->num_kv_heads = static_cast<int32_t>(b->self_attn()->num_kv_heads() != 0 ? b->self_attn()->num_kv_heads()
                                                                              : b->self_attn()->num_heads());
  info->causal = b->self_attn()->causal();
  info->query_quant = quant_of(b->norm_first() ? b->norm1()->input() : b->self_attn()->q_proj()->input());
  info->key_quant = info->query_quant;  // self-attention: the keys are the query rows
  info->value_quant = info->query_quant;
  if (b->branch_norm()) {
    info->output_quant = quant_of(b->branch_add2() != nullptr ? b->branch_add2()->output() : nullptr);
  } else if (b->norm_first()) {
    info->output_quant = quant_of(b->add2() != nullptr ? b->add2()->output() : nullptr);  // no adds in f32 blocks
  } else {
    info->output_quant = quant_of(b->norm2()->output());
  }
  if (kWithInt16Stream && l.dtype() == fb::DType::S8 && b->residual16() && b->branch_norm()) {
    info->input_dtype = info->output_dtype = EA_S16;  // x and y int16 (zero point 0), the adds' residual / output
    info->query_quant = quant_of(b->branch_add1()->residual());
    info->key_quant = info->value_quant = info->query_quant;
  } else if (kWithInt16Stream && l.dtype() == fb::DType::S8 && b->residual16()) {  // int16 rows in and out (zero point 0)
    info->input_dtype = info->output_dtype = EA_S16;
    if (!b->norm_first()) {
      info->query_quant = quant_of(b->add1()->a());
      info->output_quant = quant_of(b->norm2()->output16());
    }
    info->key_quant = info->value_quant = info->query_quant;
  }
}


LayerPlan plan(const LayerShape& s, int q_len, int kv_len) {
  return LayerPlan{0, block_layout(s, q_len, kv_len).total, plan_mha(s, q_len, kv_len).worker_bytes};
}

void run(const fb::Model& model, const Call& c, int) {
  const auto* b = c.layer->options_as_EncoderBlock();
  LayerShape s = {};
  s.dtype = c.int8() ? EA_S8 : EA_F32;
  s.tile_scratch = c.layer->tile_scratch();
  shape(c.layer->options(), &s);
  const BlockLayout lay = block_layout(s, c.q_len, c.kv_len);
  uint8_t* a = c.scratch + lay.a;
  uint8_t* o = c.scratch + lay.o;
  uint8_t* hidden = c.scratch + lay.hidden;
  const int rows = c.q_len;

  Call attn = c;  // the same masks and attention-weights output, the block's own buffers
  attn.scratch = c.scratch + lay.region;
  attn.output = o;
  attn.query = attn.key = attn.value = b->norm_first() || s.residual16 ? a : c.query;
  const auto* m = b->self_attn();
  // Three pool calls (run_chain): the Q, K and V projections (after norm1
  // in pre-norm) of row tiles; the attention core (heads x row ranges); and
  // every step after it, row tile by row tile. The context goes to `a`,
  // free while the attention runs (the FFN's rows in `region` would
  // overwrite the MHA's own context rows that other tasks still read).
  MhaBuffers mb = mha_buffers(m, attn, c.kv_len);
  mb.ctx = a;
  const int unit = kernels::kLinearRowUnit;
  if (kWithBranchNorm && kWithInt16Stream && s.residual16 && b->branch_norm()) {
    // x, h (in the output) and y int16; `o`'s first half holds int8 rows
    // (out_proj's, then fc2's), `a` the int8 inputs of the GEMMs and norms.
    const int d = static_cast<int>(b->dim());
    run_chain(c, rows, unit, NarrowStep(b->input_requant(), m->q_proj()->input(), d, c.query, a),
              mha_qkv_step(model, m, c, a, mb));
    mha_attend(m, attn, mb);
    run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o), NormStep(model, c, b->norm1(), o, a),
              AddStep(c, b->branch_add1(), d, a, c.query, c.output),
              NarrowStep(b->branch_requant(), b->ffn()->fc1()->input(), d, c.output, a),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), a, hidden)), TableStep(c, b->ffn(), hidden),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, o)), NormStep(model, c, b->norm2(), o, a),
              AddStep(c, b->branch_add2(), d, a, c.output, c.output));
    return;
  }
  if (kWithInt16Stream && s.residual16) {  // int16 x, o and y (see the top of this file)
    const Residual res1 = {b->add1(), c.query, true};
    if (b->norm_first()) {
      const Residual add2 = {b->add2(), o, true};
      run_chain(c, rows, unit, NormStep(model, c, b->norm1(), c.query, a, nullptr), mha_qkv_step(model, m, c, a, mb));
      mha_attend(m, attn, mb);
      run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o, &res1),
                NormStep(model, c, b->norm2(), o, a, nullptr),
                EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), a, hidden)), TableStep(c, b->ffn(), hidden),
                EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, c.output, &add2)));
    } else {
      const Residual add2 = {b->add2(), o, true};
      run_chain(c, rows, unit,
                NarrowStep(b->input_requant(), m->q_proj()->input(), static_cast<int>(b->dim()), c.query, a),
                mha_qkv_step(model, m, c, a, mb));
      mha_attend(m, attn, mb);
      run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o, &res1),
                NormStep(model, c, b->norm1(), o, a, o),
                EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), a, hidden)), TableStep(c, b->ffn(), hidden),
                EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, c.output, &add2)),
                NormStep(model, c, b->norm2(), c.output, nullptr, c.output));
    }
    return;
  }
  if (kWithBranchNorm && b->branch_norm()) {  // h = x + norm1(attn(x)) in `o`; y = h + norm2(ffn(h)), norm2's rows in the output
    run_chain(c, rows, unit, mha_qkv_step(model, m, c, c.query, mb));
    mha_attend(m, attn, mb);
    run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o), NormStep(model, c, b->norm1(), o, a),
              AddStep(c, b->branch_add1(), static_cast<int>(b->dim()), a, c.query, o),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), o, hidden)), TableStep(c, b->ffn(), hidden),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, a)), NormStep(model, c, b->norm2(), a, c.output),
              AddStep(c, b->branch_add2(), static_cast<int>(b->dim()), c.output, o, c.output));
    return;
  }
  const Residual res1 = {b->add1(), c.query};
  if (b->norm_first()) {
    const Residual res2 = {b->add2(), o};
    run_chain(c, rows, unit, NormStep(model, c, b->norm1(), c.query, a), mha_qkv_step(model, m, c, a, mb));
    mha_attend(m, attn, mb);
    run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o, &res1), NormStep(model, c, b->norm2(), o, a),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), a, hidden)), TableStep(c, b->ffn(), hidden),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, c.output, &res2)));
  } else {
    const Residual res2 = {b->add2(), a};
    run_chain(c, rows, unit, mha_qkv_step(model, m, c, c.query, mb));
    mha_attend(m, attn, mb);
    run_chain(c, rows, unit, LinearStep(model, c, m->out_proj(), a, o, &res1), NormStep(model, c, b->norm1(), o, a),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc1(), a, hidden)), TableStep(c, b->ffn(), hidden),
              EA_FFN_STEP(LinearStep(model, c, b->ffn()->fc2(), hidden, o, &res2)),
              NormStep(model, c, b->norm2(), o, c.output));
  }
}

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  const auto* b = l.options_as_EncoderBlock();
  const auto* m = b->self_attn();
  out[0] = m->q_proj(); out[1] = m->k_proj(); out[2] = m->v_proj(); out[3] = m->out_proj();
  out[4] = b->ffn()->fc1(); out[5] = b->ffn()->fc2();
  return 6;
}

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_ENCODER_BLOCK);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.linears = linears;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_encoder_block = module();
}  // namespace layers

}  // namespace edgeattn
