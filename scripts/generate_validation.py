#!/usr/bin/python3
"""Choose the int8 calibration of the generating transformer on a validation set.

    /usr/bin/python3 scripts/generate_validation.py [--build build/host] [--n 5000]

The 1000 held-out sources of models/transformer/heldout.npz are the test
set; a setting chosen on them would be chosen on the test. This draws N
other sources (4 to 12 digits, Python's random with seed 777, held-out
sequences excluded; training sequences are not excluded, which flatters
every setting alike), writes <build>/decode_validation/generate_validation.npz
(src, src_len), converts models/transformer/generate.spec.json to int8 at
each setting below (SPECS x FLAGS; "decoder mse" is the spec as committed,
its decoder layers at "calib_method" mse, "plain" the same spec without
those fields) and prints how many sources edgeattn-greedy-decode
--generate-model reverses on the validation set and on the held-out set.
Standard library only; needs a host build with edgeattn-convert and
edgeattn-greedy-decode. About half a minute.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_generate_calib import npy, read_npz  # noqa: E402

MODEL = os.path.join(ROOT, "models", "transformer")
FLAGS = [[], ["--calib-method", "mse"], ["--calib-method", "percentile"], ["--calib-headroom", "0"],
         ["--calib-headroom", "10"]]


def validation_set(n, path):
    held = read_npz(os.path.join(MODEL, "heldout.npz"))
    src, lens = held["src"][1], held["src_len"][1]
    seen = {tuple(src[i * 12:i * 12 + lens[i]]) for i in range(len(lens))}
    rng = random.Random(777)
    rows, out_lens = [], []
    while len(out_lens) < n:
        length = rng.randint(4, 12)
        digits = tuple(rng.randrange(10) for _ in range(length))
        if digits in seen:
            continue
        rows += list(digits) + [10] * (12 - length)
        out_lens.append(length)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("src.npy", npy([n, 12], rows))
        z.writestr("src_len.npy", npy([n], out_lens))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "host"))
    ap.add_argument("--n", type=int, default=5000)
    a = ap.parse_args()
    work = os.path.join(a.build, "decode_validation")
    os.makedirs(work, exist_ok=True)
    val = os.path.join(work, "generate_validation.npz")
    validation_set(a.n, val)
    with open(os.path.join(MODEL, "generate.spec.json")) as f:
        spec = json.load(f)
    plain = json.loads(json.dumps(spec))
    for layer in plain["layers"]:
        layer.pop("calib_method", None)
    specs = {"decoder mse": os.path.join(MODEL, "generate.spec.json"), "plain": os.path.join(work, "plain.spec.json")}
    with open(specs["plain"], "w") as f:
        json.dump(plain, f)
    convert = os.path.join(a.build, "converter", "edgeattn-convert")
    decode = os.path.join(a.build, "examples", "edgeattn-greedy-decode")
    model = os.path.join(work, "generate_int8.eatn")
    for name, spec_path in specs.items():
        for flags in FLAGS:
            subprocess.run([convert, "convert", "--weights", os.path.join(MODEL, "weights.safetensors"), "--spec",
                            spec_path, "--calib", os.path.join(MODEL, "generate.calib.npz"), "--dtype", "int8",
                            "-o", model] + flags, check=True, stdout=subprocess.DEVNULL)
            counts = []
            for data in (val, os.path.join(MODEL, "heldout.npz")):
                out = subprocess.run([decode, "--generate-model", model, "--data", data, "--show", "0"], check=True,
                                     capture_output=True, text=True).stdout
                counts.append(re.search(r"int8  Generate: (\d+) of (\d+)", out).group(1))
            print(f"{name:12s} {' '.join(flags) or '(defaults)':28s} validation {counts[0]} of {a.n}, "
                  f"held-out {counts[1]} of 1000")


if __name__ == "__main__":
    main()
