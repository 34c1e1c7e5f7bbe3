#!/usr/bin/env bash
# Runs every Fuzz target of the module for SECONDS each and prints, per
# target, its executions and whether it found a failure (a failing input is
# saved under the package's testdata/fuzz/TARGET, as go test does).
#
#   scripts/fuzz.sh SECONDS [REGEX [PACKAGE...]]
#
# REGEX narrows the targets by name (default: all); PACKAGE narrows the
# packages (default: ./...). FUZZ_PARALLEL sets the fuzzing processes per
# target (default: go test's, GOMAXPROCS). FUZZ_MINIMIZE is the time (or
# count, e.g. 100x) spent minimizing a new input (default 1x: targets that
# run a live worker in the process see coverage from its background
# goroutines, which would otherwise be minimized for a minute each). It
# exits 1 when a target found a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -eq 0 ]; then
  echo "usage: scripts/fuzz.sh SECONDS [REGEX [PACKAGE...]]: expected SECONDS, a whole number > 0, found '${1:-}'" >&2
  exit 2
fi
secs=$1
regex=${2:-.}
shift $(( $# >= 2 ? 2 : 1 ))
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
par=(-fuzzminimizetime "${FUZZ_MINIMIZE:-1x}")
[ -n "${FUZZ_PARALLEL:-}" ] && par+=(-parallel "$FUZZ_PARALLEL")

failed=0
printf '%-24s %-40s %8s %12s  %s\n' TARGET PACKAGE SECONDS EXECS RESULT
for pkg in $(go list "${pkgs[@]}"); do
  # Only packages with a test file naming a Fuzz target are listed.
  dir=$(go list -f '{{.Dir}}' "$pkg")
  grep -qs '^func Fuzz' "$dir"/*_test.go || continue
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E -- "$regex" || true); do
    log=$(mktemp)
    corpus="$dir/testdata/fuzz/$target"
    before=$(ls "$corpus" 2>/dev/null | sort || true)
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" "${par[@]}" "$pkg" >"$log" 2>&1; then
      result="no failure"
    elif [ "$(ls "$corpus" 2>/dev/null | sort || true)" = "$before" ] && grep -q 'context deadline exceeded' "$log"; then
      # Go's fuzz coordinator may report its own -fuzztime deadline as a
      # failure when a worker is mid-input at the end (go.dev/issue/75804,
      # fixed in Go 1.27): no input was written, nothing was found.
      result="no failure (end-of-time race of go test, no input written)"
    else
      result="FAILED (see below)"
      failed=1
    fi
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
    printf '%-24s %-40s %8s %12s  %s\n' "$target" "${pkg#github.com/sluicehq/sluice/}" "$secs" "${execs:-0}" "$result"
    if [ "${result#no failure}" = "$result" ]; then
      sed 's/^/    /' "$log" | tail -40
    fi
    rm -f "$log"
  done
done
exit $failed
