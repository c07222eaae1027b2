#!/usr/bin/python3
"""Where the int8 error of the bundled transformer's decoder_block comes from.

    /usr/bin/python3 tests/converter/decoder_block_study.py [--headroom0]

A float64 simulation (numpy) of models/transformer/decoder_block.spec.json's
layer "decoder" (pre-norm, PyTorch semantics) that rounds each hand-over
the int8 runtime rounds, to its int8 grid at the range calibration chose
(minmax with the converter's auto headroom, or none with --headroom0), on
decoder_block.calib.npz, evaluated on decoder_block.reference.npz against
the unrounded simulation. Rounding points: the block's input x and the
memory, the LayerNorm outputs (self.query, cross.query, norm3), each
attention's q/k/v projections, context and output, the residual adds
(add1, add2, output), the FFN's hidden (cut where GELU is flat, as the
converter does) and activation outputs, and every weight (int8 per output
channel). Softmax and LayerNorm arithmetic are float: the runtime's integer
versions add nothing measurable here (docs/quantization.md). Prints the
relative L2 error (%) with every rounding, with one rounding alone, with all
but one, and with groups left out (docs/quantization.md, "Transformer blocks").
"Every rounding" is format 4's runtime; since format 5 the attentions' and
the FFN's outputs are not rounded on their own (the residual adds run in
the projections' epilogues, contract 5b): the "without sub-layer outputs"
line.
"""
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from train_models import read_safetensors  # noqa: E402

M = os.path.join(ROOT, "models", "transformer")
W = {k: v.astype(np.float64) for k, v in read_safetensors(os.path.join(M, "weights.safetensors"))[0].items()}
E, H = 60, 4
D = E // H
verf = np.vectorize(math.erf)


def ln(x, k):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * W["decoder." + k + ".weight"] + W["decoder." + k + ".bias"]


def gelu(x):
    return 0.5 * x * (1 + verf(x / math.sqrt(2)))


def wq(w):  # symmetric int8 per output channel
    s = np.abs(w).max(1, keepdims=True) / 127
    return np.round(w / s) * s


def grid(lo, hi):  # the converter's act_quant
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = float(np.float32((hi - lo) / 255))
    return s, float(np.clip(np.round(-128 - lo / s), -128, 127))


class Rounder:
    """Records values (calibration) or rounds the points `on` selects."""

    def __init__(self, on=None, ranges=None):
        self.on, self.ranges, self.seen = on, ranges, {}

    def __call__(self, key, x, valid=None):
        if self.on is None:
            self.seen.setdefault(key, []).append((x if valid is None else x[:valid]).copy())
            return x
        if not self.on(key):
            return x
        s, zp = self.ranges[key]
        return (np.clip(np.round(x / s) + zp, -128, 127) - zp) * s

    def weights(self, w):
        return wq(w) if self.on is not None and self.on("weights") else w


def mha(r, role, x, mem, valid):
    p = "decoder." + {"self": "self_attn", "cross": "cross_attn"}[role] + "."
    wi, bi = r.weights(W[p + "in_proj_weight"]), W[p + "in_proj_bias"]
    wo, bo = r.weights(W[p + "out_proj.weight"]), W[p + "out_proj.bias"]
    kv = x if mem is None else mem
    q = r(role + ".q_proj", x @ wi[:E].T + bi[:E])
    k = r(role + ".k_proj", kv @ wi[E:2 * E].T + bi[E:2 * E], valid)
    v = r(role + ".v_proj", kv @ wi[2 * E:].T + bi[2 * E:], valid)
    ctx = np.zeros((x.shape[0], E))
    for h in range(H):
        sl = slice(h * D, (h + 1) * D)
        s = q[:, sl] @ k[:, sl].T / math.sqrt(D)
        if mem is None:
            s = s + np.triu(np.full(s.shape, -np.inf), 1)
        elif valid < s.shape[1]:
            s[:, valid:] = -np.inf
        p_ = np.exp(s - s.max(1, keepdims=True))
        ctx[:, sl] = p_ / p_.sum(1, keepdims=True) @ v[:, sl]
    return r(role + ".output", r(role + ".context", ctx) @ wo.T + bo)


def block(r, x, mem, valid):
    x, mem = r("query", x), r("key", mem, valid)
    h = r("add1", x + mha(r, "self", r("self.query", ln(x, "norm1")), None, None))
    h = r("add2", h + mha(r, "cross", r("cross.query", ln(h, "norm2")), mem, valid))
    a = r("norm3", ln(h, "norm3"))
    f = r("ffn.hidden", a @ r.weights(W["decoder.ff1.weight"]).T + W["decoder.ff1.bias"])
    f = r("ffn.act", gelu(f))
    f = r("ffn.output", f @ r.weights(W["decoder.ff2.weight"]).T + W["decoder.ff2.bias"])
    return r("output", h + f)


def samples(name):
    d = np.load(os.path.join(M, name))
    return [(d["decoder.query"][i].astype(np.float64), d["decoder.key"][i].astype(np.float64),
             int(d["decoder.kv_valid_len"][i])) for i in range(d["decoder.query"].shape[0])]


def t_quantile(q, df):  # calib_method.cc's student_t_quantile
    def cdf(t):
        a = math.atan(t / math.sqrt(df))
        c = math.cos(a) ** 2
        s, term, k = 1.0, 1.0, 3 if df % 2 else 2
        while k <= df - 2:
            term *= c * (k - 1) / k
            s += term
            k += 2
        two = (2 / math.pi * (a + (math.sin(a) * math.cos(a) * s if df > 1 else 0))) if df % 2 else math.sin(a) * s
        return 0.5 * (1 + two)
    lo, hi = 0.0, 1.0
    while cdf(hi) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2


def chosen_range(vals, auto):  # minmax + calib_method.cc's estimated_ends
    lo, hi = min(v.min() for v in vals), max(v.max() for v in vals)
    if not auto or len(vals) < 2:
        return lo, hi
    n = len(vals)

    def end(ext, obs):
        d = [obs - e for e in ext]
        m = sum(d) / n
        sd = math.sqrt(sum((e - m) ** 2 for e in d) / (n - 1))
        return obs + min(max(t_quantile(0.975, n - 1) * sd * math.sqrt(1 + 1 / n) - m, 0.0), abs(obs))
    return -end([-v.min() for v in vals], -lo), end([v.max() for v in vals], hi)


def main():
    auto = "--headroom0" not in sys.argv
    cal, ref = samples("decoder_block.calib.npz"), samples("decoder_block.reference.npz")
    rec = Rounder()
    for s in cal:
        block(rec, *s)
    ranges = {k: grid(*chosen_range(v, auto)) for k, v in rec.seen.items()}
    # The converter's cut of the hidden range (quantize/block_quant.cc activation_input_quant).
    s_act = ranges["ffn.act"][0]
    lo, hi = -64.0, -0.7518
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if abs(gelu(mid)) <= 0.25 * s_act else (lo, mid)
    s, zp = ranges["ffn.hidden"]
    top, target = s * (127 - zp), lo
    while True:
        s2, zp2 = grid(target, top)
        if s2 * (-128 - zp2) <= lo:
            break
        target -= s2 * (-128 - zp2) - lo + 0.5 * s2
    if s2 * (-128 - zp2) > s * (-128 - zp):
        ranges["ffn.hidden"] = (s2, zp2)
    exact = [block(Rounder(lambda k: False, ranges), *x) for x in ref]

    def rel(on):
        r = Rounder(on, ranges)
        num = sum(((block(r, *x) - y) ** 2).sum() for x, y in zip(ref, exact))
        return 100 * math.sqrt(num / sum((y ** 2).sum() for y in exact))
    points = sorted(ranges) + ["weights"]
    print("calibration: minmax, headroom %s" % ("auto" if auto else "0"))
    print("%-34s %6.3f" % ("every rounding", rel(lambda k: True)))
    for k in points:
        print("%-34s %6.3f   all but it %6.3f" % ("only " + k, rel(lambda kk, k=k: kk == k),
                                                  rel(lambda kk, k=k: kk != k)))
    groups = {
        "sub-layer outputs (self/cross.output, ffn.output)": {"self.output", "cross.output", "ffn.output"},
        "residual adds (add1, add2)": {"add1", "add2"},
        "LayerNorm outputs": {"self.query", "cross.query", "norm3"},
        "FFN hidden and activation": {"ffn.hidden", "ffn.act"},
        "block input and memory": {"query", "key"},
    }
    for name, g in groups.items():
        print("%-34s %6.3f" % ("without " + name, rel(lambda k, g=g: k not in g)))


if __name__ == "__main__":
    main()
