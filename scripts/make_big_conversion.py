#!/usr/bin/env python3
"""The large conversion case of docs/workflow.md ("Conversion as fast as the work"):
4 MHA layers of embed_dim 512 (8 heads, max length 256) with random weights,
and 32 calibration samples of 256 tokens per layer. Plain python3 (standard
library only); the same seed gives the same files.

    python3 scripts/make_big_conversion.py OUTDIR
    /usr/bin/time edgeattn-convert convert --weights OUTDIR/weights.npz \
        --spec OUTDIR/spec.json --calib OUTDIR/calib.npz --dtype int8 -o OUTDIR/big.eatn -q

Layers: enc_self (self-attention, key padding, varied valid lengths),
dec_self (causal self-attention with KV cache), cross (cross-attention, key
padding) and plain (self-attention, no mask), so every MHA path of the float
reference and of the calibration is timed. Writes spec.json, weights.npz
(PyTorch nn.MultiheadAttention names) and calib.npz (float32 arrays).
"""
import array
import json
import math
import os
import random
import struct
import sys
import zipfile

E, HEADS, N, L = 512, 8, 32, 256
LAYERS = [  # name, cross, mask, kv_cache
    ("enc_self", False, "key_padding", False),
    ("dec_self", False, "causal", True),
    ("cross", True, "key_padding", False),
    ("plain", False, "none", False),
]


def npy(values, shape, typecode, descr):
    """The bytes of a .npy file (format 1.0, little-endian, C order)."""
    a = array.array(typecode, values)
    if sys.byteorder != "little":
        a.byteswap()
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape) if len(shape) == 1 else ", ".join(str(d) for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + a.tobytes()


def write_npz(path, arrays):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in arrays:
            z.writestr(name + ".npy", data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(12)
    uni = rng.uniform
    bound = 1.0 / math.sqrt(E)  # nn.Linear's default init range
    weights, calib, spec = [], [], {"model": "big_mha", "layers": []}
    for name, cross, mask, kv_cache in LAYERS:
        p = name + "."
        spec["layers"].append({"name": name, "kind": "mha", "preset": "torch_mha", "prefix": p,
                               "embed_dim": E, "num_heads": HEADS, "cross": cross, "mask": mask,
                               "kv_cache": kv_cache, "max_q_len": L, "max_kv_len": L})
        weights.append((p + "in_proj_weight", npy((uni(-bound, bound) for _ in range(3 * E * E)), (3 * E, E), "f", "<f4")))
        weights.append((p + "in_proj_bias", npy((uni(-bound, bound) for _ in range(3 * E)), (3 * E,), "f", "<f4")))
        weights.append((p + "out_proj.weight", npy((uni(-bound, bound) for _ in range(E * E)), (E, E), "f", "<f4")))
        weights.append((p + "out_proj.bias", npy((uni(-bound, bound) for _ in range(E)), (E,), "f", "<f4")))
        for tensor in ("query", "key", "value") if cross else ("query",):
            # Inputs of unit scale with a few larger channels (as real activations have).
            calib.append((p + tensor, npy((uni(-1.0, 1.0) * (4.0 if i % E < 8 else 1.0)
                                           for i in range(N * L * E)), (N, L, E), "f", "<f4")))
        if mask == "key_padding":
            calib.append((p + "kv_valid_len", npy([L - (37 * s) % 200 for s in range(N)], (N,), "q", "<i8")))
    with open(os.path.join(out, "spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    write_npz(os.path.join(out, "weights.npz"), weights)
    write_npz(os.path.join(out, "calib.npz"), calib)


if __name__ == "__main__":
    main()
