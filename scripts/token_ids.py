#!/usr/bin/env python3
"""Token labels for the digit models' heatmaps (edgeattn-convert eval --tokens).

Writes, for models/{transformer,bahdanau,coverage}:
  vocab.txt      one token per line, line i = token id i (0-9, PAD, BOS, EOS)
  token_ids.npz  L.query_ids int32 [N, Lq] and L.key_ids int32 [N, Lk]: the
                 token of every query row and key column of the N samples of
                 reference.npz (self-attention: query_ids only, keys = queries)

Rows are the tokens at the query positions: the transformer's decoder input
(BOS + reversed digits, then PAD), and for the additive decoders (bahdanau,
coverage) the token PyTorch's greedy decoding emits at that step. The samples
are regenerated with scripts/train_models.py's seeded data generators and the
exported weights; every recomputed layer input is checked against
reference.npz (1e-5), so the ids belong to exactly those samples.

    /usr/bin/python3 scripts/token_ids.py      # needs python3-torch, python3-numpy; ~5 s
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_models as tm  # noqa: E402  (seeded generators, model classes)

VOCAB = [str(d) for d in range(10)] + ["PAD", "BOS", "EOS"]
assert (tm.PAD, tm.BOS, tm.EOS, tm.VOCAB) == (10, 11, 12, len(VOCAB))


def same(name, got, ref):
    got = got.detach().numpy() if torch.is_tensor(got) else got
    if got.shape != ref.shape or not np.allclose(got, ref, atol=1e-5):
        sys.exit(f"token_ids.py: {name} does not match reference.npz: the regenerated samples differ")


def load(model, path, prefix=""):
    w, _ = tm.read_safetensors(path)
    model.load_state_dict({k[len(prefix):]: torch.from_numpy(v) for k, v in w.items() if k.startswith(prefix)})
    return model.eval()


def write(name, ids):
    d = os.path.join(tm.OUT, name)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("".join(t + "\n" for t in VOCAB))
    np.savez(os.path.join(d, "token_ids.npz"), **{k: np.asarray(v, np.int32) for k, v in ids.items()})
    print(f"  models/{name}/vocab.txt, token_ids.npz: " + ", ".join(f"{k} {list(v.shape)}" for k, v in ids.items()))


def main():
    # Digit reversal (transformer, bahdanau): main()'s first draw, samples 0..15.
    held = tm.make_reversal_data(np.random.default_rng(tm.SEED), 1000)
    src, lens, dec_in, _ = [torch.from_numpy(a[: tm.N_EXPORT]) for a in held]

    R = np.load(os.path.join(tm.OUT, "transformer", "reference.npz"))
    cap = {}
    with torch.no_grad():
        tm.load_transformer()(src, dec_in, cap=cap)
    for layer in ("enc_self", "dec_self", "dec_cross"):
        same(f"transformer {layer}.query", cap[layer]["query"], R[f"{layer}.query"])
    write("transformer", {"enc_self.query_ids": src, "dec_self.query_ids": dec_in,
                          "dec_cross.query_ids": dec_in, "dec_cross.key_ids": src})

    R = np.load(os.path.join(tm.OUT, "bahdanau", "reference.npz"))
    cap = {}
    with torch.no_grad():
        emitted = load(tm.BahdanauSeq2Seq(), os.path.join(tm.OUT, "bahdanau", "weights.safetensors"))(
            src, lens, cap=cap).argmax(-1)
    same("bahdanau.query", cap["bahdanau"]["query"], R["bahdanau.query"])
    same("bahdanau.key", cap["bahdanau"]["key"], R["bahdanau.key"])
    write("bahdanau", {"bahdanau.query_ids": emitted, "bahdanau.key_ids": src})

    # Copy task (coverage): export_coverage()'s first draw, samples 0..7.
    held = tm.make_copy_data(np.random.default_rng(tm.SEED + 4), 1000)
    csrc = torch.from_numpy(held[0][: tm.CV_EXPORT])
    R = np.load(os.path.join(tm.OUT, "coverage", "reference.npz"))
    ids = {}
    for name, cov in (("cov", True), ("plain", False)):
        cap = {}
        with torch.no_grad():
            m = load(tm.CopyModel(cov), os.path.join(tm.OUT, "coverage", "weights.safetensors"), name + ".")
            emitted = m(csrc, cap=cap).argmax(-1)
        same(f"{name}.query", cap["attn"]["query"], R[f"{name}.query"])
        same(f"{name}.key", cap["attn"]["key"], R[f"{name}.key"])
        ids[f"{name}.query_ids"], ids[f"{name}.key_ids"] = emitted, csrc
    write("coverage", ids)


if __name__ == "__main__":
    main()
