#!/usr/bin/python3
"""Export models/outlier_block: pre-norm transformer blocks with outlier channels.

    /usr/bin/python3 models/outlier_block/make_outlier_block.py

Pretrained transformers carry a few channels whose LayerNorm gain (and
residual-stream value) is many times the others' (Dettmers et al.,
arXiv 2208.07339; Xiao et al., arXiv 2211.10438): after the LayerNorm those
channels set the int8 range of the whole tensor, so every other channel gets
a coarse step. The bundled models have no such channels, so this script
builds them into randomly initialised PyTorch layers, to measure
edgeattn-convert's --smooth-alpha (SmoothQuant) where it should matter:

    enc  nn.TransformerEncoderLayer(64, 4, 256, norm_first=True, GELU), key padding  (preset torch)
    dec  nn.TransformerDecoderLayer(64, 4, 256, norm_first=True, GELU), 12 rows over
         a 16-row memory with padding                                               (preset torch)

Every LayerNorm gain is 1 + 0.1 N(0, 1) except channels OUTLIERS, whose gain
is GAIN_OUTLIER; the block inputs are N(0, 1) with those channels scaled by
INPUT_OUTLIER (the residual stream's outliers; 1 here, --input-outlier 4
--out DIR writes that variant elsewhere). Seeded (torch 1.13, numpy,
one thread). Writes weights.safetensors, spec.json, calib.npz (16 samples)
and reference.npz (16 held-out samples, PyTorch float64 outputs and the
attention weights per head), in the formats of docs/workflow.md.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from train_models import save_npz, write_safetensors  # noqa: E402

D, H, FF, L, LQ_DEC = 64, 4, 128, 16, 12
N_CALIB, N_REF = 16, 16
OUTLIERS = [5, 23, 41]
GAIN_OUTLIER = 12.0
INPUT_OUTLIER = 1.0  # --input-outlier: 4 also gives the residual stream outlier channels


def outlier_norms(module):
    for m in module.modules():
        if isinstance(m, nn.LayerNorm):
            with torch.no_grad():
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
                m.weight[OUTLIERS] = GAIN_OUTLIER
                m.bias.copy_(0.05 * torch.randn_like(m.bias))


def inputs(n, rows, gen):
    x = torch.randn(n, rows, D, generator=gen, dtype=torch.float64)
    x[:, :, OUTLIERS] *= INPUT_OUTLIER
    return x


def main():
    global INPUT_OUTLIER
    ap = argparse.ArgumentParser()
    ap.add_argument("--input-outlier", type=float, default=INPUT_OUTLIER)
    ap.add_argument("--out", default=HERE, help="directory to write (default: this one)")
    args = ap.parse_args()
    INPUT_OUTLIER = args.input_outlier
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(2211)
    enc = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    dec = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
    outlier_norms(enc)
    outlier_norms(dec)
    enc.eval()
    dec.eval()
    tensors = {}
    for prefix, m in (("enc.", enc), ("dec.", dec)):
        for k, v in m.state_dict().items():
            tensors[prefix + k] = v.detach().numpy().astype("<f4")
    write_safetensors(os.path.join(out_dir, "weights.safetensors"), tensors)
    enc.double()
    dec.double()
    # The float64 layers use the float32 weights as stored.
    spec = {"model": "outlier_block", "layers": [
        {"name": "enc", "kind": "encoder_block", "preset": "torch", "prefix": "enc.", "embed_dim": D,
         "num_heads": H, "norm_first": True, "activation": "gelu", "mask": "key_padding", "max_q_len": L},
        {"name": "dec", "kind": "decoder_block", "preset": "torch", "prefix": "dec.", "embed_dim": D,
         "num_heads": H, "norm_first": True, "activation": "gelu", "mask": "key_padding",
         "max_q_len": LQ_DEC, "max_kv_len": L}]}
    with open(os.path.join(out_dir, "spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    gen = torch.Generator().manual_seed(2212)
    causal = torch.triu(torch.ones(LQ_DEC, LQ_DEC, dtype=torch.bool), 1)
    for name, n, with_ref in (("calib.npz", N_CALIB, False), ("reference.npz", N_REF, True)):
        x = inputs(n, L, gen)
        valid = torch.randint(L // 2, L + 1, (n,), generator=gen)
        kpm = torch.arange(L)[None, :] >= valid[:, None]
        y = inputs(n, LQ_DEC, gen)
        mem = inputs(n, L, gen)
        mvalid = torch.randint(L // 2, L + 1, (n,), generator=gen)
        mkpm = torch.arange(L)[None, :] >= mvalid[:, None]
        d = {"enc.query": x.numpy().astype("<f4"), "enc.kv_valid_len": valid.numpy().astype("<i4"),
             "dec.query": y.numpy().astype("<f4"), "dec.key": mem.numpy().astype("<f4"),
             "dec.kv_valid_len": mvalid.numpy().astype("<i4")}
        if with_ref:
            with torch.no_grad():
                xs = torch.from_numpy(d["enc.query"]).double()
                ys = torch.from_numpy(d["dec.query"]).double()
                ms = torch.from_numpy(d["dec.key"]).double()
                out = enc(xs, src_key_padding_mask=kpm)
                h = enc.norm1(xs)
                _, a = enc.self_attn(h, h, h, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
                d["enc.output"] = out.numpy().astype("<f4")
                d["enc.attn_weights"] = a.numpy().astype("<f4")
                out = dec(ys, ms, tgt_mask=causal, memory_key_padding_mask=mkpm)
                hs = ys + dec.self_attn(*(3 * [dec.norm1(ys)]), attn_mask=causal, need_weights=False)[0]
                _, a = dec.multihead_attn(dec.norm2(hs), ms, ms, key_padding_mask=mkpm, need_weights=True,
                                          average_attn_weights=False)
                d["dec.output"] = out.numpy().astype("<f4")
                d["dec.attn_weights"] = a.numpy().astype("<f4")
        save_npz(os.path.join(out_dir, name), d)
    print("wrote", out_dir)


if __name__ == "__main__":
    main()
