#!/usr/bin/env python3
"""The bench/chain flowgraph in GNU Radio 3.10: null source -> head(N) ->
16 x (multiply_const_ff, add_const_ff) -> null sink. Prints the samples per
second as its last word."""
import argparse
import time

from gnuradio import blocks, gr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1 << 25, help="samples")
    ap.add_argument("--stages", type=int, default=16)
    args = ap.parse_args()

    tb = gr.top_block("chain")
    src = blocks.null_source(gr.sizeof_float)
    head = blocks.head(gr.sizeof_float, args.n)
    tb.connect(src, head)
    prev = head
    for _ in range(args.stages):
        mul = blocks.multiply_const_ff(1.0001)
        add = blocks.add_const_ff(0.5)
        tb.connect(prev, mul, add)
        prev = add
    tb.connect(prev, blocks.null_sink(gr.sizeof_float))
    start = time.perf_counter()
    tb.run()
    el = time.perf_counter() - start
    print("gnuradio samples/s", args.n / el)


if __name__ == "__main__":
    main()
