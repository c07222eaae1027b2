#!/usr/bin/env bash
# Runs the README's workflow commands as written and checks what the README
# quotes of their output (test e2e_readme_commands, tests/e2e/CMakeLists.txt).
#
#   readme_commands.sh SOURCE_DIR BUILD_DIR WORK_DIR
#
# WORK_DIR stands in for the repository root after scripts/demo.sh: models/
# links to the sources, build/host to BUILD_DIR, out/ is empty but for the
# demo's out/transformer_{int8,f32}.eatn. In README.md:
#  - the sh block after a line `<!-- readme-test: run -->` is run there with
#    bash -e (a failing command fails the test);
#  - the block after `<!-- readme-test: FILE -->` (in README.md or
#    docs/workflow.md) quotes FILE as the commands write it: each of its
#    non-blank lines must be a line of WORK_DIR/FILE;
#  - the greedy-decoding counts of the README's introduction and of
#    docs/workflow.md's table must be what the demo's decode command prints;
#  - every build/host/<dir>/<program> a run block uses must be a target that
#    scripts/demo.sh builds (its DEMO_TARGETS), since the README says the
#    commands run after demo.sh.
set -euo pipefail

SRC=$1 BUILD=$2 WORK=$3
README=$SRC/README.md
errors=0
error() {
  echo "README: $*" >&2
  errors=$((errors + 1))
}

rm -rf "$WORK"
mkdir -p "$WORK/build" "$WORK/out"
ln -s "$SRC/models" "$WORK/models"
ln -s "$BUILD" "$WORK/build/host"

# block N KIND [DOC]: prints the code block that follows the N-th marker of
# KIND (`<!-- readme-test: KIND -->`) in DOC (default: README.md).
block() {
  awk -v want="$1" -v kind="$2" '
    { t = $0; sub(/^ +/, "", t) }
    t == "<!-- readme-test: " kind " -->" { seen++; if (seen == want) armed = 1; next }
    armed && /^ *```/ { if (inside) exit; inside = 1; next }
    inside { sub(/^   /, ""); print }
  ' "${3:-$README}"
}
count() {
  awk -v kind="$1" '{ sub(/^ +/, "") } $0 == "<!-- readme-test: " kind " -->" { n++ } END { print n + 0 }' "${2:-$README}"
}

n_run=$(count run)
if ((n_run == 0)); then
  echo "README: no <!-- readme-test: run --> block" >&2
  exit 1
fi

# What scripts/demo.sh builds (the README's commands run after it).
demo_targets=$(sed -n 's/^DEMO_TARGETS=(\(.*\))$/\1/p' "$SRC/scripts/demo.sh")
[[ -n $demo_targets ]] || error "scripts/demo.sh has no DEMO_TARGETS=(...) line"

# The demo's conversions of the transformer (step 7 benchmarks the int8 one).
for dtype in int8 f32; do
  "$BUILD/converter/edgeattn-convert" convert --weights "$SRC/models/transformer/weights.safetensors" \
    --spec "$SRC/models/transformer/spec.json" --calib "$SRC/models/transformer/calib.npz" --dtype $dtype \
    -o "$WORK/out/transformer_$dtype.eatn" > /dev/null
done

for ((i = 1; i <= n_run; i++)); do
  code=$(block "$i" run)
  [[ -n $code ]] || { error "run block $i is empty"; continue; }
  for program in $(grep -o 'build/host/[A-Za-z0-9_/.-]*' <<< "$code" | sort -u); do
    name=${program##*/}
    [[ " $demo_targets " == *" $name "* ]] ||
      error "run block $i uses $program, which scripts/demo.sh does not build (DEMO_TARGETS: $demo_targets)"
  done
  echo "--- README run block $i:"
  echo "$code"
  echo "--- output:"
  if ! (cd "$WORK" && bash -e -o pipefail -c "$code"); then
    error "run block $i failed (above)"
  fi
done

# Quoted files (README.md and docs/workflow.md): every quoted line must be in
# the file the commands wrote.
for doc in "$README" "$SRC/docs/workflow.md"; do
  while IFS= read -r file; do
    [[ $file == run ]] && continue
    n=$(count "$file" "$doc")
    for ((i = 1; i <= n; i++)); do
      if [[ ! -f $WORK/$file ]]; then
        error "${doc#"$SRC"/} quotes $file, which the run blocks did not write"
        continue
      fi
      while IFS= read -r line; do
        [[ -z ${line// /} ]] && continue
        if ! grep -q -x -F -- "$line" "$WORK/$file"; then
          key=$(awk '{ print $1 " " $2 }' <<< "$line")
          actual=$(grep -F -- "$key " "$WORK/$file" | head -n 1 || true)
          error "${doc#"$SRC"/} quotes '$line' from $file, which says '${actual:-nothing like it}'"
        fi
      done < <(block "$i" "$file" "$doc")
      echo "${doc#"$SRC"/}'s quote of $file checked"
    done
  done < <(sed -n 's/^ *<!-- readme-test: \(.*\) -->$/\1/p' "$doc" | sort -u)
done

# The greedy-decoding figures the README's introduction and workflow.md's
# table quote, against the demo's command (workflow.md, "Greedy decoding").
decode=$BUILD/examples/edgeattn-greedy-decode
if [[ -x $decode ]]; then
  out=$(cd "$WORK" && "$decode" --model out/transformer_int8.eatn --float-model out/transformer_f32.eatn \
          --weights models/transformer/weights.safetensors --data models/transformer/heldout.npz \
          --source 31415 --show 3 --positions 1,4,8,13)
  got() { sed -n "s/^$1 *out\/transformer_$2.eatn: \([0-9]*\) of 1000 reversed exactly.*= PyTorch greedy on \([0-9]*\) of 1000$/\\$3/p" <<< "$out"; }
  int8=$(got int8 int8 1) int8_torch=$(got int8 int8 2) f32=$(got f32 f32 1) f32_torch=$(got f32 f32 2)
  torch=$(sed -n 's/^PyTorch float greedy .*: \([0-9]*\) of 1000 reversed exactly.*/\1/p' <<< "$out")
  intro=$(tr '\n' ' ' < "$README" | grep -o 'int8 reversing [0-9]* of 1000 held-out digit sequences ([^)]*)' || true)
  want="int8 reversing $int8 of 1000 held-out digit sequences (f32 and PyTorch float: $f32)"
  [[ $f32 == "$torch" ]] || want="(f32 $f32 and PyTorch $torch differ: the README's sentence needs rewording)"
  [[ $intro == "$want" ]] || error "says '$intro'; the decoder prints: $want"
  table=$SRC/docs/workflow.md
  for row in "| PyTorch float (\`torch_greedy\` in heldout.npz) | $torch | - |" \
             "| f32 \`.eatn\` | $f32 | $f32_torch |" "| int8 \`.eatn\` | $int8 | $int8_torch "; do
    grep -q -F -- "$row" "$table" || error "docs/workflow.md's greedy table has no row starting '$row' (decoder output)"
  done
  echo "greedy decoding: int8 $int8, f32 $f32, PyTorch $torch of 1000 (quotes checked)"
else
  error "$decode was not built"
fi

if ((errors > 0)); then
  echo "$errors README problem(s)" >&2
  exit 1
fi
echo "README: $n_run run blocks ran, quoted outputs match"
