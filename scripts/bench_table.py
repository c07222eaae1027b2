#!/usr/bin/env python3
"""Google Benchmark JSON (kernels_bench) -> a Markdown table, one row per
shape and one column per kernel path (stdlib only).

  scripts/bench_table.py BENCH.json [more.json] --family mha_qs8 [--peak GFLOPS]
      [--metric gflops|us] [--stat median|best] [--paths ref,avx2,avx512vnni,xnnpack]
  scripts/bench_table.py before=OLD.json after=NEW.json --family mha_qs8 ...

A JSON argument written LABEL=FILE puts its paths in columns named
LABEL:path, so two builds (or two machines) of the same suite sit side by
side; several files may share a label (repeated passes).

Cells are GFLOP/s (the GFLOPS counter) or microseconds (--clock real or cpu) of each
benchmark: --stat median (default) takes the median aggregate (or the median
of the repetitions), --stat best the best repetition (needs the repetitions in
the JSON, i.e. a run without --benchmark_report_aggregates_only). With --peak,
GFLOP/s cells also show the percentage of that peak.
"""
import argparse
import json
import statistics
import sys

UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load(paths):
    """(label, entry) pairs; label is '' unless the argument was LABEL=FILE."""
    entries = []
    for arg in paths:
        label, path = arg.split("=", 1) if "=" in arg else ("", arg)
        try:
            with open(path) as f:
                entries += [(label, e) for e in json.load(f)["benchmarks"]]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"bench_table: {path}: cannot read benchmark JSON ({e})")
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--family", required=True)
    ap.add_argument("--metric", choices=["gflops", "us"], default="gflops")
    ap.add_argument("--peak", type=float, help="GFLOP/s to express cells against")
    ap.add_argument("--stat", choices=["median", "best"], default="median")
    ap.add_argument("--paths", help="column order (default: as found)")
    ap.add_argument("--clock", choices=["real", "cpu"], default="real",
                    help="µs cells from real_time (default) or cpu_time (on a busy machine "
                         "cpu_time leaves out the time the benchmark was descheduled)")
    args = ap.parse_args()

    runs, medians, shapes, paths = {}, {}, [], []
    for label, e in load(args.json):
        parts = e["name"].split("/")
        if parts[0] != args.family:
            continue
        aggregate = e.get("run_type") == "aggregate"
        if aggregate and e.get("aggregate_name") != "median":
            continue
        path = parts[-1].removesuffix("_median")
        if label:
            path = f"{label}:{path}"
        shape = "/".join(parts[1:-1])
        clock = "cpu_time" if args.clock == "cpu" else "real_time"
        value = e.get("GFLOPS") if args.metric == "gflops" else e[clock] * UNIT_US[e["time_unit"]]
        if value is None:
            continue
        if aggregate:
            medians[(shape, path)] = value
        else:
            runs.setdefault((shape, path), []).append(value)
        if shape not in shapes:
            shapes.append(shape)
        if path not in paths:
            paths.append(path)
    cells = {}
    for key in set(runs) | set(medians):
        if args.stat == "best" and key in runs:
            cells[key] = max(runs[key]) if args.metric == "gflops" else min(runs[key])
        elif args.stat == "best":
            sys.exit("bench_table: --stat best needs the repetitions (run without "
                     "--benchmark_report_aggregates_only)")
        else:
            cells[key] = medians[key] if key in medians else statistics.median(runs[key])
    if not cells:
        sys.exit(f"bench_table: no '{args.family}' entries")
    if args.paths:
        paths = [p for p in args.paths.split(",") if any((s, p) in cells for s in shapes)]

    unit = "GFLOP/s" if args.metric == "gflops" else "µs"
    print(f"| {args.family} ({unit}) | " + " | ".join(paths) + " |")
    print("| --- | " + " | ".join("---:" for _ in paths) + " |")
    for shape in shapes:
        row = []
        for p in paths:
            v = cells.get((shape, p))
            if v is None:
                row.append("–")
            elif args.metric == "gflops" and args.peak:
                row.append(f"{v:.1f} ({100 * v / args.peak:.0f} %)")
            else:
                row.append(f"{v:.1f}")
        print(f"| {shape.replace('/', ', ')} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
