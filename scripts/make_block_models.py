#!/usr/bin/python3
"""Export models/encoder_block: transformer-block layers for edgeattn's block kinds.

    /usr/bin/python3 scripts/make_block_models.py

Seeded and deterministic (torch 1.13, numpy; one thread). The layers are
randomly initialised (LayerNorm gains and biases perturbed so that they
matter), not trained: they exercise every block layout and naming scheme the
converter's presets know, with PyTorch's own modules as the reference:

    pre     nn.TransformerEncoderLayer(norm_first=True, activation="gelu"), key padding  (preset torch)
    post    nn.TransformerEncoderLayer() (post-norm, ReLU), key padding                    (preset torch)
    vit     a timm/SVTR-style block: norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2, eps 1e-6 (preset vit)
    custom  ln1, sa (nn.MultiheadAttention), ln2, ff.0 / ff.2 with tanh GELU, causal     (tensors by name)
    norm    a standalone nn.LayerNorm                                                     (kind layernorm)
    mlp     nn.Sequential(Linear, SiLU, Linear)                                           (kind ffn, preset sequential)
    dec_pre   nn.TransformerDecoderLayer(norm_first=True, activation="gelu"), memory padding (kind decoder_block)
    dec_post  nn.TransformerDecoderLayer() (post-norm, ReLU), memory padding                 (kind decoder_block)
    head      nn.Linear(64, 20), an output head (20 channels: a ragged 16-channel block)     (kind linear)

The decoder layers (12 target rows over 16 memory rows; .key is the memory,
.attn_weights the cross-attention's per head) and the head draw from
generators of their own, so the earlier layers' data do not depend on them.

Writes weights.safetensors, spec.json, calib.npz (16 samples) and
reference.npz (16 held-out samples with PyTorch's float64 outputs and the
attention weights per head).

Also writes the bundled transformer's decoder layer as a decoder_block
"decoder", the layernorm "dec_norm" after it and the output head as the
linear "head" (models/transformer/decoder_block.spec.json,
decoder_block.{calib,reference}.npz: x = target embedding + position of the
teacher-forced decoder input, the memory = the PyTorch encoder's output, the
head's input = dec_norm's output).

Also writes the bundled transformer's encoder as block kinds, from its
trained weights (models/transformer/weights.safetensors, no training):
models/transformer/encoder_block.spec.json (an encoder_block "encoder" and
the layernorm "enc_norm" after it) and encoder_block.{calib,reference}.npz
(the block's input x = token + position embedding of the same calibration and
held-out sources as calib.npz / reference.npz). edgeattn-greedy-decode
--encoder runs the encoder from that conversion.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_models as tm  # noqa: E402
from train_models import save_npz, write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models", "encoder_block")
D, H, FF, L = 64, 4, 256, 16
N_CALIB, N_REF = 16, 16
torch.set_num_threads(1)
torch.manual_seed(2026)
np.random.seed(2026)


def perturb_norms(module):
    for m in module.modules():
        if isinstance(m, nn.LayerNorm):
            with torch.no_grad():
                m.weight.copy_(1.0 + 0.25 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))


class VitBlock(nn.Module):
    """timm's Block layout (attention without dropout), LayerNorm eps 1e-6."""

    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D, eps=1e-6)
        self.attn = nn.Module()
        self.attn.qkv = nn.Linear(D, 3 * D)
        self.attn.proj = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D, eps=1e-6)
        self.mlp = nn.Module()
        self.mlp.fc1 = nn.Linear(D, FF)
        self.mlp.fc2 = nn.Linear(FF, D)

    def attention(self, x):
        n, l, _ = x.shape
        qkv = self.attn.qkv(x).reshape(n, l, 3, H, D // H).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = (q @ k.transpose(-2, -1) * (D // H) ** -0.5).softmax(-1)
        return self.attn.proj((a @ v).transpose(1, 2).reshape(n, l, D)), a

    def forward(self, x):
        o, a = self.attention(self.norm1(x))
        x = x + o
        return x + self.mlp.fc2(F.gelu(self.mlp.fc1(self.norm2(x)))), a


class CustomBlock(nn.Module):
    """Module names that fit no preset: mapped tensor by tensor in the spec."""

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.sa = nn.MultiheadAttention(D, H, batch_first=True)
        self.ln2 = nn.LayerNorm(D)
        self.ff = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(approximate="tanh"), nn.Linear(2 * D, D))

    def forward(self, x):
        causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
        h = self.ln1(x)
        o, a = self.sa(h, h, h, attn_mask=causal, need_weights=True, average_attn_weights=False)
        x = x + o
        return x + self.ff(self.ln2(x)), a


def torch_layer_weights(layer, x, kpm):
    """nn.TransformerEncoderLayer's attention weights per head (it does not return them)."""
    h = layer.norm1(x) if layer.norm_first else x
    _, a = layer.self_attn(h, h, h, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
    return a


LQ_DEC = 12  # decoder layers: target rows (the memory has L rows)


def make_decoders():
    """The decoder layers, from their own seed (the encoder layers' draws stay as they were)."""
    with torch.random.fork_rng():
        torch.manual_seed(2027)
        pre = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation="gelu", batch_first=True,
                                         norm_first=True)
        post = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True)
        perturb_norms(pre)
        perturb_norms(post)
    return {"dec_pre": pre, "dec_post": post}


N_HEAD_OUT = 20  # the linear layer's outputs: one full 16-channel block and a ragged one


def make_heads():
    """The standalone linear layer, from its own seed (added after the others, which stay as they were)."""
    with torch.random.fork_rng():
        torch.manual_seed(2029)
        head = nn.Linear(D, N_HEAD_OUT)
    return {"head": head}


def decoder_reference(m, x, mem, kpm):
    """nn.TransformerDecoderLayer's output and its cross-attention weights per head."""
    causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
    y = m(x, mem, tgt_mask=causal, memory_key_padding_mask=kpm)
    if m.norm_first:
        h = x + m.self_attn(*(3 * [m.norm1(x)]), attn_mask=causal, need_weights=False)[0]
        q = m.norm2(h)
    else:
        q = m.norm1(x + m.self_attn(x, x, x, attn_mask=causal, need_weights=False)[0])
    _, a = m.multihead_attn(q, mem, mem, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
    return y, a


def main():
    os.makedirs(OUT, exist_ok=True)
    pre = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    post = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
    vit, custom = VitBlock(), CustomBlock()
    norm = nn.LayerNorm(D)
    mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.SiLU(), nn.Linear(2 * D, D))
    modules = {"pre": pre, "post": post, "vit": vit, "custom": custom, "final_norm": norm, "mlp": mlp}
    decoders = make_decoders()
    modules.update(decoders)
    heads = make_heads()
    modules.update(heads)
    for name, m in modules.items():
        if name not in decoders and name not in heads:  # perturbed from their own seed (a head has no norm)
            perturb_norms(m)
        m.double()
        # train() with dropout 0: the same maths, and nn.TransformerEncoderLayer
        # then takes its plain path (eval's fast path zeroes padded rows).
        m.train()

    weights = {}
    for prefix, m in modules.items():
        for k, v in m.state_dict().items():
            weights[f"{prefix}.{k}"] = v.numpy().astype(np.float32)
    write_safetensors(os.path.join(OUT, "weights.safetensors"), weights)
    # PyTorch computes from the float32 weights the file holds.
    for prefix, m in modules.items():
        m.load_state_dict({k[len(prefix) + 1:]: torch.from_numpy(v.astype(np.float64))
                           for k, v in weights.items() if k.startswith(prefix + ".")})

    spec = {"model": "encoder_block", "layers": [
        {"name": "pre", "kind": "encoder_block", "preset": "torch", "prefix": "pre.", "embed_dim": D,
         "num_heads": H, "norm_first": True, "activation": "gelu", "mask": "key_padding", "max_q_len": L},
        {"name": "post", "kind": "encoder_block", "preset": "torch", "prefix": "post.", "embed_dim": D,
         "num_heads": H, "mask": "key_padding", "max_q_len": L},
        {"name": "vit", "kind": "encoder_block", "preset": "vit", "prefix": "vit.", "embed_dim": D,
         "num_heads": H, "max_q_len": L},
        {"name": "custom", "kind": "encoder_block", "embed_dim": D, "num_heads": H, "norm_first": True,
         "activation": "gelu_tanh", "mask": "causal", "max_q_len": L,
         "tensors": {"norm1_w": "custom.ln1.weight", "norm1_b": "custom.ln1.bias",
                     "qkv_w": "custom.sa.in_proj_weight", "qkv_b": "custom.sa.in_proj_bias",
                     "o_w": "custom.sa.out_proj.weight", "o_b": "custom.sa.out_proj.bias",
                     "norm2_w": "custom.ln2.weight", "norm2_b": "custom.ln2.bias",
                     "fc1_w": "custom.ff.0.weight", "fc1_b": "custom.ff.0.bias",
                     "fc2_w": "custom.ff.2.weight", "fc2_b": "custom.ff.2.bias"}},
        {"name": "final_norm", "kind": "layernorm", "prefix": "final_norm.", "dim": D, "max_q_len": L},
        {"name": "mlp", "kind": "ffn", "preset": "sequential", "prefix": "mlp.", "dim": D, "activation": "silu",
         "max_q_len": L},
        {"name": "dec_pre", "kind": "decoder_block", "preset": "torch", "prefix": "dec_pre.", "embed_dim": D,
         "num_heads": H, "norm_first": True, "activation": "gelu", "mask": "key_padding", "max_q_len": LQ_DEC,
         "max_kv_len": L},
        {"name": "dec_post", "kind": "decoder_block", "preset": "torch", "prefix": "dec_post.", "embed_dim": D,
         "num_heads": H, "mask": "key_padding", "max_q_len": LQ_DEC, "max_kv_len": L},
        {"name": "head", "kind": "linear", "prefix": "head.", "max_q_len": L},  # widths from head.weight
    ]}
    with open(os.path.join(OUT, "spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")

    dec_gen = torch.Generator().manual_seed(2028)
    dec_rng = np.random.default_rng(2028)
    head_gen = torch.Generator().manual_seed(2029)

    def export(n, with_ref):
        d = {}
        with torch.no_grad():
            for name, m in modules.items():
                if name in decoders or name in heads:
                    continue
                x = torch.randn(n, L, D, dtype=torch.float64) * 1.5 + 0.3 * torch.randn(1, 1, D, dtype=torch.float64)
                d[f"{name}.query"] = x.numpy().astype(np.float32)
                x = torch.from_numpy(d[f"{name}.query"].astype(np.float64))
                a = None
                if name in ("pre", "post"):
                    valid = np.random.randint(L // 2, L + 1, size=n).astype(np.int32)
                    kpm = torch.from_numpy(np.arange(L)[None, :] >= valid[:, None])
                    y = m(x, src_key_padding_mask=kpm)
                    a = torch_layer_weights(m, x, kpm)
                    d[f"{name}.kv_valid_len"] = valid
                elif name in ("vit", "custom"):
                    y, a = m(x)
                else:
                    y = m(x)
                if with_ref:
                    d[f"{name}.output"] = y.numpy().astype(np.float32)
                    if a is not None:
                        d[f"{name}.attn_weights"] = a.numpy().astype(np.float32)
            for name, m in decoders.items():
                x = torch.randn(n, LQ_DEC, D, dtype=torch.float64, generator=dec_gen) * 1.5
                mem = torch.randn(n, L, D, dtype=torch.float64, generator=dec_gen) * 1.2
                d[f"{name}.query"] = x.numpy().astype(np.float32)
                d[f"{name}.key"] = mem.numpy().astype(np.float32)
                x = torch.from_numpy(d[f"{name}.query"].astype(np.float64))
                mem = torch.from_numpy(d[f"{name}.key"].astype(np.float64))
                valid = dec_rng.integers(L // 2, L + 1, size=n).astype(np.int32)
                d[f"{name}.kv_valid_len"] = valid
                y, a = decoder_reference(m, x, mem, torch.from_numpy(np.arange(L)[None, :] >= valid[:, None]))
                if with_ref:
                    d[f"{name}.output"] = y.numpy().astype(np.float32)
                    d[f"{name}.attn_weights"] = a.numpy().astype(np.float32)
            for name, m in heads.items():
                x = torch.randn(n, L, D, dtype=torch.float64, generator=head_gen) * 1.5
                d[f"{name}.query"] = x.numpy().astype(np.float32)
                if with_ref:
                    y = m(torch.from_numpy(d[f"{name}.query"].astype(np.float64)))
                    d[f"{name}.output"] = y.numpy().astype(np.float32)
        return d

    save_npz(os.path.join(OUT, "calib.npz"), export(N_CALIB, False))
    save_npz(os.path.join(OUT, "reference.npz"), export(N_REF, True))
    print("wrote", OUT)


def transformer_encoder():
    """The trained transformer's encoder layer as an encoder_block + layernorm."""
    out = os.path.join(ROOT, "models", "transformer")
    model = tm.load_transformer().double()
    rng = np.random.default_rng(tm.SEED)   # the draws of train_models.main()
    held = tm.make_reversal_data(rng, 1000)
    train = tm.make_reversal_data(rng, 40000, exclude=tm.seq_keys(held[0], held[1]))
    erng = np.random.default_rng(tm.SEED + 100)
    calib_idx = np.sort(erng.choice(len(train[0]), tm.N_EXPORT, replace=False))
    ref_idx = np.arange(tm.N_EXPORT)
    enc = model.encoder
    for fname, data, idx, with_ref in [("encoder_block.calib.npz", train, calib_idx, False),
                                       ("encoder_block.reference.npz", held, ref_idx, True)]:
        src = torch.from_numpy(data[0][idx])
        lens = data[1][idx]
        with torch.no_grad():
            kpm = src == tm.PAD
            x = model.src_emb(src) + model.src_pos[: src.shape[1]]
            h = enc.norm1(x)
            att, w = enc.self_attn(h, h, h, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
            y = x + att
            y = y + enc.ff2(F.gelu(enc.ff1(enc.norm2(y))))
            memory = enc.norm_out(y)
            assert torch.allclose(memory, model.encode(src)[0], atol=1e-9)
        f32 = lambda t: t.numpy().astype(np.float32)
        d = {"encoder.query": f32(x), "encoder.kv_valid_len": np.asarray(lens, np.int32), "enc_norm.query": f32(y)}
        if with_ref:
            d.update({"encoder.output": f32(y), "encoder.attn_weights": f32(w), "enc_norm.output": f32(memory)})
        save_npz(os.path.join(out, fname), d)
    spec = {"model": "transformer_encoder", "layers": [
        {"name": "encoder", "kind": "encoder_block", "preset": "torch", "prefix": "encoder.",
         "embed_dim": tm.D_MODEL, "num_heads": tm.N_HEAD, "norm_first": True, "activation": "gelu",
         "mask": "key_padding", "max_q_len": tm.SRC_LEN,
         "tensors": {"fc1_w": "encoder.ff1.weight", "fc1_b": "encoder.ff1.bias",
                     "fc2_w": "encoder.ff2.weight", "fc2_b": "encoder.ff2.bias"}},
        {"name": "enc_norm", "kind": "layernorm", "prefix": "encoder.norm_out.", "dim": tm.D_MODEL,
         "max_q_len": tm.SRC_LEN}]}
    with open(os.path.join(out, "encoder_block.spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    print("wrote", out, "encoder_block.*")


def transformer_decoder():
    """The trained transformer's decoder layer as a decoder_block + layernorm, its head as a linear."""
    out = os.path.join(ROOT, "models", "transformer")
    model = tm.load_transformer().double()
    rng = np.random.default_rng(tm.SEED)   # the draws of train_models.main()
    held = tm.make_reversal_data(rng, 1000)
    train = tm.make_reversal_data(rng, 40000, exclude=tm.seq_keys(held[0], held[1]))
    erng = np.random.default_rng(tm.SEED + 100)
    calib_idx = np.sort(erng.choice(len(train[0]), tm.N_EXPORT, replace=False))
    ref_idx = np.arange(tm.N_EXPORT)
    dec = model.decoder
    for fname, data, idx, with_ref in [("decoder_block.calib.npz", train, calib_idx, False),
                                       ("decoder_block.reference.npz", held, ref_idx, True)]:
        src = torch.from_numpy(data[0][idx])
        lens = data[1][idx]
        dec_in = torch.from_numpy(data[2][idx])
        with torch.no_grad():
            mem, kpm = model.encode(src)
            x = model.tgt_emb(dec_in) + model.tgt_pos[: dec_in.shape[1]]
            causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
            h = dec.norm1(x)
            y = x + dec.self_attn(h, h, h, attn_mask=causal, need_weights=False)[0]
            h = dec.norm2(y)
            att, w = dec.cross_attn(h, mem, mem, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
            y = y + att
            y = y + dec.ff2(F.gelu(dec.ff1(dec.norm3(y))))
            z = dec.norm_out(y)
            assert torch.allclose(z, dec(x, mem, kpm), atol=1e-9)
            logits = model.out(z)
        f32 = lambda t: t.numpy().astype(np.float32)
        d = {"decoder.query": f32(x), "decoder.key": f32(mem), "decoder.kv_valid_len": np.asarray(lens, np.int32),
             "dec_norm.query": f32(y), "head.query": f32(z)}
        if with_ref:
            d.update({"decoder.output": f32(y), "decoder.attn_weights": f32(w), "dec_norm.output": f32(z),
                      "head.output": f32(logits)})
        save_npz(os.path.join(out, fname), d)
    p = "decoder."
    spec = {"model": "transformer_decoder", "layers": [
        {"name": "decoder", "kind": "decoder_block", "prefix": p, "embed_dim": tm.D_MODEL, "num_heads": tm.N_HEAD,
         "norm_first": True, "activation": "gelu", "mask": "key_padding", "max_q_len": tm.TGT_LEN,
         "max_kv_len": tm.SRC_LEN,
         "tensors": {"norm1_w": p + "norm1.weight", "norm1_b": p + "norm1.bias",
                     "qkv_w": p + "self_attn.in_proj_weight", "qkv_b": p + "self_attn.in_proj_bias",
                     "o_w": p + "self_attn.out_proj.weight", "o_b": p + "self_attn.out_proj.bias",
                     "norm2_w": p + "norm2.weight", "norm2_b": p + "norm2.bias",
                     "cross_qkv_w": p + "cross_attn.in_proj_weight", "cross_qkv_b": p + "cross_attn.in_proj_bias",
                     "cross_o_w": p + "cross_attn.out_proj.weight", "cross_o_b": p + "cross_attn.out_proj.bias",
                     "norm3_w": p + "norm3.weight", "norm3_b": p + "norm3.bias",
                     "fc1_w": p + "ff1.weight", "fc1_b": p + "ff1.bias",
                     "fc2_w": p + "ff2.weight", "fc2_b": p + "ff2.bias"}},
        {"name": "dec_norm", "kind": "layernorm", "prefix": "decoder.norm_out.", "dim": tm.D_MODEL,
         "max_q_len": tm.TGT_LEN},
        {"name": "head", "kind": "linear", "prefix": "out.", "in_features": tm.D_MODEL,
         "out_features": tm.VOCAB, "max_q_len": tm.TGT_LEN}]}
    with open(os.path.join(out, "decoder_block.spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    print("wrote", out, "decoder_block.*")


if __name__ == "__main__":
    main()
    transformer_encoder()
    transformer_decoder()
