#!/usr/bin/env python3
"""Relative L2 of a block's output and of its change (output - input) against
PyTorch, from `edgeattn-convert eval --dump-outputs` (issue 37: the residual
stream carries the input through, so the output's error hides how well the
block's own contribution survives). Python's standard library only.

    block_change_error.py REFERENCE.npz DUMPED.npz LAYER [LAYER ...]

Rows past L.kv_valid_len are left out for encoder blocks (key padding), as
eval does; a decoder block's valid length pads its memory, so all its rows
count (pass the layer as dec:NAME).
"""
import ast
import math
import struct
import sys
import zipfile

KINDS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q"}


def load_npz(path):
    """name -> (shape, flat list) for the float and int arrays of an .npz."""
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for entry in z.namelist():
            data = z.read(entry)
            if data[:6] != b"\x93NUMPY":
                continue
            major = data[6]
            hlen_size = 2 if major == 1 else 4
            hlen = int.from_bytes(data[8:8 + hlen_size], "little")
            header = ast.literal_eval(data[8 + hlen_size:8 + hlen_size + hlen].decode("latin1"))
            kind = KINDS.get(header["descr"])
            if kind is None or header["fortran_order"]:
                continue
            body = data[8 + hlen_size + hlen:]
            n = math.prod(header["shape"])
            values = struct.unpack("<%d%s" % (n, kind), body[:n * struct.calcsize(kind)])
            arrays[entry[:-4] if entry.endswith(".npy") else entry] = (header["shape"], values)
    return arrays


def main():
    ref = load_npz(sys.argv[1])
    got = load_npz(sys.argv[2])
    for arg in sys.argv[3:]:
        decoder = arg.startswith("dec:")
        name = arg[4:] if decoder else arg
        shape, x = ref[name + ".query"]
        _, y = ref[name + ".output"]
        _, q = got[name + ".output"]
        n, rows, dim = shape
        valid = ref.get(name + ".kv_valid_len")
        e2 = y2 = d2 = 0.0
        for s in range(n):
            keep = rows if decoder or valid is None else int(valid[1][s])
            for i in range(s * rows * dim, (s * rows + keep) * dim):
                e2 += (q[i] - y[i]) ** 2
                y2 += y[i] ** 2
                d2 += (y[i] - x[i]) ** 2
        print(f"{name:10s} output {100 * math.sqrt(e2 / y2):.2f} %  change {100 * math.sqrt(e2 / d2):.2f} %")


if __name__ == "__main__":
    main()
