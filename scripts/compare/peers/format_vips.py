#!/usr/bin/env python3
"""Peer side of serve.py's `formats` part: libvips alone (pyvips from PyPI's pyvips-binary), no
HTTP, doing what an image server does per request: thumbnail_buffer (shrink-on-load where the
format has it) to fit 512x512, then save to SUFFIX (e.g. `.webp[Q=75]`) in memory, again and again
for SECONDS (as long as the server's side is measured, so that both average over the same stretch
of this machine's time). Prints {"operations", "seconds", "bytes"} (bytes: the last result's size)."""
import json
import sys
import time

import pyvips


def main():
    path, suffix, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    data = open(path, "rb").read()
    output = b""
    operations = 0
    start = time.perf_counter()
    while operations == 0 or time.perf_counter() - start < seconds:
        image = pyvips.Image.thumbnail_buffer(data, 512, height=512)
        output = image.write_to_buffer(suffix)
        assert max(image.width, image.height) == 512 and output
        operations += 1
    print(json.dumps({"operations": operations, "seconds": time.perf_counter() - start, "bytes": len(output)}))


if __name__ == "__main__":
    main()
