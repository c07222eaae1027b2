#!/usr/bin/env python3
"""Guest instructions per function from tb_profile.c output (stdlib only).

  profile_by_function.py BINARY PROFILE [BASELINE] [--top N] [--nm TOOL] [--expect-total N]

PROFILE (and BASELINE) are the stderr of `qemu-<arch> -plugin libtb_profile.so
-d plugin BINARY ...`. With BASELINE the figures are PROFILE minus BASELINE
per function: for edgeattn-bench, `--iters 2` minus `--iters 1` is one call
of the layer, as in docs/performance.md's instruction counts.

Blocks are matched to BINARY's function symbols (`nm -C -n`). qemu-user
loads a position-independent executable at an offset this script does not
get from the plugin, so it tries the usual ones (none, aarch64's
0x5500000000, arm's 0x40000000) and keeps the one that puts the most
instructions inside BINARY's functions; blocks outside (the C library, the
dynamic loader) are reported as "<outside BINARY>".
--expect-total N exits with status 1 unless PROFILE's total is within 0.1 %
of N: a check against insn_count.c's count of the same command (two runs of
edgeattn-bench differ by up to about 1,000 instructions, from its timing
code, so not exactly N).
"""
import argparse
import bisect
import collections
import subprocess
import sys

LOAD_OFFSETS = (0, 0x5500000000, 0x40000000)
OUTSIDE = "<outside BINARY>"


def read_profile(path):
    blocks = collections.Counter()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "tb":
                blocks[int(parts[1], 16)] += int(parts[2])
    return blocks


def read_symbols(binary, nm):
    out = subprocess.run([nm, "-C", "-n", "--defined-only", binary], capture_output=True, text=True, check=True)
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    return syms


def attribute(blocks, syms, offset):
    addrs = [a for a, _ in syms]
    end = addrs[-1] + 0x10000  # the last function's size is unknown; close enough
    per_fn = collections.Counter()
    for vaddr, n in blocks.items():
        a = vaddr - offset
        i = bisect.bisect_right(addrs, a) - 1
        per_fn[syms[i][1] if 0 <= i and a < end else OUTSIDE] += n
    return per_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("profile")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--nm", default="nm", help="nm for BINARY's architecture (binutils' nm reads any ELF)")
    ap.add_argument("--expect-total", type=int)
    args = ap.parse_args()

    syms = read_symbols(args.binary, args.nm)
    if not syms:
        sys.exit(f"{args.binary}: no function symbols (stripped?)")
    blocks = read_profile(args.profile)
    total = sum(blocks.values())
    if not blocks:
        sys.exit(f"{args.profile}: no 'tb' lines (was the plugin loaded with -d plugin?)")
    offset = max(LOAD_OFFSETS, key=lambda o: total - attribute(blocks, syms, o)[OUTSIDE])
    per_fn = attribute(blocks, syms, offset)
    if args.baseline:
        base = attribute(read_profile(args.baseline), syms, offset)
        per_fn = collections.Counter({k: per_fn[k] - base.get(k, 0) for k in set(per_fn) | set(base)})
    shown = sum(per_fn.values())
    print(f"instructions: {shown}" + (" (profile minus baseline)" if args.baseline else "") +
          f"; load offset {offset:#x}")
    for name, n in sorted(per_fn.items(), key=lambda kv: -kv[1])[: args.top]:
        if n != 0:
            print(f"{n:12d} {100.0 * n / shown if shown else 0.0:6.1f} %  {name}")
    if args.expect_total is not None and abs(total - args.expect_total) > args.expect_total // 1000:
        print(f"error: the profile's total {total} is not within 0.1 % of {args.expect_total}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
