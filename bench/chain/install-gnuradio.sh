#!/bin/sh
# Installs GNU Radio (3.10 on current Debian/Ubuntu) so that
# `go run ./bench/chain -json` also times the GNU Radio flowgraph.
# Not run by CI.
set -e
apt-get update
apt-get install -y gnuradio
/usr/bin/python3 -c "import gnuradio; from gnuradio import gr; print('GNU Radio', gr.version())"
