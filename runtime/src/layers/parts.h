// The pieces one layer kind lends to another: a transformer block is a
// multi-head attention, two LayerNorms, a feed-forward network and two
// residual adds, each verified, planned and run by its own kind's module
// (mha.cc, layernorm.cc, ffn.cc) on the block's sub-tables.
#ifndef EDGEATTN_RUNTIME_LAYERS_PARTS_H_
#define EDGEATTN_RUNTIME_LAYERS_PARTS_H_

#include "../checker.h"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/plan.h"
#include "edgeattn/kernels/dispatch.h"
#include "exec.h"

namespace edgeattn {

// Multi-head attention (mha.cc) on a MultiHeadAttention table.
bool verify_mha(Checker& c, const fb::MultiHeadAttention* m, bool s8);
void mha_shape(const fb::MultiHeadAttention& m, LayerShape* s);
LayerPlan plan_mha(const LayerShape& s, int q_len, int kv_len);
// With a block's residual r, c.output = r->x + the attention (out_proj's epilogue).
void run_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len,
             const Residual* r = nullptr);
// Cross-attention: project c.key / c.value into c.cache (laid out for max_kv_len).
void cache_keys_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len);
// KV-cache self-attention: one query row at `position` of c.cache (laid out
// for max_kv_len positions), attending over positions 0..position.
void step_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len,
              int position, const Residual* r = nullptr);

// The phases of run_mha, for a block that chains its own row-wise steps
// around them (run_chain): the buffers of run_mha's layout (K and V in the
// cache, laid out for max_kv_len, when the table caches them), the Q, K and
// V projections of x as one chain step (self-attention), the K and V
// projections of c.key / c.value (c.kv_len rows; none when c.keys_cached),
// and the attention core (heads x row ranges on the pool) into b.ctx, which
// a block may point at a row buffer of its own. The out projection is then
// LinearStep(out_proj, b.ctx, ...), and a cross-attention's Q projection
// LinearStep(q_proj, ..., b.q).
struct MhaBuffers {
  uint8_t* q;
  uint8_t* ctx;
  uint8_t* k;
  uint8_t* v;
  uint8_t* row;  // row scratch
  uint8_t* zero;  // output16: out_proj's zero residual row [E] int16, else null
};
MhaBuffers mha_buffers(const fb::MultiHeadAttention* m, const Call& c, int max_kv_len);
LinearStep mha_qkv_step(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, const void* x,
                        const MhaBuffers& b);
void mha_project_keys(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, const MhaBuffers& b);
void mha_attend(const fb::MultiHeadAttention* m, const Call& c, const MhaBuffers& b);

// Each runs c.s8's dtype on c.pool (rows, or the linears' tiles).
// LayerNorm (layernorm.cc): `rows` rows of `dim`, y may be x.
bool verify_layernorm(Checker& c, const fb::LayerNorm* n, bool s8, uint32_t dim, const char* what);
void run_layernorm(const fb::Model& model, const Call& c, const fb::LayerNorm* n, int rows, const void* x,
                   void* y);

// A LayerNorm as a chain step (run_chain).
class NormStep {
 public:
  NormStep(const fb::Model& model, const Call& c, const fb::LayerNorm* n, const void* x, void* y);
  // A LayerNorm of the 16-bit stream (n->input16(): contract 4b) writing the
  // int8 rows y8 and/or the int16 rows y16 (null: not that one).
  NormStep(const fb::Model& model, const Call& c, const fb::LayerNorm* n, const void* x, void* y8, void* y16);
  uint64_t work_per_row;
  void Prepare() {}
  void Rows(int r0, int r1, int) const;
  void Alone(int rows) const;

 private:
  const fb::Model& model_;
  const Call& c_;
  const fb::LayerNorm* n_;
  const void* x_;
  void* y_;
  void* y16_;
};

// Feed-forward (ffn.cc): y = fc2(act(fc1(x))) with the hidden rows in
// `hidden` (ffn_hidden_bytes); y must not overlap x or hidden.
bool verify_ffn(Checker& c, const fb::FeedForward* f, bool s8, uint32_t dim, const char* what);
uint64_t ffn_hidden_bytes(int hidden_dim, bool s8, int rows);
// With a block's residual r: y = r->x + ffn(x) (fc2's epilogue).
void run_ffn(const fb::Model& model, const Call& c, const fb::FeedForward* f, int rows, const void* x,
             void* hidden, void* y, const Residual* r = nullptr);

// The FFN's activation (in place on the hidden rows) as a chain step:
// fc1, this, fc2 (LinearStep) are run_ffn's chain.
class TableStep {
 public:
  TableStep(const Call& c, const fb::FeedForward* f, void* hidden);
  uint64_t work_per_row;
  void Prepare() {}
  void Rows(int r0, int r1, int) const;
  void Alone(int rows) const;

 private:
  const Call& c_;
  const fb::FeedForward* f_;
  void* hidden_;
};

// A post-norm block on the 16-bit stream: its int16 input rows narrowed to
// the attention's int8 input, requantize_s8 (contract 1) of each value with
// the block's input_requant, as a chain step (qs16_narrow).
class NarrowStep {
 public:
  NarrowStep(const fb::Requant* rq, const fb::ActQuant* to, int dim, const void* x, void* y)
      : work_per_row(static_cast<uint64_t>(dim)), dim_(dim), x_(static_cast<const int16_t*>(x)),
        y_(static_cast<int8_t*>(y)), mult_(rq->multiplier()->Get(0)), shift_(rq->shift()->Get(0)),
        zp_(to->zero_point()) {}
  uint64_t work_per_row;
  void Prepare() {}
  void Rows(int r0, int r1, int) const {
    const size_t begin = static_cast<size_t>(r0) * static_cast<size_t>(dim_);
    kernels::qs16_narrow_kernel()(static_cast<size_t>(r1 - r0) * static_cast<size_t>(dim_), x_ + begin, mult_, shift_,
                                  zp_, y_ + begin);
  }
  void Alone(int rows) const { Rows(0, rows, 0); }

 private:
  int dim_;
  const int16_t* x_;
  int8_t* y_;
  int32_t mult_, shift_, zp_;
};

// y = x + r over rows of `dim` (kind add, and a block's branch_norm adds):
// int8 by requant.h's add contract with `add`'s parameters (qs8_add); with
// add->residual16() r and y are int16 (the add16 contract, qs8_add16);
// float: one add per element. y may be x or r (each element is read before
// it is written).
class AddStep {
 public:
  AddStep(const Call& c, const fb::Add* add, int dim, const void* x, const void* r, void* y)
      : work_per_row(static_cast<uint64_t>(dim)), s8_(c.int8()), dim_(dim), x_(x), r_(r), y_(y) {
    if (s8_) {
      s16_ = kWithInt16Stream && add->residual16();
      p_.zp_x = add->input()->zero_point();
      p_.a = add->input_multiplier();
      p_.zp_r = add->residual()->zero_point();
      p_.b = add->residual_multiplier();
      p_.shift = add->shift();
      p_.zp_y = add->output()->zero_point();
    }
  }
  uint64_t work_per_row;
  void Prepare() {}
  void Rows(int r0, int r1, int) const {
    const size_t begin = static_cast<size_t>(r0) * static_cast<size_t>(dim_);
    const size_t n = static_cast<size_t>(r1 - r0) * static_cast<size_t>(dim_);
    if (kWithInt16Stream && s16_) {  // (the constant lets a build without the stream drop qs8_add16)
      kernels::qs8_add16_kernel()(n, static_cast<const int8_t*>(x_) + begin, static_cast<const int16_t*>(r_) + begin,
                                  p_, static_cast<int16_t*>(y_) + begin);
    } else if (s8_) {
      kernels::qs8_add_kernel()(n, static_cast<const int8_t*>(x_) + begin, static_cast<const int8_t*>(r_) + begin, p_,
                                static_cast<int8_t*>(y_) + begin);
    } else {
      const float* x = static_cast<const float*>(x_);
      const float* r = static_cast<const float*>(r_);
      float* y = static_cast<float*>(y_);
      for (size_t i = begin; i < begin + n; ++i) y[i] = x[i] + r[i];
    }
  }
  void Alone(int rows) const { Rows(0, rows, 0); }

 private:
  bool s8_, s16_ = false;
  int dim_;
  const void* x_;
  const void* r_;
  void* y_;
  kernels::QS8AddParams p_{0, 0, 0, 0, 1, 0};
};

// An Add table (kind add, a block's branch_add1 / 2): its three
// quantizations, A and B in [0, 2^21), the shift in 1..16; with
// residual16 (the add16 contract) the residual and output int16 with zero
// point 0 and the shift in 1..30.
bool verify_add_table(Checker& c, const fb::Add* a, const char* what);

// A block's residual add (encoder_block.cc), run in the epilogue of the
// Linear `from` that computes its b (requant.h contract 5b): the add's
// residual input quantized as `in_a`, from's output quantization the add's
// output, the multiplier and shift in range.
bool verify_add(Checker& c, const fb::ResidualAdd* a, const fb::ActQuant* in_a, const fb::Linear* from,
                const char* what);
// The same add on the 16-bit residual stream (requant.h contract 5c): the
// residual, the output and from's output int16 with zero point 0.
bool verify_add16(Checker& c, const fb::ResidualAdd* a, const fb::ActQuant* in_a, const fb::Linear* from,
                  const char* what);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_LAYERS_PARTS_H_
