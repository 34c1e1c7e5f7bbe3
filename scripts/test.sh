#!/usr/bin/env bash
# Runs every test of sluice: formatting, go vet, and the unit, property and
# integration tests with the race detector. This is the README's test command
# and what CI runs on a clean clone.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  echo "scripts/test.sh: the Go toolchain is required (go not found on PATH)" >&2
  exit 2
fi

echo "== OpenCL on the CPU (PoCL)"
if ./scripts/install-pocl.sh; then
  # PoCL is there: the OpenCL tests must run, not skip.
  export SLUICE_REQUIRE_OPENCL=1
elif [ "${SLUICE_ALLOW_NO_OPENCL:-}" = 1 ]; then
  echo "PoCL could not be installed: OpenCL tests will skip (SLUICE_ALLOW_NO_OPENCL=1)" >&2
else
  echo "PoCL could not be installed; set SLUICE_ALLOW_NO_OPENCL=1 to run the other tests anyway" >&2
  exit 1
fi

echo "== Chromium (the ui page's browser test)"
if ./scripts/install-chromium.sh; then export SLUICE_REQUIRE_CHROMIUM=1; fi

echo "== Graphviz (the documented sluice dot --svg commands)"
if command -v dot >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] &&
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz >/dev/null 2>&1; }; }; }; then
  export SLUICE_REQUIRE_GRAPHVIZ=1
else
  echo "Graphviz could not be installed: the documented dot --svg commands will be skipped" >&2
fi

echo "== libjpeg-turbo (the motion example's fast JPEG decoder, loaded at run time)"
if ldconfig -p 2>/dev/null | grep -q 'libturbojpeg\.so\.0' || { command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] &&
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q libturbojpeg0 >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libturbojpeg0 >/dev/null 2>&1; }; }; }; then
  export SLUICE_REQUIRE_TURBOJPEG=1
else
  echo "libturbojpeg could not be installed: the motion example's tests use image/jpeg only" >&2
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== go vet"
# -trimpath, as go test below: vet's results are cached by content, so a
# fresh clone of sources vetted before takes a second (37 s of wall time
# and 72 s of CPU on two cores without it, keyed by the clone's directory).
go vet -trimpath ./...

echo "== go test -race"
# -trimpath: compiled packages are cached by content, not by the clone's
# directory, so a second clone (or a moved one) reuses them. -vet=off: go
# vet ran on every package above. -p: one package more at a time than
# there are cores, since many tests wait on processes, browsers and
# sockets part of the time (on two cores 7 min 55 s instead of 9 min 18 s,
# BENCHMARKS.md). The longest packages are named first: go test starts
# packages in the order given, and a long one started last would run
# alone at the end.
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# GORACE: a program built with the race detector sleeps 1 s when it exits
# (for late race reports) unless told otherwise: every test binary, and
# every race-built process a test starts, paid it. A tenth of it is kept;
# a race found during a test fails that test whatever this says.
export GORACE="${GORACE:-atexit_sleep_ms=100}"
# -ldflags=-w: the test binaries are linked without DWARF, which only
# debuggers read (race reports and panics keep their files and lines):
# linking the 49 of them took 104 s of CPU instead of 135 s on two cores.
go test -p $((cores + 1)) -race -trimpath -ldflags=-w -vet=off -count=1 -timeout 30m \
  ./cli ./cluster ./ui ./bench/predict ./runtime ./examples/motion ./fifo ./calibrate ./examples/vca \
  ./mapping ./examples/stitch ./actors ./...
