#!/usr/bin/env python3
"""The ONNX Runtime peers' KWT-1-shaped weights under Torch-KWT's names.

    scripts/torch_kwt_from_peers.py PEER_DIR OUT_DIR [--to-out]

PEER_DIR is ../shared/peers' `edgeattn/kwt1` folder (weights.safetensors with
timm names, calib.npz). OUT_DIR receives weights.npz under ID56/Torch-KWT's
models/kwt.py names (to_patch_embedding.1, cls_token, pos_embedding,
transformer.layers.{i}.0.norm / .0.fn.to_qkv / .1.norm / .1.fn.net.0 / .3,
mlp_head.0 / .1) and calib.npz (key embed.query), for timing the torch_kwt
preset's two block forms on KWT-1's shape (docs: the session notes' commands).
Torch-KWT's to_qkv has no bias, so the peers' qkv bias is left out; without
--to-out the attention has no output projection either (KWT-1: one head of
dim_head == dim). The weights are the peers' generated ones, not trained: a
model to time, not to judge accuracy with.
"""
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            sys.exit(f"{path}: tensor {name} is {meta['dtype']}, expected F32")
        begin, end = meta["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + begin:8 + n + end], dtype=np.float32).reshape(meta["shape"])
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    peer, out = args
    to_out = "--to-out" in sys.argv
    w = read_safetensors(f"{peer}/weights.safetensors")
    t = {
        "to_patch_embedding.1.weight": w["patch_embed.proj.weight"],
        "to_patch_embedding.1.bias": w["patch_embed.proj.bias"],
        "cls_token": w["cls_token"],
        "pos_embedding": w["pos_embed"],
        "mlp_head.0.weight": w["norm.weight"],
        "mlp_head.0.bias": w["norm.bias"],
        "mlp_head.1.weight": w["head.weight"],
        "mlp_head.1.bias": w["head.bias"],
    }
    i = 0
    while f"blocks.{i}.norm1.weight" in w:
        b, k = f"blocks.{i}.", f"transformer.layers.{i}."
        t[k + "0.norm.weight"], t[k + "0.norm.bias"] = w[b + "norm1.weight"], w[b + "norm1.bias"]
        t[k + "0.fn.to_qkv.weight"] = w[b + "attn.qkv.weight"]
        if to_out:
            t[k + "0.fn.to_out.0.weight"], t[k + "0.fn.to_out.0.bias"] = w[b + "attn.proj.weight"], w[b + "attn.proj.bias"]
        t[k + "1.norm.weight"], t[k + "1.norm.bias"] = w[b + "norm2.weight"], w[b + "norm2.bias"]
        t[k + "1.fn.net.0.weight"], t[k + "1.fn.net.0.bias"] = w[b + "mlp.fc1.weight"], w[b + "mlp.fc1.bias"]
        t[k + "1.fn.net.3.weight"], t[k + "1.fn.net.3.bias"] = w[b + "mlp.fc2.weight"], w[b + "mlp.fc2.bias"]
        i += 1
    np.savez(f"{out}/weights.npz", **t)
    np.savez(f"{out}/calib.npz", **{"embed.query": np.load(f"{peer}/calib.npz")["x"]})
    print(f"{out}/weights.npz: {len(t)} tensors, {i} blocks, to_out {'kept' if to_out else 'left out'}")


if __name__ == "__main__":
    main()
