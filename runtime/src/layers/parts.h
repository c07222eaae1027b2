// The pieces one layer kind lends to another: a transformer block is a
// multi-head attention, two LayerNorms, a feed-forward network and two
// residual adds, each verified, planned and run by its own kind's module
// (mha.cc, layernorm.cc, ffn.cc) on the block's sub-tables.
#ifndef EDGEATTN_RUNTIME_LAYERS_PARTS_H_
#define EDGEATTN_RUNTIME_LAYERS_PARTS_H_

#include "../checker.h"
#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/plan.h"
#include "exec.h"

namespace edgeattn {

// Multi-head attention (mha.cc) on a MultiHeadAttention table.
bool verify_mha(Checker& c, const fb::MultiHeadAttention* m, bool s8);
void mha_shape(const fb::MultiHeadAttention& m, LayerShape* s);
LayerPlan plan_mha(const LayerShape& s, int q_len, int kv_len);
void run_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len);
// Cross-attention: project c.key / c.value into c.cache (laid out for max_kv_len).
void cache_keys_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len);
// KV-cache self-attention: one query row at `position` of c.cache (laid out
// for max_kv_len positions), attending over positions 0..position.
void step_mha(const fb::Model& model, const fb::MultiHeadAttention* m, const Call& c, int max_kv_len,
              int position);

// Each runs c.s8's dtype on c.pool (rows, or the linears' tiles).
// LayerNorm (layernorm.cc): `rows` rows of `dim`, y may be x.
bool verify_layernorm(Checker& c, const fb::LayerNorm* n, bool s8, uint32_t dim, const char* what);
void run_layernorm(const fb::Model& model, const Call& c, const fb::LayerNorm* n, int rows, const void* x,
                   void* y);

// Feed-forward (ffn.cc): y = fc2(act(fc1(x))) with the hidden rows in
// `hidden` (ffn_hidden_bytes); y must not overlap x or hidden.
bool verify_ffn(Checker& c, const fb::FeedForward* f, bool s8, uint32_t dim, const char* what);
uint64_t ffn_hidden_bytes(int hidden_dim, bool s8, int rows);
void run_ffn(const fb::Model& model, const Call& c, const fb::FeedForward* f, int rows, const void* x,
             void* hidden, void* y);

// Residual add (encoder_block.cc): y = a + b, y may be a or b.
bool verify_add(Checker& c, const fb::ResidualAdd* a, const fb::ActQuant* in_a,
                const fb::ActQuant* in_b, const char* what);
void run_add(const Call& c, const fb::ResidualAdd* a, int rows, int n, const void* x, const void* b, void* y);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_LAYERS_PARTS_H_
