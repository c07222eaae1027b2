#!/bin/bash
# The peers' whole models with edgeattn, as a user converts them:
#   scripts/peer_models.sh DIR [--threads N] [--iters N] [--reconvert] [--residual int8|int16]
# DIR holds edgeattn/<cfg>/ (weights.safetensors with timm ViT names,
# calib.npz and reference.npz with `x` and `logits`, model.json), as
# ../shared/peers/make_models.py writes them (ort-grid.sh --only model:
# ~/.cache/edgeattn-peers/models). For each <cfg> the script writes a spec
# from model.json, converts int8 from calib.npz's `x` (--data-key), evaluates
# the whole model on reference.npz's `x` against its `logits`, times one
# Invoke (edgeattn-bench --layer model) and prints one line:
#   model <cfg> <median us per inference> <relative L2 of the logits>
# Run it interleaved with `bench_ort --only model` on one core to compare
# (docs/performance.md, "Whole models against ONNX Runtime").
# BUILD: the build tree with edgeattn-convert and edgeattn-bench (build/host).
# OUT: where the specs and models go (DIR/../edgeattn-built, kept between runs;
# a model is converted again only when its inputs, the converter or
# --reconvert say so).
set -euo pipefail
usage() { echo "usage: $0 DIR [--threads N] [--iters N] [--reconvert] [--residual int8|int16]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1; shift
threads=1; iters=100; reconvert=0; residual=
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=${2:?}; shift 2 ;;
    --iters) iters=${2:?}; shift 2 ;;
    --reconvert) reconvert=1; shift ;;
    --residual) residual=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build/host}
convert=$build/converter/edgeattn-convert
bench=$build/bench/edgeattn-bench
for t in "$convert" "$bench"; do
  [ -x "$t" ] || { echo "$0: $t is not built (cmake --build $build)" >&2; exit 1; }
done
[ -d "$dir/edgeattn" ] || { echo "$0: $dir has no edgeattn/ (run ../shared/peers/ort-grid.sh --only model)" >&2; exit 1; }
out=${OUT:-$(dirname "$dir")/edgeattn-built}
mkdir -p "$out"

found=0
for m in "$dir"/edgeattn/*/; do
  cfg=$(basename "$m")
  [ -f "$m/model.json" ] || continue
  found=1
  spec=$out/$cfg.spec.json
  # --residual: the converter's option (the blocks' residual stream), and its own model file.
  model=$out/${cfg}_int8${residual:+_res$residual}.eatn
  tag=$cfg${residual:+.res$residual}
  # The spec from model.json: the whole-model preset vit (timm's names; the
  # converter reads the blocks' count and widths from the weights and writes
  # embedding linear -> class token + positions -> blocks -> the class row ->
  # final LayerNorm on that row alone, as the peers' ORT model does -> head).
  /usr/bin/python3 - "$m/model.json" "$spec" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
if m["norm"] != "pre":
    sys.exit("peer_models.sh: %s has %s-norm blocks; preset vit is timm's pre-norm ViT" % (m["name"], m["norm"]))
spec = {"model": m["name"], "preset": "vit", "num_heads": m["heads"], "depth": m["depth"], "eps": m["norm_eps"],
        "activation": {"gelu_erf": "gelu", "gelu_tanh": "gelu_tanh"}[m["activation"]],
        "pool": {"first": "token", "cls_token": "token", "mean": "avg"}[m["pooling"]]}
text = json.dumps(spec, indent=1) + "\n"
try:
    same = open(sys.argv[2]).read() == text
except OSError:
    same = False
if not same:
    open(sys.argv[2], "w").write(text)
EOF
  if [ $reconvert = 1 ] || [ ! -f "$model" ] || [ "$spec" -nt "$model" ] || [ "$m/weights.safetensors" -nt "$model" ] ||
     [ "$m/calib.npz" -nt "$model" ] || [ "$convert" -nt "$model" ]; then
    "$convert" convert --weights "$m/weights.safetensors" --spec "$spec" --calib "$m/calib.npz" \
      --data-key x=embed.query --dtype int8 ${residual:+--residual $residual} -o "$model" --quiet \
      > "$out/$tag.report.txt" 2> "$out/$tag.warnings.txt"
  fi
  "$convert" eval "$model" --reference "$m/reference.npz" --data-key x=embed.query --data-key logits=head.output \
    --repeat 1 --json "$out/$tag.eval.json" > "$out/$tag.eval.txt"
  rel=$(/usr/bin/python3 -c 'import json,sys; print("%.4g" % [l for l in json.load(open(sys.argv[1]))["layers"]
                                                            if l["name"] == "model"][0]["relative_l2"])' \
        "$out/$tag.eval.json")
  "$bench" "$model" --layer model --warmup 5 --iters "$iters" --threads "$threads" --json > "$out/$tag.bench.json"
  us=$(/usr/bin/python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["layers"][0]["median"])' \
       "$out/$tag.bench.json")
  echo "model $cfg $us $rel"
done
[ $found = 1 ] || { echo "$0: no $dir/edgeattn/<cfg>/model.json" >&2; exit 1; }
