#!/usr/bin/python3
"""Calibration ids for the bundled transformer as one generating model.

    /usr/bin/python3 scripts/make_generate_calib.py

Writes models/transformer/generate.calib.npz for generate.spec.json:
src_emb.query int32 [16, 12] (the PAD-padded source digits),
src_emb.kv_valid_len int32 [16] and tgt_emb.query int32 [16, 13] (the
teacher-forced decoder input, BOS + reversed digits + PAD). They are the 16
training samples that encoder_block.calib.npz and decoder_block.calib.npz
hold as embeddings (scripts/make_block_models.py draws both with one seed):
each row x = emb[id] + pos[row] is matched back to its id, and a row that is
not one of the table's rows to 1e-5 stops the script. Python's standard
library only (no numpy or torch needed).
"""
import ast
import io
import json
import os
import struct
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "transformer")


def read_npz(path):
    """{name: (shape, flat list)} of an .npz of little-endian f4 / i4 arrays."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            b = z.read(name)
            if b[:6] != b"\x93NUMPY":
                raise SystemExit(f"{path}: {name} is not a .npy array")
            hlen, off = (struct.unpack("<H", b[8:10])[0], 10) if b[6] == 1 else (struct.unpack("<I", b[8:12])[0], 12)
            header = ast.literal_eval(b[off:off + hlen].decode("latin1"))
            fmt = {"<f4": "f", "<i4": "i"}[header["descr"]]
            data = b[off + hlen:]
            out[name[:-4]] = (header["shape"], list(struct.unpack(f"<{len(data) // 4}{fmt}", data)))
    return out


def read_safetensors(path, names):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    out = {}
    for name in names:
        t = header[name]
        if t["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        out[name] = (t["shape"], list(struct.unpack(f"<{(b - a) // 4}f", body[a:b])))
    return out


def ids_of(x, shape, emb, pos, what):
    """The id of each row of x [N][L][D] = emb[id] + pos[row]."""
    n, rows, d = shape
    vocab = len(emb) // d
    ids = []
    for i in range(n):
        for r in range(rows):
            row = x[(i * rows + r) * d:(i * rows + r + 1) * d]
            best, err = None, None
            for v in range(vocab):
                e = max(abs(row[k] - emb[v * d + k] - pos[r * d + k]) for k in range(d))
                if err is None or e < err:
                    best, err = v, e
            if err > 1e-5:
                raise SystemExit(f"{what}: sample {i} row {r} is no embedding row (off by {err})")
            ids.append(best)
    return ids


def npy(shape, values):
    header = repr({"descr": "<i4", "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + struct.pack(f"<{len(values)}i", *values)


def main():
    enc = read_npz(os.path.join(MODEL, "encoder_block.calib.npz"))
    dec = read_npz(os.path.join(MODEL, "decoder_block.calib.npz"))
    w = read_safetensors(os.path.join(MODEL, "weights.safetensors"),
                         ["src_emb.weight", "src_pos", "tgt_emb.weight", "tgt_pos"])
    src_shape, src_x = enc["encoder.query"]
    tgt_shape, tgt_x = dec["decoder.query"]
    src = ids_of(src_x, src_shape, w["src_emb.weight"][1], w["src_pos"][1], "encoder.query")
    tgt = ids_of(tgt_x, tgt_shape, w["tgt_emb.weight"][1], w["tgt_pos"][1], "decoder.query")
    lens = enc["encoder.kv_valid_len"][1]
    if lens != dec["decoder.kv_valid_len"][1]:
        raise SystemExit("the encoder and decoder calibration samples are not the same sources")
    path = os.path.join(MODEL, "generate.calib.npz")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("src_emb.query.npy", npy(src_shape[:2], src))
        z.writestr("src_emb.kv_valid_len.npy", npy([src_shape[0]], lens))
        z.writestr("tgt_emb.query.npy", npy(tgt_shape[:2], tgt))
    with open(path + ".tmp", "wb") as f:
        f.write(buf.getvalue())
    os.replace(path + ".tmp", path)
    print("wrote", path)


if __name__ == "__main__":
    main()
