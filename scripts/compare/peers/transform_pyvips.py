#!/usr/bin/env python3
"""Peer side of the `resize` comparison: libvips (through pyvips) on an image held in memory.

`resize` is libvips's own default path (it may box-shrink first, then Lanczos3); the pixels are
written to memory so the lazy pipeline really runs.
"""
import json
import sys
import time

import pyvips


def main():
    _, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    image = pyvips.Image.new_from_file(path).copy_memory()
    start = time.perf_counter()
    for _ in range(rounds):
        pixels = image.resize(300 / image.width, vscale=200 / image.height, kernel="lanczos3").write_to_memory()
        assert len(pixels) == 300 * 200 * 4
    elapsed = time.perf_counter() - start
    print(json.dumps({"operations": rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
