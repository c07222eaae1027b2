#!/usr/bin/python3
"""Greedy decoding of the bundled transformer on a validation set, per calibration setting.

    /usr/bin/python3 scripts/decode_validation.py [--build build/host] [--n 5000]

The held-out 1000 sequences of models/transformer/heldout.npz are the test
set of issue 24's decode target (int8 reverses at least 965, PyTorch 970);
a conversion setting chosen on them would be chosen on the test. This draws
N further sequences (4 to 12 digits, seed 777) that are neither training nor
held-out sequences, decodes them with PyTorch (float, greedy) and writes
<build>/decode_validation/validation.npz in heldout.npz's layout. Then, for
each calibration setting below, it converts models/transformer/
decoder_block.spec.json to int8 and runs edgeattn-greedy-decode with the
whole transformer in the runtime (block kinds; the encoder at the default
calibration) on the validation set and on the held-out set, and prints how
many sequences int8 reverses and how many equal PyTorch's tokens.

Needs torch (1.13) and numpy, and a host build with edgeattn-convert and
edgeattn-greedy-decode (their test models: ctest's build of
tests/runtime/models). About a minute on 2 cores.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_models as tm  # noqa: E402

SETTINGS = [[], ["--calib-method", "mse"], ["--calib-method", "percentile"], ["--calib-headroom", "0"],
            ["--calib-headroom", "10"], ["--calib-headroom", "25"]]


def validation_set(n, path):
    """N sequences disjoint from the training and held-out draws of train_models.py."""
    model = tm.load_transformer()
    rng = np.random.default_rng(tm.SEED)  # the draws of train_models.main()
    held = tm.make_reversal_data(rng, 1000)
    train = tm.make_reversal_data(rng, 40000, exclude=tm.seq_keys(held[0], held[1]))
    used = tm.seq_keys(held[0], held[1]) | tm.seq_keys(train[0], train[1])
    src, lens = tm.make_reversal_data(np.random.default_rng(777), n, exclude=used)[:2]
    with torch.no_grad():
        pred = model.greedy(torch.from_numpy(src)).numpy()
    np.savez_compressed(path, src=src.astype(np.int32), src_len=lens.astype(np.int32),
                        torch_greedy=pred.astype(np.int32))


def decode(build, decoder, data):
    m = os.path.join(build, "tests", "runtime", "models")
    out = subprocess.run([os.path.join(build, "converter", "demo", "edgeattn-greedy-decode"),
                          "--model", os.path.join(m, "transformer_int8.eatn"),
                          "--weights", os.path.join(ROOT, "models", "transformer", "weights.safetensors"),
                          "--encoder-model", os.path.join(m, "transformer_encoder_int8.eatn"),
                          "--decoder-model", decoder, "--data", data, "--show", "0"],
                         check=True, capture_output=True, text=True).stdout
    hit = re.search(r"^int8 .*: (\d+) of (\d+) reversed exactly.*PyTorch greedy on (\d+) of", out, re.M)
    torch_exact = re.search(r"^PyTorch float greedy .*: (\d+) of", out, re.M)
    return int(hit.group(1)), int(hit.group(2)), int(hit.group(3)), int(torch_exact.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "host"))
    ap.add_argument("--n", type=int, default=5000)
    a = ap.parse_args()
    work = os.path.join(a.build, "decode_validation")
    os.makedirs(work, exist_ok=True)
    val = os.path.join(work, "validation.npz")
    validation_set(a.n, val)
    held = os.path.join(ROOT, "models", "transformer", "heldout.npz")
    t = os.path.join(ROOT, "models", "transformer")
    print(f"{'setting':<28} {'validation: reversed':>21} {'= PyTorch':>10} {'held-out: reversed':>19} {'= PyTorch':>10}")
    for s in SETTINGS:
        eatn = os.path.join(work, "decoder_int8.eatn")
        subprocess.run([os.path.join(a.build, "converter", "edgeattn-convert"), "convert",
                        "--weights", os.path.join(t, "weights.safetensors"),
                        "--spec", os.path.join(t, "decoder_block.spec.json"),
                        "--calib", os.path.join(t, "decoder_block.calib.npz"), "--dtype", "int8", *s,
                        "-o", eatn], check=True, capture_output=True)
        v, vn, va, vt = decode(a.build, eatn, val)
        h, hn, ha, ht = decode(a.build, eatn, held)
        name = " ".join(s) or "default"
        print(f"{name:<28} {v:>10} of {vn:<6} {va:>10} {h:>9} of {hn:<6} {ha:>10}")
    print(f"PyTorch float greedy: validation {vt} of {vn}, held-out {ht} of {hn}")


if __name__ == "__main__":
    main()
