#!/usr/bin/env python3
"""Peer side of serve.py's `formats` part: libvips alone (pyvips from PyPI's pyvips-binary), no
HTTP, doing what an image server does per request: thumbnail_buffer (shrink-on-load where the
format has it) to fit 512x512, then save to SUFFIX (e.g. `.webp[Q=75]`) in memory, ROUNDS times.
Prints {"operations", "seconds", "bytes"} (bytes: the last result's size)."""
import json
import sys
import time

import pyvips


def main():
    path, suffix, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(path, "rb").read()
    output = b""
    start = time.perf_counter()
    for _ in range(rounds):
        image = pyvips.Image.thumbnail_buffer(data, 512, height=512)
        output = image.write_to_buffer(suffix)
        assert max(image.width, image.height) == 512 and output
    print(json.dumps({"operations": rounds, "seconds": time.perf_counter() - start, "bytes": len(output)}))


if __name__ == "__main__":
    main()
