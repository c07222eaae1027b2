#!/bin/bash
# kernels_bench as ../shared/peers/ort-grid.sh --compare calls it, but timing
# the /workers:2 variants (two workers, the runtime's task split) of the same
# benchmarks; the JSON names lose "/workers:2" so that compare.py sets them
# against ORT's rows:
#   ORT_THREADS=2 ../shared/peers/ort-grid.sh --only mha,block --passes 2 --compare scripts/kernels_bench_workers.sh
args=(); out=
for a in "$@"; do
  case "$a" in
    --benchmark_filter=*) f="${a#--benchmark_filter=}"; args+=("--benchmark_filter=${f%\$}/workers:2\$") ;;
    --benchmark_out=*) out="${a#--benchmark_out=}"; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
# EA_KERNELS_BENCH: another kernels_bench (the test of this script sets it).
bench=${EA_KERNELS_BENCH:-"$(cd "$(dirname "$0")/.." && pwd)/build/host/bench/kernels_bench"}
"$bench" "${args[@]}" || exit 1
sed -i 's#/workers:2##g' "$out"
