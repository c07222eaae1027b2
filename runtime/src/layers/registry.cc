// The table of layer kinds: the one place that lists them. Adding a kind is
// one module file (see layer_kind.h) plus one line here. A build may leave
// kinds out (CMake EA_LAYER_KINDS, e.g. "mha;additive" for firmware that runs
// only those): their modules are then never referenced, so --gc-sections
// drops them, and a model using one is refused at load with EA_UNSUPPORTED.
#include "layer_kind.h"

#ifndef EA_LAYER_KIND_MHA
#define EA_LAYER_KIND_MHA 1
#endif
#ifndef EA_LAYER_KIND_ADDITIVE
#define EA_LAYER_KIND_ADDITIVE 1
#endif
#ifndef EA_LAYER_KIND_LUONG
#define EA_LAYER_KIND_LUONG 1
#endif
#ifndef EA_LAYER_KIND_POOLING
#define EA_LAYER_KIND_POOLING 1
#endif
#ifndef EA_LAYER_KIND_LAYERNORM
#define EA_LAYER_KIND_LAYERNORM 1
#endif
#ifndef EA_LAYER_KIND_FFN
#define EA_LAYER_KIND_FFN 1
#endif
#ifndef EA_LAYER_KIND_ENCODER_BLOCK
#define EA_LAYER_KIND_ENCODER_BLOCK 1
#endif
#ifndef EA_LAYER_KIND_DECODER_BLOCK
#define EA_LAYER_KIND_DECODER_BLOCK 1
#endif
#ifndef EA_LAYER_KIND_LINEAR
#define EA_LAYER_KIND_LINEAR 1
#endif

namespace edgeattn {
namespace {

const LayerKindModule* const kKinds[] = {
#if EA_LAYER_KIND_MHA
    &layers::kMultiHeadAttention,
#endif
#if EA_LAYER_KIND_ADDITIVE
    &layers::kAdditive,
#endif
#if EA_LAYER_KIND_LUONG
    &layers::kLuong,
#endif
#if EA_LAYER_KIND_POOLING
    &layers::kPooling,
#endif
#if EA_LAYER_KIND_LAYERNORM
    &layers::kLayerNorm,
#endif
#if EA_LAYER_KIND_FFN
    &layers::kFeedForward,
#endif
#if EA_LAYER_KIND_ENCODER_BLOCK
    &layers::kEncoderBlock,
#endif
#if EA_LAYER_KIND_DECODER_BLOCK
    &layers::kDecoderBlock,
#endif
#if EA_LAYER_KIND_LINEAR
    &layers::kLinear,
#endif
    nullptr,  // keeps the array non-empty
};

}  // namespace

bool layer_kind_left_out(fb::LayerOptions options) {
  return options >= fb::LayerOptions::MIN && options <= fb::LayerOptions::MAX &&
         options != fb::LayerOptions::NONE && find_layer_kind(options) == nullptr;
}

const char* layer_kind_option_name(fb::LayerOptions options) {
  switch (options) {
    case fb::LayerOptions::MultiHeadAttention: return "multi-head attention (mha)";
    case fb::LayerOptions::AdditiveAttention: return "additive attention (additive)";
    case fb::LayerOptions::LuongAttention: return "Luong attention (luong)";
    case fb::LayerOptions::AttentionPooling: return "attention pooling (pooling)";
    case fb::LayerOptions::LayerNorm: return "LayerNorm (layernorm)";
    case fb::LayerOptions::FeedForward: return "feed-forward (ffn)";
    case fb::LayerOptions::EncoderBlock: return "encoder block (encoder_block)";
    case fb::LayerOptions::DecoderBlock: return "decoder block (decoder_block)";
    case fb::LayerOptions::Linear: return "projection (linear)";
    default: return "unknown";
  }
}

const LayerKindModule* find_layer_kind(fb::LayerOptions options) {
  for (const LayerKindModule* m : kKinds) {
    if (m != nullptr && m->options == options) return m;
  }
  return nullptr;
}

const LayerKindModule* find_layer_kind(int kind) {
  for (const LayerKindModule* m : kKinds) {
    if (m != nullptr && m->kind == kind) return m;
  }
  return nullptr;
}

}  // namespace edgeattn
