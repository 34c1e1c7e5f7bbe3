#!/usr/bin/env bash
# Installs Chromium (for the ui package's browser test) with apt-get when
# the `chromium` command is missing. Idempotent; prints what it did. Exits
# non-zero when Chromium is not there at the end.
set -u
if command -v chromium >/dev/null 2>&1; then
	echo "chromium: already installed ($(command -v chromium))"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "chromium: missing, and no apt-get to install it" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "chromium: installing with apt-get"
$sudo apt-get update -qq >/dev/null || true
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; then
	echo "chromium: apt-get install failed" >&2
	exit 1
fi
command -v chromium >/dev/null 2>&1 || { echo "chromium: installed, but no chromium command" >&2; exit 1; }
echo "chromium: installed ($(command -v chromium))"
