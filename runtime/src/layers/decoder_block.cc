// Transformer decoder block (nn.TransformerDecoderLayer): causal
// self-attention with a KV cache, cross-attention over the memory (key =
// memory [kv_len][dim], its projections in the layer's cache), feed-forward,
// three LayerNorms and three residual adds, pre-norm or post-norm, each step
// run by its own kind's code (parts.h) over buffers of one layout
// (DecoderLayout) that the plan, the runs, CacheKeys and Step all read:
//   pre-norm:  a = norm1(x); o = x + self(a); a = norm2(o);
//              t = o + cross(a, memory); o = norm3(t); y = t + ffn(o)
//   post-norm: o = x + self(x); a = norm1(o); t = a + cross(a, memory);
//              a = norm2(t); o = a + ffn(a); y = norm3(o)
// (a full run keeps the prefill's cross-attention context in t and its
// output in a: a = o + cross(...), o = norm3(a), y = a + ffn(o), and
// post-norm o = a + cross(...), a = norm2(o)). Each residual add runs in the
// epilogue of the projection before it (out_proj, fc2; int8: requant.h
// contract 5b). Scratch: rows a, o, t [q][dim], then `region`, the larger of
// the two attentions' scratch and the FFN's hidden rows. Cache: the
// cross-attention's K, V for max_kv_len memory rows, then the
// self-attention's K, V for max_q_len positions (a decoding step appends one).
// A full run fills self positions 0..q_len-1 (prefill), as an MHA layer with
// kv_cache does; attention weights, when asked for, are the cross-attention's.
// The 16-bit residual stream (DecoderBlock.residual16, issue 37): x, y and
// the stream's rows are int16 (a, o, t then hold 2 bytes per element), the
// adds contract 5c, the LayerNorms contract 4b; a row tile never writes an
// int16 row over int8 rows other tiles still read (run16, steps16 below).
#include "layer_kind.h"
#include "parts.h"

namespace edgeattn {
namespace {

struct DecoderLayout {
  uint64_t a, o, t, region, hidden, scratch;  // in the scratch
  uint64_t cross_cache, self_cache, cache;       // in the cache
};

// The self-attention's LayerShape: causal self-attention with kv_cache.
LayerShape self_shape(const LayerShape& s) {
  LayerShape sub = s;
  sub.cross = false;
  sub.kv_cache = true;
  return sub;
}

// The cross-attention's: K and V of the memory in the cache.
LayerShape cross_shape(const LayerShape& s) {
  LayerShape sub = s;
  sub.cross = true;
  sub.kv_cache = false;
  return sub;
}

// q_len query rows over kv_len memory rows; the cache laid out for
// max_q_len self positions and max_kv_len memory rows.
DecoderLayout decoder_layout(const LayerShape& s, int q_len, int kv_len, int max_q_len, int max_kv_len) {
  const bool s8 = s.dtype == EA_S8;
  const uint64_t row = static_cast<uint64_t>(q_len) * static_cast<uint64_t>(s.embed_dim) * (s8 ? 1 : 4) *
                       (s.residual16 ? 2 : 1);  // the int16 stream's rows
  const uint64_t self_attn = plan_mha(self_shape(s), q_len, q_len).scratch_bytes;
  const uint64_t cross_attn = plan_mha(cross_shape(s), q_len, kv_len).scratch_bytes;
  const uint64_t hidden = ffn_hidden_bytes(s.hidden_dim, s8, q_len);  // in `region`, after the attentions
  DecoderLayout d = {};
  uint64_t region = self_attn > cross_attn ? self_attn : cross_attn;
  if (hidden > region) region = hidden;
  Regions scratch;
  d.a = scratch.Add(row);
  d.o = scratch.Add(row);
  d.t = scratch.Add(row);
  d.region = scratch.Add(region);
  d.hidden = d.region;
  d.scratch = scratch.bytes();
  Regions cache;
  d.cross_cache = cache.Add(plan_mha(cross_shape(s), q_len, max_kv_len).cache_bytes);
  d.self_cache = cache.Add(plan_mha(self_shape(s), max_q_len, max_q_len).cache_bytes);
  d.cache = cache.bytes();
  return d;
}

bool same_quant(Checker& c, const fb::ActQuant* from, const fb::ActQuant* to, const char* what) {
  if (from->scale() != to->scale() || from->zero_point() != to->zero_point()) {
    c.Msg() << "int8 quantization differs at " << what;
    return false;
  }
  return true;
}

// The int8 block with the 16-bit residual stream (see the top of this file).
bool verify_stream16(Checker& c, const fb::DecoderBlock& b) {
  const fb::LayerNorm* n1 = b.norm1();
  const fb::LayerNorm* n2 = b.norm2();
  const fb::LayerNorm* n3 = b.norm3();
  const auto* sa = b.self_attn();
  const auto* ca = b.cross_attn();
  const bool pre = b.norm_first();
  if (!n1->input16() || !n2->input16() || !n3->input16()) {
    c.Msg() << "a block with the int16 residual stream needs LayerNorms that read int16 (input16)";
    return false;
  }
  const bool outputs = pre ? n1->output() && n2->output() && n3->output()
                           : n1->output() && n1->output16() && n2->output() && n2->output16() && n3->output16();
  if (!outputs) {
    c.Msg() << (pre ? "norm1..norm3 need int8 outputs (the GEMMs' inputs)"
                    : "post-norm: norm1 and norm2 need int8 and int16 outputs, norm3 its int16 output");
    return false;
  }
  if (b.add1() == nullptr || b.add2() == nullptr || b.add3() == nullptr) {
    c.Msg() << "missing a residual add";
    return false;
  }
  const fb::ActQuant* x = pre ? n1->input() : b.add1()->a();
  if (!c.Quant16(x, "the block's int16 input") || !verify_add16(c, b.add1(), x, sa->out_proj(), "add1") ||
      !verify_add16(c, b.add2(), pre ? b.add1()->output() : n1->output16(), ca->out_proj(), "add2") ||
      !verify_add16(c, b.add3(), pre ? b.add2()->output() : n2->output16(), b.ffn()->fc2(), "add3")) {
    return false;
  }
  if (!pre && !c.Requant(b.input_requant(), 1, "input_requant (the int16 input to the attention's int8)")) {
    return false;
  }
  const fb::ActQuant* sq = sa->q_proj()->input();
  const fb::ActQuant* cq = ca->q_proj()->input();
  const fb::ActQuant* fc1 = b.ffn()->fc1()->input();
  const struct {
    bool applies;
    const fb::ActQuant* from;
    const fb::ActQuant* to;
    const char* what;
  } handovers[] = {
      {pre, n1->output(), sq, "norm1's output / self_attn's input"},
      {pre, b.add1()->output(), n2->input(), "add1's output / norm2's input"},
      {pre, n2->output(), cq, "norm2's output / cross_attn's query input"},
      {pre, b.add2()->output(), n3->input(), "add2's output / norm3's input"},
      {pre, n3->output(), fc1, "norm3's output / the FFN's input"},
      {!pre, b.add1()->output(), n1->input(), "add1's output / norm1's input"},
      {!pre, n1->output(), cq, "norm1's output / cross_attn's query input"},
      {!pre, b.add2()->output(), n2->input(), "add2's output / norm2's input"},
      {!pre, n2->output(), fc1, "norm2's output / the FFN's input"},
      {!pre, b.add3()->output(), n3->input(), "add3's output / norm3's input"},
      {true, sq, sa->k_proj()->input(), "self_attn's query / key input"},
      {true, sq, sa->v_proj()->input(), "self_attn's query / value input"},
      {true, ca->k_proj()->input(), ca->v_proj()->input(), "cross_attn's key / value input (the memory)"}};
  for (const auto& h : handovers) {
    if (h.applies && !same_quant(c, h.from, h.to, h.what)) return false;
  }
  return true;
}

bool verify(Checker& c, const fb::Layer& l, bool s8) {
  const auto* b = l.options_as_DecoderBlock();
  if (!c.Dim(b->dim(), "dim")) return false;
  const auto* sa = b->self_attn();
  const auto* ca = b->cross_attn();
  if (!verify_mha(c, sa, s8)) return false;
  if (ca == nullptr) {
    c.Msg() << "missing cross_attn";
    return false;
  }
  if (!verify_mha(c, ca, s8)) return false;
  if (sa->embed_dim() != b->dim() || sa->cross() || !sa->causal() || !sa->kv_cache()) {
    c.Msg() << "self_attn must be causal self-attention over dim " << b->dim() << " with kv_cache";
    return false;
  }
  if (ca->embed_dim() != b->dim() || !ca->cross() || ca->causal() || ca->kv_cache() || ca->kdim() != b->dim() ||
      ca->vdim() != b->dim() || ca->num_heads() != sa->num_heads() || ca->num_kv_heads() != sa->num_kv_heads()) {
    c.Msg() << "cross_attn must be non-causal cross-attention over a memory of dim " << b->dim()
            << " with self_attn's heads";
    return false;
  }
  if (!verify_layernorm(c, b->norm1(), s8, b->dim(), "norm1") ||
      !verify_layernorm(c, b->norm2(), s8, b->dim(), "norm2") ||
      !verify_layernorm(c, b->norm3(), s8, b->dim(), "norm3") ||
      !verify_ffn(c, b->ffn(), s8, b->dim(), "ffn")) {
    return false;
  }
  if (!s8) return true;
  if (b->residual16()) return c.Stream16() && verify_stream16(c, *b);
  // The int8 steps must agree on the quantization of every tensor one hands
  // to the next (the converter writes them so; a file that does not is refused).
  const fb::LayerNorm* n1 = b->norm1();
  const fb::LayerNorm* n2 = b->norm2();
  const fb::LayerNorm* n3 = b->norm3();
  for (const fb::LayerNorm* n : {n1, n2, n3}) {
    if (n->input16() || n->output16() != nullptr) {
      c.Msg() << "LayerNorms on an int16 stream in a block whose residual stream is int8 (residual16 false)";
      return false;
    }
  }
  const fb::ActQuant* sq = sa->q_proj()->input();
  const fb::ActQuant* cq = ca->q_proj()->input();
  const fb::ActQuant* fc1 = b->ffn()->fc1()->input();
  const bool pre = b->norm_first();
  // The residual inputs of the three adds.
  const fb::ActQuant* r1 = pre ? n1->input() : sq;
  if (!verify_add(c, b->add1(), r1, sa->out_proj(), "add1")) return false;
  const fb::ActQuant* r2 = pre ? b->add1()->output() : n1->output();
  if (!verify_add(c, b->add2(), r2, ca->out_proj(), "add2")) return false;
  const fb::ActQuant* r3 = pre ? b->add2()->output() : n2->output();
  if (!verify_add(c, b->add3(), r3, b->ffn()->fc2(), "add3")) return false;
  struct Handover {
    bool applies;  // pre-norm only, post-norm only, or both
    const fb::ActQuant* from;
    const fb::ActQuant* to;
    const char* what;
  };
  const Handover handovers[] = {
      {pre, n1->output(), sq, "norm1's output / self_attn's input"},
      {pre, b->add1()->output(), n2->input(), "add1's output / norm2's input"},
      {pre, n2->output(), cq, "norm2's output / cross_attn's query input"},
      {pre, b->add2()->output(), n3->input(), "add2's output / norm3's input"},
      {pre, n3->output(), fc1, "norm3's output / the FFN's input"},
      {!pre, b->add1()->output(), n1->input(), "add1's output / norm1's input"},
      {!pre, n1->output(), cq, "norm1's output / cross_attn's query input"},
      {!pre, b->add2()->output(), n2->input(), "add2's output / norm2's input"},
      {!pre, n2->output(), fc1, "norm2's output / the FFN's input"},
      {!pre, b->add3()->output(), n3->input(), "add3's output / norm3's input"},
      {true, sq, sa->k_proj()->input(), "self_attn's query / key input"},
      {true, sq, sa->v_proj()->input(), "self_attn's query / value input"},
      {true, ca->k_proj()->input(), ca->v_proj()->input(), "cross_attn's key / value input (the memory)"}};
  for (const Handover& h : handovers) {
    if (h.applies && !same_quant(c, h.from, h.to, h.what)) return false;
  }
  return true;
}

void shape(const void* options, LayerShape* s) {
  const auto* b = static_cast<const fb::DecoderBlock*>(options);
  mha_shape(*b->self_attn(), s);
  s->cross = false;
  s->kv_cache = true;
  s->hidden_dim = static_cast<int>(b->ffn()->hidden_dim());
  s->residual16 = kWithInt16Stream && s->dtype == EA_S8 && b->residual16();
}

LayerPlan plan(const LayerShape& s, int q_len, int kv_len) {
  const DecoderLayout d = decoder_layout(s, q_len, kv_len, q_len, kv_len);
  const uint64_t self_worker = plan_mha(self_shape(s), q_len, q_len).worker_bytes;
  const uint64_t cross_worker = plan_mha(cross_shape(s), q_len, kv_len).worker_bytes;
  return LayerPlan{d.cache, d.scratch, self_worker > cross_worker ? self_worker : cross_worker};
}

void info(const fb::Layer& l, LayerInfo* info) {
  const auto* b = l.options_as_DecoderBlock();
  const auto* ca = b->cross_attn();
  info->query_dim = static_cast<int32_t>(b->dim());
  info->key_dim = info->query_dim;
  info->value_dim = info->query_dim;
  info->output_dim = info->query_dim;
  info->num_heads = static_cast<int32_t>(ca->num_heads());  // the weights are the cross-attention's
  info->num_kv_heads = static_cast<int32_t>(ca->num_kv_heads() != 0 ? ca->num_kv_heads() : ca->num_heads());
  info->cross = 1;   // key = the memory
  // The layer's masks are the memory's (kv_valid_len, key padding); its
  // self-attention is causal by kind, not by this flag.
  info->causal = 0;
  info->query_quant = quant_of(b->norm_first() ? b->norm1()->input() : b->self_attn()->q_proj()->input());
  info->key_quant = quant_of(ca->k_proj()->input());
  info->value_quant = quant_of(ca->v_proj()->input());
  if (b->norm_first()) {
    info->output_quant = quant_of(b->add3() != nullptr ? b->add3()->output() : nullptr);  // no adds in f32
  } else {
    info->output_quant = quant_of(b->norm3()->output());
  }
  if (l.dtype() == fb::DType::S8 && b->residual16()) {  // int16 rows in and out (zero point 0)
    info->input_dtype = info->output_dtype = EA_S16;
    if (!b->norm_first()) {
      info->query_quant = quant_of(b->add1()->a());
      info->output_quant = quant_of(b->norm3()->output16());
    }
  }
  LayerShape s = shape_with(l, shape);
  s.dtype = info->dtype;
  const DecoderLayout d = decoder_layout(s, 1, 1, static_cast<int>(l.max_q_len()), static_cast<int>(l.max_kv_len()));
  info->kv_cache = 1;
  info->kv_cache_bytes = static_cast<size_t>(d.cache - d.self_cache);
}

// The block's steps for `rows` query rows, given how to run each attention
// (attn(x, out, residual): out = residual + the attention of x).
template <typename SelfAttn, typename CrossAttn>
void run_steps(const fb::Model& model, const Call& c, const DecoderLayout& lay, int rows, SelfAttn self_attn,
               CrossAttn cross_attn) {
  const auto* b = c.layer->options_as_DecoderBlock();
  uint8_t* a = c.scratch + lay.a;
  uint8_t* o = c.scratch + lay.o;
  uint8_t* t = c.scratch + lay.t;
  uint8_t* hidden = c.scratch + lay.hidden;
  if (kWithInt16Stream && c.int8() && b->residual16()) {  // int16 x, the stream's rows int16 (see the top of this file)
    const Residual r1 = {b->add1(), c.query, true};
    if (b->norm_first()) {
      const Residual r2 = {b->add2(), o, true}, r3 = {b->add3(), t, true};
      NormStep(model, c, b->norm1(), c.query, a, nullptr).Alone(rows);
      self_attn(a, o, &r1);
      NormStep(model, c, b->norm2(), o, a, nullptr).Alone(rows);
      cross_attn(a, t, &r2);
      NormStep(model, c, b->norm3(), t, a, nullptr).Alone(rows);
      run_ffn(model, c, b->ffn(), rows, a, hidden, c.output, &r3);
    } else {
      const Residual r2 = {b->add2(), o, true}, r3 = {b->add3(), t, true};
      NarrowStep(b->input_requant(), b->self_attn()->q_proj()->input(), static_cast<int>(b->dim()), c.query, a)
          .Alone(rows);
      self_attn(a, o, &r1);
      NormStep(model, c, b->norm1(), o, a, o).Alone(rows);
      cross_attn(a, t, &r2);
      NormStep(model, c, b->norm2(), t, a, t).Alone(rows);
      run_ffn(model, c, b->ffn(), rows, a, hidden, c.output, &r3);
      NormStep(model, c, b->norm3(), c.output, nullptr, c.output).Alone(rows);
    }
    return;
  }
  if (b->norm_first()) {
    run_layernorm(model, c, b->norm1(), rows, c.query, a);
    const Residual r1 = {b->add1(), c.query}, r2 = {b->add2(), o}, r3 = {b->add3(), t};
    self_attn(a, o, &r1);
    run_layernorm(model, c, b->norm2(), rows, o, a);
    cross_attn(a, t, &r2);
    run_layernorm(model, c, b->norm3(), rows, t, o);
    run_ffn(model, c, b->ffn(), rows, o, hidden, c.output, &r3);
  } else {
    const Residual r1 = {b->add1(), c.query}, r2 = {b->add2(), a}, r3 = {b->add3(), a};
    self_attn(c.query, o, &r1);
    run_layernorm(model, c, b->norm1(), rows, o, a);
    cross_attn(a, t, &r2);
    run_layernorm(model, c, b->norm2(), rows, t, a);
    run_ffn(model, c, b->ffn(), rows, a, hidden, o, &r3);
    run_layernorm(model, c, b->norm3(), rows, o, c.output);
  }
}

// A cross-attention call over the memory (c.key / c.value or the cached
// projections) writing `out`; attention weights are the block's.
Call cross_call(const Call& c, const DecoderLayout& lay, int rows, const void* q, void* out) {
  Call x = c;
  x.q_len = rows;
  x.query = q;
  x.output = out;
  x.cache = c.cache + lay.cross_cache;
  x.scratch = c.scratch + lay.region;
  return x;
}

// A full run (prefill) in five pool calls besides the memory's K and V
// projections (run_chain): norm1 (pre-norm) with the self-attention's Q, K
// and V of row tiles; its attention core; every step up to the
// cross-attention's Q projection, row tile by row tile; the cross-attention
// core; every step after it. The cross-attention's context goes to `t`,
// free while it runs (the FFN's rows in `region` would overwrite the MHA's
// own context rows that other tasks still read).
void run(const fb::Model& model, const Call& c, int max_kv_len) {
  const auto* b = c.layer->options_as_DecoderBlock();
  const LayerShape s = shape_with(*c.layer, shape);
  const DecoderLayout lay = decoder_layout(s, c.q_len, c.kv_len, c.max_q_len, max_kv_len);
  uint8_t* a = c.scratch + lay.a;
  uint8_t* o = c.scratch + lay.o;
  uint8_t* t = c.scratch + lay.t;
  uint8_t* hidden = c.scratch + lay.hidden;
  const int rows = c.q_len;
  const bool pre = b->norm_first();
  const auto* sa = b->self_attn();
  const auto* ca = b->cross_attn();
  Call self = c;  // causal self-attention over the query rows, K and V into the self cache (prefill)
  self.query = self.key = self.value = pre || s.residual16 ? a : c.query;
  self.kv_len = self.kv_valid_len = c.q_len;
  self.keys_cached = false;
  self.weights = nullptr;
  self.cache = c.cache + lay.self_cache;
  self.scratch = c.scratch + lay.region;
  const MhaBuffers sb = mha_buffers(sa, self, c.max_q_len);
  const Call cross = cross_call(c, lay, rows, a, t);
  MhaBuffers xb = mha_buffers(ca, cross, max_kv_len);
  xb.ctx = t;
  const int unit = kernels::kLinearRowUnit;
  const fb::FeedForward* ffn = b->ffn();
  if (kWithInt16Stream && s.residual16) {
    // The int16 stream: every row a chain step writes as int16 is a buffer
    // no later tile reads as int8 (the cross-attention's output goes to `a`,
    // whose int8 rows the Q projection read in the chain before; norm3 /
    // norm2 write their int8 rows over the context rows just read).
    const Residual r1 = {b->add1(), c.query, true};
    if (pre) {
      run_chain(c, rows, unit, NormStep(model, c, b->norm1(), c.query, a, nullptr),
                mha_qkv_step(model, sa, c, a, sb));
    } else {
      run_chain(c, rows, unit, NarrowStep(b->input_requant(), sa->q_proj()->input(), static_cast<int>(b->dim()),
                                          c.query, a),
                mha_qkv_step(model, sa, c, a, sb));
    }
    mha_attend(sa, self, sb);
    mha_project_keys(model, ca, cross, xb);
    const Residual r2 = {b->add2(), o, true}, r3 = {b->add3(), a, true};
    run_chain(c, rows, unit, LinearStep(model, c, sa->out_proj(), sb.ctx, o, &r1),
              NormStep(model, c, pre ? b->norm2() : b->norm1(), o, a, pre ? nullptr : o),
              LinearStep(model, c, ca->q_proj(), a, xb.q));
    mha_attend(ca, cross, xb);
    if (pre) {
      run_chain(c, rows, unit, LinearStep(model, c, ca->out_proj(), t, a, &r2),
                NormStep(model, c, b->norm3(), a, t, nullptr), EA_FFN_STEP(LinearStep(model, c, ffn->fc1(), t, hidden)),
                TableStep(c, ffn, hidden), EA_FFN_STEP(LinearStep(model, c, ffn->fc2(), hidden, c.output, &r3)));
    } else {
      run_chain(c, rows, unit, LinearStep(model, c, ca->out_proj(), t, a, &r2),
                NormStep(model, c, b->norm2(), a, t, a), EA_FFN_STEP(LinearStep(model, c, ffn->fc1(), t, hidden)),
                TableStep(c, ffn, hidden), EA_FFN_STEP(LinearStep(model, c, ffn->fc2(), hidden, c.output, &r3)),
                NormStep(model, c, b->norm3(), c.output, nullptr, c.output));
    }
    return;
  }
  if (pre) {
    run_chain(c, rows, unit, NormStep(model, c, b->norm1(), c.query, a), mha_qkv_step(model, sa, c, a, sb));
  } else {
    run_chain(c, rows, unit, mha_qkv_step(model, sa, c, c.query, sb));
  }
  mha_attend(sa, self, sb);
  mha_project_keys(model, ca, cross, xb);
  const Residual r1 = {b->add1(), c.query};
  if (pre) {
    const Residual r2 = {b->add2(), o}, r3 = {b->add3(), a};
    run_chain(c, rows, unit, LinearStep(model, c, sa->out_proj(), sb.ctx, o, &r1), NormStep(model, c, b->norm2(), o, a),
              LinearStep(model, c, ca->q_proj(), a, xb.q));
    mha_attend(ca, cross, xb);
    run_chain(c, rows, unit, LinearStep(model, c, ca->out_proj(), t, a, &r2), NormStep(model, c, b->norm3(), a, o),
              EA_FFN_STEP(LinearStep(model, c, ffn->fc1(), o, hidden)), TableStep(c, ffn, hidden),
              EA_FFN_STEP(LinearStep(model, c, ffn->fc2(), hidden, c.output, &r3)));
  } else {
    const Residual r2 = {b->add2(), a}, r3 = {b->add3(), a};
    run_chain(c, rows, unit, LinearStep(model, c, sa->out_proj(), sb.ctx, o, &r1), NormStep(model, c, b->norm1(), o, a),
              LinearStep(model, c, ca->q_proj(), a, xb.q));
    mha_attend(ca, cross, xb);
    run_chain(c, rows, unit, LinearStep(model, c, ca->out_proj(), t, o, &r2), NormStep(model, c, b->norm2(), o, a),
              EA_FFN_STEP(LinearStep(model, c, ffn->fc1(), a, hidden)), TableStep(c, ffn, hidden),
              EA_FFN_STEP(LinearStep(model, c, ffn->fc2(), hidden, o, &r3)),
              NormStep(model, c, b->norm3(), o, c.output));
  }
}

void cache_keys(const fb::Model& model, const Call& c, int max_kv_len) {
  const auto* b = c.layer->options_as_DecoderBlock();
  const DecoderLayout lay = decoder_layout(shape_with(*c.layer, shape), 1, c.kv_len, c.max_q_len, max_kv_len);
  Call x = c;
  x.cache = c.cache + lay.cross_cache;
  cache_keys_mha(model, b->cross_attn(), x, max_kv_len);
}

// One token: c.query [1][dim] at self position `position`; the memory's
// projections come from the cache (CacheKeys or an uncached run), c.kv_len
// / c.kv_valid_len its length.
void step(const fb::Model& model, const Call& c, int max_kv_len, int position) {
  const auto* b = c.layer->options_as_DecoderBlock();
  const DecoderLayout lay = decoder_layout(shape_with(*c.layer, shape), 1, c.kv_len, c.max_q_len, max_kv_len);
  auto self_attn = [&](const void* x, void* out, const Residual* r) {
    Call m = c;
    m.query = x;
    m.output = out;
    m.weights = nullptr;
    m.cache = c.cache + lay.self_cache;
    m.scratch = c.scratch + lay.region;
    step_mha(model, b->self_attn(), m, c.max_q_len, position, r);
  };
  auto cross_attn = [&](const void* q, void* out, const Residual* r) {
    Call x = cross_call(c, lay, 1, q, out);
    x.keys_cached = true;
    run_mha(model, b->cross_attn(), x, max_kv_len, r);
  };
  run_steps(model, c, lay, 1, self_attn, cross_attn);
}

bool has_key_cache(const LayerShape&) { return true; }
bool has_kv_cache(const LayerShape&) { return true; }

int linears(const fb::Layer& l, const fb::Linear* out[kMaxLayerLinears]) {
  const auto* b = l.options_as_DecoderBlock();
  const auto* m = b->self_attn();
  const auto* x = b->cross_attn();
  out[0] = m->q_proj(); out[1] = m->k_proj(); out[2] = m->v_proj(); out[3] = m->out_proj();
  out[4] = x->q_proj(); out[5] = x->k_proj(); out[6] = x->v_proj(); out[7] = x->out_proj();
  out[8] = b->ffn()->fc1(); out[9] = b->ffn()->fc2();
  return 10;
}

// The kind's traits, by name (the rest keep LayerKindModule's defaults).
constexpr LayerKindModule module() {
  LayerKindModule m = kind_identity(EA_LAYER_DECODER_BLOCK);
  m.verify = verify;
  m.shape = shape;
  m.info = info;
  m.plan = plan;
  m.run = run;
  m.cache_keys = cache_keys;
  m.has_key_cache = has_key_cache;
  m.linears = linears;
  m.has_kv_cache = has_kv_cache;
  m.step = step;
  m.kv_positions_on_q_len = true;
  return m;
}

}  // namespace

namespace layers {
const LayerKindModule kind_decoder_block = module();
}  // namespace layers

}  // namespace edgeattn
