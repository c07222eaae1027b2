#!/usr/bin/python3
"""The attention layers inside the block layers of models/encoder_block, alone.

    /usr/bin/python3 tests/converter/attention_parts.py OUT_DIR
    build/host/converter/edgeattn-convert convert --weights OUT_DIR/weights.safetensors \
        --spec OUT_DIR/spec.json --calib OUT_DIR/calib.npz --heldout OUT_DIR/reference.npz \
        --dtype int8 -o OUT_DIR/parts.eatn

docs/quantization.md holds each block's int8 error to its attention alone
plus one percentage point. This writes each block's attention as an mha
layer of its own (the block's weights renamed to nn.MultiheadAttention's
names) with its float64 inputs computed from the block's calibration and
held-out inputs (numpy, PyTorch semantics): pre-norm blocks' attention reads
norm1(x), post-norm ones x; a decoder block's self-attention likewise and
its cross-attention the LayerNorm after the first residual add, over the
memory. Layers: <block>_attn (encoder blocks), <block>_self and <block>_cross
(decoder blocks).
"""
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_models import read_safetensors, save_npz, write_safetensors  # noqa: E402

H = 4


def ln(x, g, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def mha(q, kv, w, b, wo, bo, causal, valid):
    e = q.shape[-1]
    d = e // H
    Q, K, V = q @ w[:e].T + b[:e], kv @ w[e:2 * e].T + b[e:2 * e], kv @ w[2 * e:].T + b[2 * e:]
    ctx = np.zeros_like(Q)
    for h in range(H):
        s = Q[:, h * d:(h + 1) * d] @ K[:, h * d:(h + 1) * d].T / math.sqrt(d)
        if causal:
            s = s + np.triu(np.full(s.shape, -np.inf), 1)
        if valid is not None:
            s[:, valid:] = -np.inf
        p = np.exp(s - s.max(1, keepdims=True))
        ctx[:, h * d:(h + 1) * d] = (p / p.sum(1, keepdims=True)) @ V[:, h * d:(h + 1) * d]
    return ctx @ wo.T + bo


# block -> (attention tensors prefix or vit, norm1, eps, norm_first, causal, decoder)
BLOCKS = {
    "pre": ("pre.self_attn.", "pre.norm1.", 1e-5, True, False, False),
    "post": ("post.self_attn.", None, 1e-5, False, False, False),
    "vit": ("vit.attn.", "vit.norm1.", 1e-6, True, False, False),
    "custom": ("custom.sa.", "custom.ln1.", 1e-5, True, True, False),
    "dec_pre": ("dec_pre.self_attn.", "dec_pre.norm1.", 1e-5, True, True, True),
    "dec_post": ("dec_post.self_attn.", None, 1e-5, False, True, True),
}


def attn_tensors(w, p):
    if p == "vit.attn.":
        return w[p + "qkv.weight"], w[p + "qkv.bias"], w[p + "proj.weight"], w[p + "proj.bias"]
    return w[p + "in_proj_weight"], w[p + "in_proj_bias"], w[p + "out_proj.weight"], w[p + "out_proj.bias"]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    src = os.path.join(ROOT, "models", "encoder_block")
    w64 = {k: v.astype(np.float64) for k, v in read_safetensors(os.path.join(src, "weights.safetensors"))[0].items()}
    weights, layers = {}, []

    def add_layer(name, p, cross, causal, lq, lk, padded):
        wi, bi, wo, bo = attn_tensors(w64, p)
        for k, v in (("in_proj_weight", wi), ("in_proj_bias", bi), ("out_proj.weight", wo), ("out_proj.bias", bo)):
            weights[name + "." + k] = v.astype("<f4")
        layers.append({"name": name, "kind": "mha", "preset": "torch_mha", "prefix": name + ".", "embed_dim": 64,
                       "num_heads": H, "cross": cross,
                       "mask": "causal" if causal else ("key_padding" if padded else "none"),
                       "max_q_len": lq, "max_kv_len": lk})

    for block, (p, n1, eps, pre, causal, dec) in BLOCKS.items():
        if not dec:
            add_layer(block + "_attn", p, False, causal, 16, 16, block in ("pre", "post"))
        else:
            add_layer(block + "_self", p, False, True, 12, 12, False)
            cp = block + ".multihead_attn."
            add_layer(block + "_cross", cp, True, False, 12, 16, True)
    write_safetensors(os.path.join(out, "weights.safetensors"), weights)
    with open(os.path.join(out, "spec.json"), "w") as f:
        json.dump({"model": "encoder_block_attention_parts", "layers": layers}, f, indent=2)
    for fname in ("calib.npz", "reference.npz"):
        d = np.load(os.path.join(src, fname))
        res = {}
        for block, (p, n1, eps, pre, causal, dec) in BLOCKS.items():
            x = d[block + ".query"].astype(np.float64)
            valid = d[block + ".kv_valid_len"] if block + ".kv_valid_len" in d.files else None
            g = (lambda k: w64[block + "." + k])
            a = ln(x, w64[n1 + "weight"], w64[n1 + "bias"], eps) if pre else x
            if not dec:
                res[block + "_attn.query"] = a.astype("<f4")
                if valid is not None:
                    res[block + "_attn.kv_valid_len"] = valid
                continue
            mem = d[block + ".key"].astype(np.float64)
            res[block + "_self.query"] = a.astype("<f4")
            wi, bi, wo, bo = attn_tensors(w64, p)
            q = np.zeros_like(x)
            for i in range(x.shape[0]):
                o = mha(a[i], a[i], wi, bi, wo, bo, True, None)
                q[i] = ln(x[i] + o, g("norm2.weight"), g("norm2.bias"), eps) if pre else \
                    ln(x[i] + o, g("norm1.weight"), g("norm1.bias"), eps)
            res[block + "_cross.query"] = q.astype("<f4")
            res[block + "_cross.key"] = mem.astype("<f4")
            res[block + "_cross.kv_valid_len"] = valid
        save_npz(os.path.join(out, fname), res)
    print("wrote", out)


if __name__ == "__main__":
    main()
