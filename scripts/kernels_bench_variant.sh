#!/bin/bash
# kernels_bench as ../shared/peers/ort-grid.sh --compare calls it, but timing
# a variant of the same benchmarks; the JSON names lose the variant so that
# compare.py sets them against ORT's rows. EA_BENCH_VARIANT picks it:
#   workers:2     (default) two workers, the runtime's task split:
#     ORT_THREADS=2 ../shared/peers/ort-grid.sh --only mha,block --passes 2 --compare scripts/kernels_bench_variant.sh
#   stream:int16  the encoder blocks on the 16-bit residual stream (issue 37):
#     EA_BENCH_VARIANT=stream:int16 ../shared/peers/ort-grid.sh --only block --passes 2 --compare scripts/kernels_bench_variant.sh
variant=${EA_BENCH_VARIANT:-workers:2}
case "$variant" in
  workers:[0-9]*|stream:int16) ;;
  *) echo "$0: EA_BENCH_VARIANT must be workers:N or stream:int16, not '$variant'" >&2; exit 2 ;;
esac
args=(); out=
for a in "$@"; do
  case "$a" in
    --benchmark_filter=*)
      f="${a#--benchmark_filter=}"
      # kernels_bench names a worker count after the kernel path and the
      # stream before it: .../heads:4/avx2/workers:2, .../heads:4/stream:int16/avx2
      case "$variant" in
        workers:*) f="${f%\$}/$variant\$" ;;
        *) f="${f%/*}/$variant/${f##*/}" ;;
      esac
      args+=("--benchmark_filter=$f") ;;
    --benchmark_out=*) out="${a#--benchmark_out=}"; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
# EA_KERNELS_BENCH: another kernels_bench (the test of this script sets it).
bench=${EA_KERNELS_BENCH:-"$(cd "$(dirname "$0")/.." && pwd)/build/host/bench/kernels_bench"}
"$bench" "${args[@]}" || exit 1
sed -i "s#/$variant##g" "$out"
