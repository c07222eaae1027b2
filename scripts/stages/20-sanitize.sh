# shellcheck shell=bash
# Stage "sanitize": the whole host test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (-O1 -g1, build/asan), then the thread
# pool tests (threads_test: the std::thread pool running the layers; Debian's
# pthreadpool is not instrumented) under ThreadSanitizer (build/tsan, models converted by the host
# stage's converter). Any report fails the stage (-fno-sanitize-recover=all
# makes UBSan fatal, ASan and TSan always are). Both trees build at -O1 with
# line tables only (-g1): reports keep file:line stacks, and the compile takes
# about half of -O2 -g's time (the stage was the longest in CI). Sourced by
# scripts/test.sh.

EA_SANITIZE_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                   "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                   "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")

stage_sanitize() {
  header "sanitize: Debian packages"
  ea_deps_ensure_set host
  local dir="$ROOT/build/asan"
  header "sanitize: configure $dir (-O1 -g1, -fsanitize=address,undefined)"
  cmake -S "$ROOT" -B "$dir" "${EA_SANITIZE_FLAGS[@]}" -DEA_BUILD_TESTS=ON \
        -DEA_BUILD_BENCH=OFF -DEA_SANITIZE=address,undefined
  header "sanitize: build (-j$JOBS)"
  cmake --build "$dir" -j"$JOBS"
  header "sanitize: ctest"
  # alloc_test (replaces malloc with glibc's entry points) and the consumer
  # install test (links without the sanitizer runtime) are not built with
  # EA_SANITIZE; both run in the host stage.
  # detect_leaks: the converter and tests allocate; the runtime must not leak either.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    ctest --test-dir "$dir" --output-on-failure --no-tests=error -j"$JOBS"

  local tsan="$ROOT/build/tsan" convert="$ROOT/build/host/converter/edgeattn-convert"
  if [[ ! -x $convert ]]; then
    echo "sanitize: ThreadSanitizer needs the host stage's $convert (scripts/test.sh host first)" >&2
    return 1
  fi
  header "sanitize: configure $tsan (-O1 -g1, -fsanitize=thread, host converter)"
  cmake -S "$ROOT" -B "$tsan" "${EA_SANITIZE_FLAGS[@]}" -DEA_BUILD_TESTS=ON -DEA_BUILD_BENCH=OFF \
        -DEA_BUILD_CONVERTER=OFF -DEA_HOST_CONVERTER="$convert" -DEA_SANITIZE=thread
  header "sanitize: build threads_test (-j$JOBS)"
  cmake --build "$tsan" -j"$JOBS" --target threads_test
  header "sanitize: threads_test under ThreadSanitizer"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    ctest --test-dir "$tsan" --output-on-failure --no-tests=error -j"$JOBS" -L threads
}

EA_STAGES+=(sanitize)
