#!/usr/bin/env bash
# Interleaved before/after comparison of two kernels_bench binaries (how the
# before/after tables of docs/performance-history.md are measured):
#
#   scripts/bench_ab.sh BEFORE_BIN AFTER_BIN FILTER [ROUNDS=3] [CORE=1] [MIN_TIME=0.05]
#
# ROUNDS times: BEFORE then AFTER, each with --benchmark_filter=FILTER
# --benchmark_min_time=MIN_TIME under taskset -c CORE. Prints, per benchmark,
# the best cpu_time (ns) of each binary and before/after (> 1: AFTER faster).
# Alternating the two binaries puts both under the same machine state; the
# best of several rounds drops the stretches where a VM neighbour ran.
# BEFORE_BIN is typically from `git worktree add --detach /tmp/ea-before REV`,
# configured and built like build/host.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
before=$1 after=$2 filter=$3 rounds=${4:-3} core=${5:-1} min_time=${6:-0.05}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
  for side in before after; do
    bin=$before
    [[ $side == after ]] && bin=$after
    taskset -c "$core" "$bin" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
      --benchmark_format=csv 2>/dev/null |
      awk -F, -v side="$side" 'NR > 1 && $1 ~ /^"/ { gsub(/"/, "", $1); print side, $1, $4 }' >> "$out"
  done
done
python3 - "$out" <<'PY'
import collections, sys
best, order = collections.defaultdict(dict), []
for line in open(sys.argv[1]):
    side, name, t = line.split()
    if name not in order:
        order.append(name)
    best[name][side] = min(best[name].get(side, float("inf")), float(t))
if not order:
    sys.exit("bench_ab: no benchmark matched the filter")
print(f"{'benchmark':70s} {'before':>10s} {'after':>10s} {'speed-up':>8s}")
for name in order:
    b, a = best[name].get("before"), best[name].get("after")
    if b and a:
        print(f"{name:70s} {b:10.2f} {a:10.2f} {b / a:8.3f}")
PY
