#!/usr/bin/env python3
"""Peer side of the `thumbnail` comparison: libvips's thumbnail operation (what vipsthumbnail
runs) through pyvips, in-process so that process start-up is not counted, result in memory."""
import json
import sys
import time

import pyvips


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    data = open(path, "rb").read()
    start = time.perf_counter()
    for _ in range(rounds):
        image = pyvips.Image.thumbnail_buffer(data, 300)
        pixels = image.write_to_memory()
        assert max(image.width, image.height) <= 300 and pixels
    elapsed = time.perf_counter() - start
    print(json.dumps({"operations": rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
