# shellcheck shell=bash
# Stage "fuzz": runs the libFuzzer targets of tests/fuzz (clang, ASan + UBSan,
# built in the sanitize stage's build/asan; built there when missing) for
# EA_FUZZ_SECONDS each (default 15) from their seed corpora, and the
# differential target fuzz_paths (every kernel path of this CPU against the
# ref path) for EA_FUZZ_PATHS_SECONDS (default 30): a smoke test in CI (a
# clean clone starts from the seeds; build/asan/corpus/ keeps what a local
# run finds for the next), campaigns are longer (docs/security.md). Any crash, sanitizer report, leak, timeout, OOM
# or path difference fails the stage; the reproducer is left in
# build/asan/findings/<kind>/.
# EA_FUZZ_SKIP_KNOWN_BUGS=ON makes the targets skip inputs of open reported
# bugs (docs/security.md, "Findings"); none is open, so it is OFF.
# Sourced by scripts/test.sh after 20-sanitize.sh (ea_asan_configure).

stage_fuzz() {
  header "fuzz: Debian packages (clang, libFuzzer runtime)"
  ea_asan_configure
  local dir=$EA_ASAN_DIR seconds=${EA_FUZZ_SECONDS:-15}
  header "fuzz: build the fuzzers (-j$JOBS; nothing to do after the sanitize stage)"
  cmake --build "$dir" -j"$JOBS" --target edgeattn_fuzzers
  local target status=0 seeds
  for target in model safetensors npz spec torch_pickle; do
    ea_fuzz_run "$dir" "$target" "$seconds" "$dir/tests/fuzz/seeds/$target" || status=1
  done
  # fuzz_paths: generated seeds (make_paths_seeds), committed regression
  # inputs (tests/fuzz/corpus/paths, copied to seeds/paths) and the model seeds.
  seeds=("$dir/tests/fuzz/paths_seeds" "$dir/tests/fuzz/seeds/model")
  if [[ -d $dir/tests/fuzz/seeds/paths ]]; then seeds+=("$dir/tests/fuzz/seeds/paths"); fi
  ea_fuzz_run "$dir" paths "${EA_FUZZ_PATHS_SECONDS:-30}" "${seeds[@]}" || status=1
  return $status
}

# ea_fuzz_run <build dir> <target> <seconds> <seed dir...>: runs
# tests/fuzz/fuzz_<target>; new inputs go to <build dir>/corpus/<target>
# (kept between runs), seeds are read-only inputs.
ea_fuzz_run() {
  local dir=$1 target=$2 seconds=$3
  shift 3
  local bin="$dir/tests/fuzz/fuzz_$target" corpus="$dir/corpus/$target" findings="$dir/findings/$target"
  local status=0
  mkdir -p "$corpus" "$findings"
  header "fuzz: fuzz_$target for ${seconds}s (corpus $corpus)"
  if ! ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
       UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
       "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
              -max_len=262144 -print_final_stats=1 -artifact_prefix="$findings/" \
              "$corpus" "$@" > "$findings/log.txt" 2>&1; then
    status=1
    echo "fuzz_$target: FAILED (reproducer and log in $findings/)" >&2
    grep -E 'ERROR|FINDING|runtime error|Test unit written' "$findings/log.txt" | head -n 20 >&2
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+.*DONE' "$findings/log.txt" || true
  return $status
}

EA_STAGES+=(fuzz)
