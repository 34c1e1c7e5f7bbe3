#!/usr/bin/env bash
# Rebuilds ui/dist (the page sluice ui serves) from ui/web: installs dagre
# and esbuild into a temporary directory and bundles app.js with dagre.
# Run by hand after editing ui/web; commit the resulting ui/dist.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="$here/../dist"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$here/app.js" "$tmp/"
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent dagre@0.8.5 esbuild@0.28.2)
mkdir -p "$dist"
(cd "$tmp" && npx esbuild app.js --bundle --minify --format=iife --outfile="$dist/app.js")
cp "$here/index.html" "$here/style.css" "$dist/"
echo "built $dist"
