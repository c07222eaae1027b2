#!/usr/bin/env bash
# scripts/test.sh compares "layer hash" lines across machines through
# ea_bench_hash_lines (scripts/kinds.sh). A kind it drops is never compared,
# silently (it once dropped linear). Fails unless, for every kind the runtime
# names (edgeattn-bench --list-kinds), a bench row of that kind passes the
# filter, and unless the bundled encoder-block model's rows all pass it.
#
#   hash_filter_kinds.sh BENCH [MODEL.eatn]
set -euo pipefail
bench=$1 model=${2:-}
# shellcheck source=scripts/kinds.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/kinds.sh"

kinds=$("$bench" --list-kinds)
[[ -n $kinds ]] || { echo "edgeattn-bench --list-kinds printed nothing" >&2; exit 1; }
status=0
while read -r kind; do
  row="layer_x ${kind} int8 1 1 1.00 1.00 1.00 1.00  0badc0de"
  got=$(echo "$row" | ea_bench_hash_lines)
  if [[ $got != "layer_x 0badc0de" ]]; then
    echo "kind '$kind': its bench rows are not in scripts/test.sh's hash comparison (ea_bench_hash_lines)" >&2
    status=1
  fi
done <<< "$kinds"
if [[ -n $model ]]; then
  rows=$("$bench" "$model" --warmup 0 --iters 1 | awk '$NF ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/')
  hashed=$(echo "$rows" | ea_bench_hash_lines | wc -l)
  if [[ $hashed -ne $(echo "$rows" | wc -l) || $hashed -eq 0 ]]; then
    echo "$model: $hashed of these rows are compared:" >&2
    echo "$rows" >&2
    status=1
  fi
fi
[[ $status -eq 0 ]] && echo "every kind's rows are compared ($(echo "$kinds" | paste -sd' '))"
exit $status
