# shellcheck shell=bash
# The layer kinds as the scripts see them, read from the one list
# (runtime/include/edgeattn/layer_kinds.def). Sourced by scripts/test.sh;
# tests/runtime/hash_filter_kinds.cmake checks the filter against the kinds
# the runtime names.

EA_KINDS_DEF="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/runtime/include/edgeattn/layer_kinds.def"

# Every kind's name, one per line, in the list's order.
ea_layer_kinds() {
  sed -n 's/^EA_LAYER_KIND(\([a-z0-9_]*\),.*/\1/p' "$EA_KINDS_DEF"
}

# "layer hash" lines of edgeattn-bench's table (layer name, output hash =
# last column): the rows whose second column is a kind of the list, and the
# whole model's row (kind column "graph": one Invoke of a model with a graph).
ea_bench_hash_lines() {
  local kinds
  kinds=$(ea_layer_kinds | paste -sd'|')
  [[ -n $kinds ]] || { echo "ea_bench_hash_lines: no kinds in $EA_KINDS_DEF" >&2; return 1; }
  awk -v kinds="^($kinds|graph)\$" '$2 ~ kinds { print $1, $NF }'
}
