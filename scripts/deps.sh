#!/usr/bin/env bash
# Debian packages edgeattn needs, per package set.
#
#   scripts/deps.sh [SET...]          install what is missing (default set: host)
#   source scripts/deps.sh            then: ea_deps_ensure_set host
#                                           ea_deps_ensure_packages pkg...
#
# As root, missing packages are installed with apt-get (non-interactive).
# Otherwise the exact `sudo apt-get install` line is printed and the call fails.
#
# To support a new target, add a case to ea_deps_set below, e.g.
#   aarch64)  echo g++-aarch64-linux-gnu qemu-user ;;
#   armv7)    echo g++-arm-linux-gnueabihf qemu-user ;;
#   cortex-m) echo gcc-arm-none-eabi libnewlib-arm-none-eabi ;;
# and call `ea_deps_ensure_set NAME` from that target's test stage.

# Package names of a set, space separated.
ea_deps_set() {
  case "$1" in
    host)
      # Toolchain, plus python3 (stdlib only) for the demo's report printing.
      # zipcmp/zipmerge/ziptool: Debian's libzip-dev CMake package config
      # (find_package(libzip)) fails unless these three tools are installed,
      # and libzip-dev does not depend on them.
      echo build-essential cmake g++ python3 pkg-config \
           libgtest-dev libgmock-dev libbenchmark-dev \
           libflatbuffers-dev flatbuffers-compiler \
           nlohmann-json3-dev libzip-dev zipcmp zipmerge ziptool \
           libcli11-dev zlib1g-dev libxnnpack-dev libpthreadpool-dev
      ;;
    *)
      echo "deps.sh: unknown package set '$1'" >&2
      return 2
      ;;
  esac
}

# Prints the packages from the arguments that are not installed. A plain name
# means the native architecture (or Architecture: all), even when foreign
# architectures are enabled; NAME:ARCH checks that architecture.
ea_deps_missing() {
  local pkg native
  native=$(dpkg --print-architecture)
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Package}:${Architecture} ${Status}\n' "$pkg" 2>/dev/null |
        awk -v want="$pkg" -v native="$native" '
          { split($1, p, ":"); ok = ($2 " " $3 " " $4 == "install ok installed") }
          ok && (want ~ /:/ ? $1 == want : (p[2] == native || p[2] == "all")) { found = 1 }
          END { exit !found }'; then
      echo "$pkg"
    fi
  done
}

# apt-get update, retried up to 3 times 15 s apart. Never fails: a mirror
# mid-sync leaves some index stale, which matters only if the install that
# follows cannot find a package (that install reports it). Output goes to the
# log file given (default: the deps log).
ea_apt_update() {
  local log=${1:-${EA_DEPS_LOG:-/tmp/edgeattn-deps.log}} attempt
  for attempt in 1 2 3; do
    if apt-get update >> "$log" 2>&1; then return 0; fi
    echo "deps: apt-get update reported errors (attempt $attempt, see $log)" >&2
    if [[ $attempt -lt 3 ]]; then sleep 15; fi
  done
  return 0
}

# Installs the given packages if any is missing.
ea_deps_ensure_packages() {
  local missing=() log=${EA_DEPS_LOG:-/tmp/edgeattn-deps.log}
  mapfile -t missing < <(ea_deps_missing "$@")
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "deps: all $# packages installed"
    return 0
  fi
  echo "deps: missing Debian packages: ${missing[*]}"
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "deps: not root; install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  : > "$log"
  # Debian mirrors are sometimes mid-sync (an index of unexpected size): the
  # update is retried, and a still partly failed update is not fatal on its
  # own; the install decides, and is itself retried after a fresh update.
  local attempt
  for attempt in 1 2 3; do
    ea_apt_update "$log"
    if apt-get install -y --no-install-recommends "${missing[@]}" >> "$log" 2>&1; then
      break
    fi
    if [[ $attempt -eq 3 ]]; then
      echo "deps: apt-get install failed 3 times; last lines of $log:" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    echo "deps: apt-get install failed (attempt $attempt); retrying in 20 s" >&2
    sleep 20
  done
  mapfile -t missing < <(ea_deps_missing "$@")
  if [[ ${#missing[@]} -ne 0 ]]; then
    echo "deps: still missing after apt-get: ${missing[*]}" >&2
    return 1
  fi
  echo "deps: installed"
}

# Installs the packages of one or more named sets.
ea_deps_ensure_set() {
  local set pkgs=()
  for set in "$@"; do
    # shellcheck disable=SC2207
    pkgs+=($(ea_deps_set "$set")) || return
  done
  ea_deps_ensure_packages "${pkgs[@]}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  if [[ $# -eq 0 ]]; then set -- host; fi
  ea_deps_ensure_set "$@"
fi
