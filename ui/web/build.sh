#!/usr/bin/env bash
# Rebuilds ui/dist (the page sluice ui serves) from ui/web: installs dagre
# (layout), uPlot (charts) and esbuild into a temporary directory and
# bundles the page's modules into app.js and app.css.
# Run by hand after editing ui/web; commit the resulting ui/dist.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="$here/../dist"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$here"/*.js "$tmp/"
(cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent dagre@0.8.5 uplot@1.6.32 esbuild@0.28.2)
mkdir -p "$dist"
rm -f "$dist"/*
(cd "$tmp" && npx esbuild app.js --bundle --minify --format=iife --outfile="$dist/app.js")
cp "$here/index.html" "$here/style.css" "$here/favicon.svg" "$dist/"
echo "built $dist"
