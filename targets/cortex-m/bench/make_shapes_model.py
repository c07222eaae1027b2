#!/usr/bin/env python3
"""Random-weight source model for ea_cm_bench: one int8 MHA self-attention
layer per shape of the CMSIS-NN comparison (docs/footprint.md), stdlib only.

  make_shapes_model.py OUT_DIR  -> OUT_DIR/{weights.safetensors, spec.json, calib.npz}

Shapes (L = q_len = kv_len, d_model, heads): 12x60x4, 64x64x4, 81x32x8,
66x16x8, layers named l<L>_d<d>_h<heads>. Each layer is the torch_mha preset
with a key padding mask; weights ~ U(-1/sqrt(d), 1/sqrt(d)), biases
~ U(-0.1, 0.1), 4 calibration queries ~ N(0, 1) per layer. The seed and the
order of the draws are those of the CMSIS-NN harness's edgeattn model, so its
counts and these are the same layers.
"""
import json
import random
import struct
import sys
import zipfile
from pathlib import Path

SHAPES = [(12, 60, 4), (64, 64, 4), (81, 32, 8), (66, 16, 8), (32, 128, 4)]
SAMPLES = 4


def safetensors(tensors):
    header, blobs, off = {}, [], 0
    for name, (shape, values) in tensors.items():
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def npy(shape, values, code):
    descr = {"f": "<f4", "i": "<i4"}[code]
    dims = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + \
        struct.pack("<%d%s" % (len(values), code), *values)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20240607)
    uniform = lambda n, b: [rng.uniform(-b, b) for _ in range(n)]
    tensors, layers, calib = {}, [], {}
    for length, d, heads in SHAPES:
        name = "l%d_d%d_h%d" % (length, d, heads)
        b = d ** -0.5
        tensors[name + ".in_proj_weight"] = ([3 * d, d], uniform(3 * d * d, b))
        tensors[name + ".in_proj_bias"] = ([3 * d], uniform(3 * d, 0.1))
        tensors[name + ".out_proj.weight"] = ([d, d], uniform(d * d, b))
        tensors[name + ".out_proj.bias"] = ([d], uniform(d, 0.1))
        layers.append({"name": name, "kind": "mha", "preset": "torch_mha", "prefix": name + ".",
                       "embed_dim": d, "num_heads": heads, "cross": False, "mask": "key_padding",
                       "max_q_len": length, "max_kv_len": length})
        calib[name + ".query"] = ([SAMPLES, length, d],
                                  [rng.gauss(0.0, 1.0) for _ in range(SAMPLES * length * d)], "f")
        calib[name + ".kv_valid_len"] = ([SAMPLES], [length] * SAMPLES, "i")
    (out / "weights.safetensors").write_bytes(safetensors(tensors))
    (out / "spec.json").write_text(json.dumps({"model": "cmsis_nn_shapes", "layers": layers}, indent=2) + "\n")
    with zipfile.ZipFile(out / "calib.npz", "w") as z:
        for key, (shape, values, code) in calib.items():
            z.writestr(key + ".npy", npy(shape, values, code))


if __name__ == "__main__":
    main()
