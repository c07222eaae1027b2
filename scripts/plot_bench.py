#!/usr/bin/env python3
"""Plot kernels_bench latency against sequence length as an SVG (stdlib only).

Reads Google Benchmark JSON files (kernels_bench --benchmark_out=FILE
--benchmark_out_format=json) and draws, for one benchmark family and fixed
values of its other parameters, the latency in microseconds (log y axis)
against one name parameter, one line per kernel path (the last "/" component
of the benchmark name). With repetitions the "median" aggregate is used when
present, else the median of the iteration runs.

  scripts/plot_bench.py bench.json --family mha_qs8 --x L --fix d=128 --fix heads=4 \\
      -o out/mha_qs8_d128_h4.svg
  scripts/plot_bench.py bench.json --family additive_qs8 --x kv --fix keys=projected -o add.svg
  scripts/plot_bench.py bench.json --family qs8_attention --x q --same kv=q --fix hd=64 -o sdpa.svg
  scripts/plot_bench.py bench.json --list            # families and their parameters

Benchmark names look like family/key:value/.../path (e.g.
mha_qs8/L:64/d:128/heads:4/avx2). Exit status 1 on any error, with one line
on stderr.
"""

import argparse
import json
import math
import os
import statistics
import sys
from xml.sax.saxutils import escape

PROG = "plot_bench.py"

# Google Benchmark appends these to a name when set per benchmark; they are
# not part of the benchmark's identity here.
GB_KEYS = {"min_time", "min_warmup_time", "repeats", "iterations", "threads"}
GB_WORDS = {"real_time", "manual_time", "process_time"}

TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}

# Stable colours per dispatch path, so every plot in the docs agrees
# (Okabe-Ito based, readable for colour-blind viewers), then a fallback cycle.
PATH_STYLE = {
    "ref": ("#6b6b6b", "circle"),
    "avx2": ("#0072b2", "square"),
    "avxvnni": ("#e69f00", "diamond"),
    "neon": ("#009e73", "triangle"),
    "neondot": ("#cc79a7", "triangle-down"),
    "cmsis-dsp": ("#d55e00", "square"),
    "helium": ("#56b4e9", "diamond"),
}
FALLBACK_COLOURS = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#000000"]
FALLBACK_MARKERS = ["circle", "square", "diamond", "triangle", "triangle-down"]

FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


class PlotError(Exception):
    pass


# ----------------------------------------------------------------- input ----

def parse_name(name):
    """'mha_qs8/L:64/d:128/heads:4/avx2' -> ('mha_qs8', {'L': '64', ...}, 'avx2')."""
    parts = name.split("/")
    family, params, path = parts[0], {}, None
    for comp in parts[1:]:
        if ":" in comp:
            key, value = comp.split(":", 1)
            if key not in GB_KEYS:
                params[key] = value
        elif comp not in GB_WORDS:
            path = comp
    return family, params, path or "(default)"


def load_file(filename):
    """Latency per benchmark run name in one file: {run_name: (us, n_reps)}."""
    try:
        with open(filename, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise PlotError(f"{filename}: {e.strerror or e}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PlotError(f"{filename}: not a JSON file ({e})")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise PlotError(f"{filename}: no 'benchmarks' list (not Google Benchmark JSON output?)")

    medians, runs = {}, {}
    for b in doc["benchmarks"]:
        if not isinstance(b, dict) or b.get("error_occurred"):
            continue
        name = b.get("run_name") or b.get("name")
        if not isinstance(name, str) or "real_time" not in b:
            continue
        unit = b.get("time_unit", "ns")
        if unit not in TO_US:
            raise PlotError(f"{filename}: {name}: unknown time_unit '{unit}'")
        try:
            us = float(b["real_time"]) * TO_US[unit]
        except (TypeError, ValueError):
            raise PlotError(f"{filename}: {name}: real_time is not a number")
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                reps = b.get("repetitions")
                medians[name] = (us, reps if isinstance(reps, int) else 0)
        else:
            runs.setdefault(name, []).append(us)

    result = {}
    for name, values in runs.items():
        result[name] = (statistics.median(values), len(values))
    result.update(medians)  # the median aggregate wins over single runs
    return doc.get("context", {}), result


def load_all(filenames):
    """[(filename, context, {run_name: (us, reps)})]"""
    return [(fn, *load_file(fn)) for fn in filenames]


# ------------------------------------------------------------- selection ----

def num(value):
    try:
        return int(value)
    except ValueError:
        return float(value)


def fmt_values(values):
    def key(v):
        try:
            return (0, num(v), v)
        except ValueError:
            return (1, 0, v)
    return ", ".join(sorted(values, key=key))


def list_families(loaded, only_family=None):
    fams = {}
    for _, _, runs in loaded:
        for name in runs:
            family, params, path = parse_name(name)
            if only_family and family != only_family:
                continue
            f = fams.setdefault(family, {"n": 0, "paths": set(), "params": {}})
            f["n"] += 1
            f["paths"].add(path)
            for k, v in params.items():
                f["params"].setdefault(k, set()).add(v)
    if not fams:
        raise PlotError(f"no benchmarks of family '{only_family}'" if only_family
                        else "no benchmarks in the input")
    lines = []
    for family in sorted(fams):
        f = fams[family]
        lines.append(f"{family}  ({f['n']} benchmarks; paths: {', '.join(sorted(f['paths']))})")
        for k, vs in f["params"].items():
            lines.append(f"  {k}: {fmt_values(vs)}")
    return "\n".join(lines)


def select(loaded, family, xkey, fixed, same=()):
    """Series {label: {x: us}}, the repetition counts seen, and the free
    parameters that vary along x (each point still has one value of them)."""
    points = {}  # (path, file index) -> {x: (us, reps, params)}
    seen_family = False
    for fi, (_, _, runs) in enumerate(loaded):
        for name, (us, reps) in runs.items():
            fam, params, path = parse_name(name)
            if fam != family:
                continue
            seen_family = True
            if any(params.get(k) != v for k, v in fixed.items()) or xkey not in params:
                continue
            if any(a not in params or params.get(a) != params.get(b) for a, b in same):
                continue
            try:
                x = num(params[xkey])
            except ValueError:
                raise PlotError(f"{name}: parameter {xkey} is not a number ('{params[xkey]}')")
            slot = points.setdefault((path, fi), {})
            if x in slot and slot[x][2] != params:
                free = sorted(k for k in params if k != xkey and k not in fixed
                              and slot[x][2].get(k) != params[k])
                raise PlotError(
                    f"several {family} entries per point; fix the other parameter(s) with "
                    + " ".join(f"--fix {k}=VALUE" for k in free)
                    + f" ({'; '.join(k + ': ' + fmt_values(values_of(loaded, family, k)) for k in free)})")
            slot[x] = (us, reps, params)
    if not seen_family:
        fams = sorted({parse_name(n)[0] for _, _, r in loaded for n in r})
        raise PlotError(f"no benchmarks of family '{family}' (found: {', '.join(fams) or 'none'})")
    if not points:
        desc = " ".join([f"{k}={v}" for k, v in fixed.items()] + [f"{a}={b}" for a, b in same])
        raise PlotError(f"no {family} entries with parameter {xkey}"
                        + (f" and {desc}" if desc else "") + f" (try --list --family {family})")

    # The same path in several files with overlapping points: keep them apart.
    by_path = {}
    for (path, fi) in points:
        by_path.setdefault(path, []).append(fi)
    clash = any(len(fis) > 1 and _overlap([points[(p, fi)] for fi in fis])
                for p, fis in by_path.items())
    varying = set()
    for pts in points.values():
        for _, _, params in pts.values():
            for k, v in params.items():
                if k != xkey and k not in fixed and k not in dict(same) and any(p.get(k) != v for _, _, p in pts.values()):
                    varying.add(k)
    stems = [os.path.splitext(os.path.basename(fn))[0] for fn, _, _ in loaded]
    tags = [s if stems.count(s) == 1 else f"{s} #{i + 1}" for i, s in enumerate(stems)]
    series, reps_seen = {}, set()
    for (path, fi), pts in sorted(points.items(), key=lambda kv: (path_order(kv[0][0]), kv[0][1])):
        label = f"{path} ({tags[fi]})" if clash else path
        dst = series.setdefault(label, {})
        for x, (us, reps, _) in pts.items():
            dst[x] = us
            reps_seen.add(reps)
    return series, reps_seen, sorted(varying)


def values_of(loaded, family, key):
    return {parse_name(n)[1][key] for _, _, r in loaded for n in r
            if parse_name(n)[0] == family and key in parse_name(n)[1]}


def _overlap(dicts):
    keys = [set(d) for d in dicts]
    return any(keys[i] & keys[j] for i in range(len(keys)) for j in range(i + 1, len(keys)))


def path_order(path):
    order = list(PATH_STYLE)
    return (order.index(path) if path in order else len(order), path)


# -------------------------------------------------------------------- SVG ----

def fmt_num(v):
    if v >= 1000:
        return f"{v:,.0f}".replace(",", "\u2009")  # thin-space thousands
    if v >= 1:
        return f"{v:g}"
    return f"{v:.10f}".rstrip("0").rstrip(".")


def y_ticks(lo, hi):
    """Axis range (padded around the data in log space), labelled major ticks
    (1, or 1-2-5 when the range is short) and unlabelled minor ticks."""
    llo, lhi = math.log10(lo), math.log10(hi)
    pad = max((lhi - llo) * 0.08, 0.12)
    y0, y1 = 10.0 ** (llo - pad), 10.0 ** (lhi + pad)
    span = math.log10(y1 / y0)
    mults = [1] if span > 3 else ([1, 2, 5] if span > 0.9 else [1, 2, 3, 5, 7])
    major, minor = [], []
    for e in range(math.floor(math.log10(y0)), math.ceil(math.log10(y1)) + 1):
        for m in range(1, 10):
            v = m * 10.0 ** e
            if y0 <= v <= y1:
                (major if m in mults else minor).append(v)
    return y0, y1, major, minor


def marker_svg(kind, x, y, colour, r=4.2):
    common = f'fill="{colour}" stroke="#ffffff" stroke-width="1.2"'
    if kind == "square":
        s = r * 0.9
        return f'<rect x="{x - s:.1f}" y="{y - s:.1f}" width="{2 * s:.1f}" height="{2 * s:.1f}" {common}/>'
    if kind == "diamond":
        s = r * 1.25
        return (f'<path d="M{x:.1f} {y - s:.1f}L{x + s:.1f} {y:.1f}L{x:.1f} {y + s:.1f}'
                f'L{x - s:.1f} {y:.1f}Z" {common}/>')
    if kind in ("triangle", "triangle-down"):
        s = r * 1.3
        k = 1 if kind == "triangle" else -1
        return (f'<path d="M{x:.1f} {y - k * s:.1f}L{x + s * 0.95:.1f} {y + k * s * 0.7:.1f}'
                f'L{x - s * 0.95:.1f} {y + k * s * 0.7:.1f}Z" {common}/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {common}/>'


def assign_styles(labels):
    """(colour, marker) per label: the path's own style, else the next free one."""
    styles, used = {}, set()
    free = iter([(c, FALLBACK_MARKERS[i % len(FALLBACK_MARKERS)]) for i, c in enumerate(FALLBACK_COLOURS)] * 4)
    for label in labels:
        path = label.split(" (")[0]
        style = PATH_STYLE.get(path)
        while style is None or style[0] in used:
            style = next(free, ("#000000", "circle"))
            if len(used) >= len(FALLBACK_COLOURS):
                break
        used.add(style[0])
        styles[label] = style
    return styles


def render_svg(series, xkey, title, subtitle, xscale, width=760, height=460):
    xs = sorted({x for pts in series.values() for x in pts})
    ys = [us for pts in series.values() for us in pts.values()]
    if min(ys) <= 0:
        raise PlotError("a latency is zero or negative; cannot use a log axis")
    if xscale == "log" and min(xs) <= 0:
        raise PlotError(f"parameter {xkey} has values <= 0; use --xscale linear")

    legend_w = 16 + max(len(label) for label in series) * 7.2 + 34
    ml, mr, mt, mb = 74, max(120, legend_w + 32), 70 if subtitle else 54, 58
    pw, ph = width - ml - mr, height - mt - mb

    tx = (lambda v: math.log2(v)) if xscale == "log" else (lambda v: float(v))
    x0, x1 = tx(xs[0]), tx(xs[-1])
    pad = (x1 - x0) * 0.06 if x1 > x0 else 1.0
    x0, x1 = x0 - pad, x1 + pad

    def px(v):
        return ml + (tx(v) - x0) / (x1 - x0) * pw

    y0, y1, major, minor = y_ticks(min(ys), max(ys))
    ly0, ly1 = math.log10(y0), math.log10(y1)

    def py(v):
        return mt + ph - (math.log10(v) - ly0) / (ly1 - ly0) * ph

    out = []
    add = out.append
    add('<?xml version="1.0" encoding="UTF-8"?>')
    add(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{escape(FONT)}" font-size="12" fill="#222">')
    add(f'<title>{escape(title)}</title>')
    add(f'<rect width="{width}" height="{height}" fill="#ffffff"/>')
    add(f'<text x="{ml}" y="24" font-size="15" font-weight="600">{escape(title)}</text>')
    if subtitle:
        add(f'<text x="{ml}" y="42" font-size="11" fill="#666">{escape(subtitle)}</text>')

    # Grid and y ticks.
    add('<g stroke-width="1">')
    for v in minor:
        add(f'<line x1="{ml}" x2="{ml + pw}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#f2f2f2"/>')
    for v in major:
        add(f'<line x1="{ml}" x2="{ml + pw}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#dedede"/>')
    for x in xs:
        add(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{mt}" y2="{mt + ph}" stroke="#efefef"/>')
    add('</g>')
    add(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#9a9a9a"/>')
    add('<g font-size="11" fill="#444">')
    for v in major:
        y = py(v)
        add(f'<line x1="{ml - 5}" x2="{ml}" y1="{y:.1f}" y2="{y:.1f}" stroke="#9a9a9a"/>')
        add(f'<text x="{ml - 8}" y="{y + 3.8:.1f}" text-anchor="end">{fmt_num(v)}</text>')
    for v in minor:
        y = py(v)
        add(f'<line x1="{ml - 3}" x2="{ml}" y1="{y:.1f}" y2="{y:.1f}" stroke="#b5b5b5"/>')
    # x ticks at the measured values (thinned if crowded).
    last = -1e9
    for x in xs:
        X = px(x)
        add(f'<line x1="{X:.1f}" x2="{X:.1f}" y1="{mt + ph}" y2="{mt + ph + 5}" stroke="#9a9a9a"/>')
        if X - last >= 30:
            add(f'<text x="{X:.1f}" y="{mt + ph + 19}" text-anchor="middle">{fmt_num(x)}</text>')
            last = X
    add('</g>')
    # Axis labels.
    add(f'<text x="{ml + pw / 2:.1f}" y="{height - 14}" text-anchor="middle" font-size="12">'
        f'{escape(xkey)}{" (log scale)" if xscale == "log" else ""}</text>')
    add(f'<text transform="translate(18 {mt + ph / 2:.1f}) rotate(-90)" text-anchor="middle" '
        f'font-size="12">latency (µs, log scale)</text>')

    # Series.
    styles = assign_styles(series)
    for label, pts in series.items():
        colour, marker = styles[label]
        coords = [(px(x), py(pts[x]), x, pts[x]) for x in sorted(pts)]
        add(f'<g><title>{escape(label)}</title>')
        if len(coords) > 1:
            d = " ".join(f"{'M' if j == 0 else 'L'}{X:.1f} {Y:.1f}" for j, (X, Y, _, _) in enumerate(coords))
            add(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2" '
                f'stroke-linejoin="round" stroke-linecap="round"/>')
        for X, Y, x, us in coords:
            add(f'<g><title>{escape(label)}, {escape(xkey)}={fmt_num(x)}: {us:.4g} µs</title>'
                f'{marker_svg(marker, X, Y, colour)}</g>')
        add('</g>')

    # Legend, right of the plot.
    lx, ly = ml + pw + 18, mt + 4
    lh = 20 * len(series) + 12
    add(f'<rect x="{lx}" y="{ly}" width="{legend_w:.0f}" height="{lh}" rx="4" '
        f'fill="#ffffff" stroke="#d0d0d0"/>')
    for i, label in enumerate(series):
        colour, marker = styles[label]
        cy = ly + 16 + 20 * i
        add(f'<line x1="{lx + 10}" x2="{lx + 34}" y1="{cy}" y2="{cy}" stroke="{colour}" stroke-width="2"/>')
        add(marker_svg(marker, lx + 22, cy, colour))
        add(f'<text x="{lx + 42}" y="{cy + 4}">{escape(label)}</text>')
    add('</svg>')
    return "\n".join(out) + "\n"


def default_subtitle(loaded, reps_seen):
    ctx = loaded[0][1] if loaded else {}
    bits = []
    reps = sorted(r for r in reps_seen if r and r > 1)
    bits.append(f"median of {reps[0] if len(reps) == 1 else '/'.join(map(str, reps))} repetitions"
                if reps else "single run per point")
    if isinstance(ctx, dict):
        cpus, mhz = ctx.get("num_cpus"), ctx.get("mhz_per_cpu")
        if cpus and mhz:
            bits.append(f"{cpus} CPUs @ {mhz} MHz")
        if ctx.get("host_name"):
            bits.append(str(ctx["host_name"]))
        if ctx.get("date"):
            bits.append(str(ctx["date"])[:19].replace("T", " "))
    if len(loaded) > 1:
        bits.append(f"{len(loaded)} files")
    return " · ".join(bits)


# ------------------------------------------------------------------- main ----

def main(argv=None):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Plot kernels_bench latency (µs, log y) against a name parameter as an SVG.")
    ap.add_argument("files", nargs="+", metavar="BENCH.json", help="Google Benchmark JSON output")
    ap.add_argument("--family", help="benchmark family (first name component), e.g. mha_qs8")
    ap.add_argument("--x", default="L", dest="xkey", help="name parameter for the x axis: L, kv, q, ... (default L)")
    ap.add_argument("--fix", action="append", default=[], metavar="KEY=VALUE",
                    help="keep only entries whose parameter KEY is VALUE (repeatable)")
    ap.add_argument("--same", action="append", default=[], metavar="KEY=KEY2",
                    help="keep only entries whose parameters KEY and KEY2 are equal, e.g. "
                         "--same kv=q for the q = kv self-attention points of qs8_attention")
    ap.add_argument("-o", "--output", help="SVG file to write (parent directories are created)")
    ap.add_argument("--title", help="plot title (default: family and fixed parameters)")
    ap.add_argument("--subtitle", help="line under the title (default: statistic, machine, date)")
    ap.add_argument("--xscale", choices=["log", "linear"], default="log",
                    help="x axis scale (default log, base 2)")
    ap.add_argument("--list", action="store_true", help="print the families and parameter keys found, and exit")
    args = ap.parse_args(argv)

    try:
        fixed = {}
        for f in args.fix:
            key, sep, value = f.partition("=")
            if not sep or not key or not value:
                raise PlotError(f"--fix '{f}': expected KEY=VALUE, e.g. --fix d=128")
            fixed[key] = value
        same = []
        for f in args.same:
            key, sep, other = f.partition("=")
            if not sep or not key or not other:
                raise PlotError(f"--same '{f}': expected KEY=KEY2, e.g. --same kv=q")
            same.append((key, other))
        loaded = load_all(args.files)
        if args.list:
            print(list_families(loaded, args.family))
            return 0
        if not args.family:
            raise PlotError("--family is required (see --list)")
        if not args.output:
            raise PlotError("-o/--output is required")
        if args.xkey in fixed:
            raise PlotError(f"--x {args.xkey} is also fixed with --fix")
        series, reps_seen, varying = select(loaded, args.family, args.xkey, fixed, same)
        if varying:
            print(f"{PROG}: note: {', '.join(varying)} changes along {args.xkey} "
                  f"(one value per point; --fix or --same to pin it)", file=sys.stderr)
        conds = [f"{k}={v}" for k, v in fixed.items()] + [f"{a}={b}" for a, b in same]
        title = args.title or (f"{args.family}: latency vs {args.xkey}"
                               + (f" ({', '.join(conds)})" if conds else ""))
        subtitle = args.subtitle if args.subtitle is not None else default_subtitle(loaded, reps_seen)
        svg = render_svg(series, args.xkey, title, subtitle, args.xscale)
        parent = os.path.dirname(args.output)
        try:
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(svg)
        except OSError as e:
            raise PlotError(f"{args.output}: {e.strerror or e}")
        npts = sum(len(p) for p in series.values())
        print(f"{args.output}: {len(series)} series, {npts} points")
        return 0
    except PlotError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
