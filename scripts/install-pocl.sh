#!/usr/bin/env bash
# Installs PoCL (a CPU OpenCL implementation) and the OpenCL ICD loader
# (libOpenCL.so.1) when either is missing, so the OpenCL tests of sluice run
# for real. Idempotent and quiet when both are already there. Debian/Ubuntu
# (apt-get); run as root or with sudo available. `apt-get update` only runs
# when the first install attempt fails (stale or empty package lists).
#
#   scripts/install-pocl.sh          # install if needed
#   scripts/install-pocl.sh --check  # exit 0 when present, 1 when not
set -euo pipefail

pkgs=(pocl-opencl-icd ocl-icd-libopencl1)

have_loader() {
  if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 '; then
    return 0
  fi
  local d
  for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    [ -e "$d/libOpenCL.so.1" ] && return 0
  done
  return 1
}

have_pocl() {
  local vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
  [ -d "$vendors" ] || return 1
  local f
  for f in "$vendors"/*.icd; do
    [ -e "$f" ] || continue
    grep -qi pocl "$f" && return 0
    case "$(basename "$f")" in *pocl*) return 0 ;; esac
  done
  return 1
}

if have_loader && have_pocl; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-pocl: missing:$(have_loader || echo ' libOpenCL.so.1')$(have_pocl || echo ' PoCL ICD')" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-pocl: apt-get not found: install an OpenCL ICD loader (libOpenCL.so.1) and PoCL with this system's package manager" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo -n)
  else
    echo "install-pocl: need root (or sudo) to install ${pkgs[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
install() { "${sudo[@]}" apt-get install -y -q "${pkgs[@]}" >"$log" 2>&1; }
echo "install-pocl: installing ${pkgs[*]}" >&2
if ! install; then
  if ! "${sudo[@]}" apt-get update -q >"$log" 2>&1 || ! install; then
    echo "install-pocl: apt-get failed:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
fi

if ! have_loader || ! have_pocl; then
  echo "install-pocl: installed ${pkgs[*]} but libOpenCL.so.1 or the PoCL ICD is still missing" >&2
  exit 1
fi
echo "install-pocl: PoCL and the OpenCL ICD loader are installed" >&2
