#!/usr/bin/python3
"""Relative L2 of a block's output and of its change (output - input) against
PyTorch, from `edgeattn-convert eval --dump-outputs` (issue 37: the residual
stream carries the input through, so the output's error hides how well the
block's own contribution survives).

    block_change_error.py REFERENCE.npz DUMPED.npz LAYER [LAYER ...]

Rows past L.kv_valid_len are left out for encoder blocks (key padding), as
eval does; a decoder block's valid length pads its memory, so all its rows
count (pass the layer as dec:NAME).
"""
import sys

import numpy as np


def rel_l2(err, ref):
    return float(np.sqrt((err ** 2).sum() / (ref ** 2).sum()))


def main():
    ref = np.load(sys.argv[1])
    got = np.load(sys.argv[2])
    for arg in sys.argv[3:]:
        decoder = arg.startswith("dec:")
        name = arg[4:] if decoder else arg
        x = ref[name + ".query"].astype(np.float64)
        y = ref[name + ".output"].astype(np.float64)
        q = got[name + ".output"].astype(np.float64)
        mask = np.ones(y.shape[:2], dtype=bool)
        if not decoder and name + ".kv_valid_len" in ref.files:
            valid = ref[name + ".kv_valid_len"]
            mask = np.arange(y.shape[1])[None, :] < valid[:, None]
        e, yy, dd = (q - y)[mask], y[mask], (y - x)[mask]
        print(f"{name:10s} output {100 * rel_l2(e, yy):.2f} %  change {100 * rel_l2(e, dd):.2f} %")


if __name__ == "__main__":
    main()
