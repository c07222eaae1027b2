#!/usr/bin/env python3
"""Writes a random-weight source model at the ARM benchmark shapes (stdlib only).

  make_bench_model.py OUT_DIR   -> OUT_DIR/{weights.safetensors, spec.json, calib.npz}

Layers (int8 after `edgeattn-convert convert --dtype int8`):
  mha_self  MHA self-attention, d_model 128, 4 heads, L = 128 (key padding mask)
  dec_step  MHA decoder step: 1 query row against 256 keys (cross, key padding)
  additive  additive (Bahdanau) attention, 1 query row against 128 keys, attn_dim 128
  block     a pre-norm transformer encoder block (encoder_block, issue 24): d_model 128,
            4 heads, GELU FFN 512, L = 128, as kernels_bench's encoder_block_qs8
Weights ~ U(-1/sqrt(d), 1/sqrt(d)), calibration inputs ~ N(0, 1), fixed seed.
"""
import io
import json
import random
import struct
import sys
import zipfile
from pathlib import Path

D = 128
rng = random.Random(20240607)


def uniform(n, bound):
    return [rng.uniform(-bound, bound) for _ in range(n)]


def normal(n):
    return [rng.gauss(0.0, 1.0) for _ in range(n)]


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, (shape, values) in tensors.items():
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def npy(shape, values, descr):
    fmt = {"<f4": "f", "<i4": "i"}[descr]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % s for s in shape) if len(shape) > 1 else "%d," % shape[0])
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
            struct.pack("<%d%s" % (len(values), fmt), *values))


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    b = 1.0 / D ** 0.5
    t = {}
    for prefix in ("mha_self.", "dec_step."):
        t[prefix + "in_proj_weight"] = ([3 * D, D], uniform(3 * D * D, b))
        t[prefix + "in_proj_bias"] = ([3 * D], uniform(3 * D, 0.1))
        t[prefix + "out_proj.weight"] = ([D, D], uniform(D * D, b))
        t[prefix + "out_proj.bias"] = ([D], uniform(D, 0.1))
    t["additive.W_q.weight"] = ([D, D], uniform(D * D, b))
    t["additive.W_k.weight"] = ([D, D], uniform(D * D, b))
    t["additive.W_k.bias"] = ([D], uniform(D, 0.1))
    t["additive.v.weight"] = ([1, D], uniform(D, b))

    mha = {"kind": "mha", "preset": "torch_mha", "embed_dim": D, "num_heads": 4,
           "mask": "key_padding"}
    spec = {"model": "arm_bench", "layers": [
        dict(mha, name="mha_self", prefix="mha_self.", cross=False, max_q_len=128, max_kv_len=128),
        dict(mha, name="dec_step", prefix="dec_step.", cross=True, max_q_len=1, max_kv_len=256),
        {"name": "additive", "kind": "additive", "query_dim": D, "key_dim": D, "attn_dim": D,
         "tensors": {"w_q": "additive.W_q.weight", "w_k": "additive.W_k.weight",
                     "b": "additive.W_k.bias", "v": "additive.v.weight"},
         "mask": "key_padding", "max_q_len": 1, "max_kv_len": 128},
    ]}

    n = 4
    arrays = {
        "mha_self.query": ([n, 128, D], normal(n * 128 * D), "<f4"),
        "mha_self.kv_valid_len": ([n], [128] * n, "<i4"),
        "dec_step.query": ([n, 1, D], normal(n * D), "<f4"),
        "dec_step.key": ([n, 256, D], normal(n * 256 * D), "<f4"),
        "dec_step.kv_valid_len": ([n], [256] * n, "<i4"),
        "additive.query": ([n, 1, D], normal(n * D), "<f4"),
        "additive.key": ([n, 128, D], normal(n * 128 * D), "<f4"),
        "additive.kv_valid_len": ([n], [128] * n, "<i4"),
    }
    # The block's draws come after every earlier one, so the other layers keep their values.
    blk = "block."
    for norm in ("norm1.", "norm2."):
        t[blk + norm + "weight"] = ([D], [1.0 + g for g in uniform(D, 0.2)])
        t[blk + norm + "bias"] = ([D], uniform(D, 0.1))
    t[blk + "self_attn.in_proj_weight"] = ([3 * D, D], uniform(3 * D * D, b))
    t[blk + "self_attn.in_proj_bias"] = ([3 * D], uniform(3 * D, 0.1))
    t[blk + "self_attn.out_proj.weight"] = ([D, D], uniform(D * D, b))
    t[blk + "self_attn.out_proj.bias"] = ([D], uniform(D, 0.1))
    t[blk + "linear1.weight"] = ([4 * D, D], uniform(4 * D * D, b))
    t[blk + "linear1.bias"] = ([4 * D], uniform(4 * D, 0.1))
    t[blk + "linear2.weight"] = ([D, 4 * D], uniform(4 * D * D, 1.0 / (4 * D) ** 0.5))
    t[blk + "linear2.bias"] = ([D], uniform(D, 0.1))
    spec["layers"].append({"name": "block", "kind": "encoder_block", "preset": "torch", "prefix": blk,
                           "embed_dim": D, "num_heads": 4, "norm_first": True, "activation": "gelu",
                           "mask": "key_padding", "max_q_len": 128})
    arrays["block.query"] = ([n, 128, D], normal(n * 128 * D), "<f4")
    arrays["block.kv_valid_len"] = ([n], [128] * n, "<i4")
    write_safetensors(out / "weights.safetensors", t)
    (out / "spec.json").write_text(json.dumps(spec, indent=2) + "\n")
    with zipfile.ZipFile(out / "calib.npz", "w") as z:
        for name, (shape, values, descr) in arrays.items():
            z.writestr(name + ".npy", npy(shape, values, descr))


if __name__ == "__main__":
    main()
