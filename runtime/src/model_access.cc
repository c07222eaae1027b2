#include "model_access.h"

#include <cmath>

namespace edgeattn {
namespace {

ea_quant quant_of(const fb::ActQuant* q) {
  ea_quant out = {0.0f, 0};
  if (q != nullptr) {
    out.scale = q->scale();
    out.zero_point = q->zero_point();
  }
  return out;
}

}  // namespace

LayerShape layer_shape(const fb::Layer& layer) {
  LayerShape s = {};
  s.dtype = layer.dtype() == fb::DType::S8 ? EA_S8 : EA_F32;
  switch (layer.options_type()) {
    case fb::LayerOptions::MultiHeadAttention: {
      const auto* m = layer.options_as_MultiHeadAttention();
      s.kind = EA_LAYER_MULTI_HEAD_ATTENTION;
      s.embed_dim = static_cast<int>(m->embed_dim());
      s.cross = m->cross();
      s.head_dim = static_cast<int>(m->head_dim());
      s.v_dim = s.head_dim;
      break;
    }
    case fb::LayerOptions::AdditiveAttention:
      s.kind = EA_LAYER_ADDITIVE;
      s.attn_dim = static_cast<int>(layer.options_as_AdditiveAttention()->attn_dim());
      break;
    case fb::LayerOptions::LuongAttention: {
      const auto* g = layer.options_as_LuongAttention();
      s.kind = EA_LAYER_LUONG;
      s.key_dim = static_cast<int>(g->key_dim());
      s.projects_query = g->score() == fb::LuongScore::General;
      s.head_dim = s.key_dim;
      s.v_dim = static_cast<int>(g->value_dim());
      break;
    }
    default:
      s.kind = EA_LAYER_POOLING;
      if (const auto* p = layer.options_as_AttentionPooling()) {
        s.head_dim = static_cast<int>(p->dim());
        s.v_dim = s.head_dim;
      }
      break;
  }
  return s;
}

LayerInfo layer_info(const fb::Layer& layer) {
  LayerInfo info = {};
  info.name = layer.name()->c_str();
  info.dtype = layer.dtype() == fb::DType::S8 ? EA_S8 : EA_F32;
  info.max_q_len = static_cast<int32_t>(layer.max_q_len());
  info.max_kv_len = static_cast<int32_t>(layer.max_kv_len());
  info.arena_bytes = static_cast<size_t>(layer.arena_bytes());
  info.num_heads = 1;
  switch (layer.options_type()) {
    case fb::LayerOptions::MultiHeadAttention: {
      const auto* m = layer.options_as_MultiHeadAttention();
      info.kind = EA_LAYER_MULTI_HEAD_ATTENTION;
      info.query_dim = static_cast<int32_t>(m->embed_dim());
      info.key_dim = static_cast<int32_t>(m->kdim());
      info.value_dim = static_cast<int32_t>(m->vdim());
      info.output_dim = static_cast<int32_t>(m->embed_dim());
      info.num_heads = static_cast<int32_t>(m->num_heads());
      info.cross = m->cross();
      info.causal = m->causal();
      info.query_quant = quant_of(m->q_proj()->input());
      info.key_quant = quant_of(m->k_proj()->input());
      info.value_quant = quant_of(m->v_proj()->input());
      info.output_quant = quant_of(m->out_proj()->output());
      break;
    }
    case fb::LayerOptions::AdditiveAttention: {
      const auto* a = layer.options_as_AdditiveAttention();
      info.kind = EA_LAYER_ADDITIVE;
      info.query_dim = static_cast<int32_t>(a->query_dim());
      info.key_dim = static_cast<int32_t>(a->key_dim());
      info.value_dim = static_cast<int32_t>(a->value_dim());
      info.output_dim = info.value_dim;
      info.cross = 1;
      info.query_quant = quant_of(a->w_q()->input());
      info.key_quant = quant_of(a->w_k()->input());
      info.value_quant = quant_of(a->value_input());
      info.output_quant = quant_of(a->output());
      break;
    }
    case fb::LayerOptions::LuongAttention: {
      const auto* g = layer.options_as_LuongAttention();
      info.kind = EA_LAYER_LUONG;
      info.query_dim = static_cast<int32_t>(g->query_dim());
      info.key_dim = static_cast<int32_t>(g->key_dim());
      info.value_dim = static_cast<int32_t>(g->value_dim());
      info.output_dim = info.value_dim;
      info.cross = 1;
      info.query_quant = quant_of(g->query_input());
      info.key_quant = quant_of(g->key_input());
      info.value_quant = quant_of(g->value_input());
      info.output_quant = quant_of(g->output());
      break;
    }
    default: {
      const auto* p = layer.options_as_AttentionPooling();
      info.kind = EA_LAYER_POOLING;
      info.key_dim = static_cast<int32_t>(p->dim());
      info.value_dim = info.key_dim;
      info.output_dim = info.key_dim;
      info.cross = 1;
      info.max_q_len = 1;
      info.key_quant = quant_of(p->input());
      info.value_quant = info.key_quant;
      info.output_quant = quant_of(p->output());
      break;
    }
  }
  return info;
}

}  // namespace edgeattn
